import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCents, parseReais } from '../../src/csv/amount.js';
import { formatCents } from '../../src/csv/amount.js';

describe('parseReais', () => {
  it.each([
    ['1234.56', 123456],
    ['1234,56', 123456],
    ['1.234,56', 123456],
    ['1,234.56', 123456],
    ['R$ 1.234,56', 123456],
    ['R$1.234,56', 123456],
    ['r$ 12,5', 1250],
    ['1234', 123400],
    ['1.234.567', 123456700],
    ['1.234.567,89', 123456789],
    ['0,01', 1],
    [' 12.30 ', 1230],
    ['R$\u00a01.000,00', 100000],
  ])('%j -> %i cents', (text, cents) => {
    expect(parseReais(text)).toEqual({ ok: true, cents });
  });

  it.each([
    ['', /is empty/],
    ['0,00', /zero/],
    ['-12,00', /negative/],
    ['(12,00)', /negative/],
    ['R$ -5', /negative/],
    ['1.234', /could mean thousands or decimals/],
    ['12,345', /could mean thousands or decimals/],
    ['1,2345', /more than two decimal places/],
    ['1.234,567', /more than two decimal places/],
    ['R$ 0,001', /more than two decimal places/],
    ['12.34.56', /thousands separators in the wrong places/],
    ['1,23457E+10', /scientific notation/],
    ['12 reais', /not an amount in reais/],
    ['12,', /not an amount/],
    ['abc', /not an amount/],
    ['99999999999999999999', /too large/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = parseReais(text);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('reads back every amount in each way it is written', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000_000 }), (cents) => {
        const reais = Math.trunc(cents / 100);
        const fraction = String(cents % 100).padStart(2, '0');
        expect(parseReais(`${reais}.${fraction}`)).toEqual({ ok: true, cents });
        expect(parseReais(`${reais},${fraction}`)).toEqual({ ok: true, cents });
        expect(parseReais(formatCents(cents))).toEqual({ ok: true, cents });
        expect(parseReais(formatCents(cents).replace('R$ ', ''))).toEqual({ ok: true, cents });
        if (cents % 100 === 0) expect(parseReais(String(reais))).toEqual({ ok: true, cents });
      }),
    );
  });
});

describe('parseReais, large amounts and less common shapes (the general path)', () => {
  it('reads back amounts beyond the common shapes: US grouping, 13+ digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 90_000_000_000_000_000 / 100 }), (cents) => {
        const whole = Math.trunc(cents / 100);
        const fraction = String(cents % 100).padStart(2, '0');
        const us = `${whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
        expect(parseReais(us)).toEqual({ ok: true, cents });
        expect(parseReais(formatCents(cents))).toEqual({ ok: true, cents });
        expect(parseReais(`${whole},${fraction}`)).toEqual({ ok: true, cents });
      }),
    );
  });
});

describe('parseCents', () => {
  it.each([
    ['1250', 1250],
    ['5', 5],
    [' 100 ', 100],
  ])('%j -> %i', (text, cents) => {
    expect(parseCents(text)).toEqual({ ok: true, cents });
  });

  it.each([
    ['12.50', /not whole cents: this column holds cents.*name the column "amount" or "valor"/],
    ['12,50', /not whole cents/],
    ['0', /zero/],
    ['-100', /negative/],
    ['1,25E+03', /scientific notation/],
    ['R$ 12', /not a whole number of cents/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = parseCents(text);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('reads back every whole number of cents', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (cents) => {
        expect(parseCents(String(cents))).toEqual({ ok: true, cents });
      }),
    );
  });
});
