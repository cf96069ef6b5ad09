import { describe, expect, it } from 'vitest';
import { isPeriod, readReference } from '../../src/csv/reference.js';

describe('readReference: a reference as the journal compares it', () => {
  it.each([
    ['NF 0123', 'NF123'],
    ['nf-123', 'NF123'],
    ['  Nf  123 ', 'NF123'],
    ['000123', '123'],
    ['0', '0'],
    ['PED-2026/0042', 'PED202642'],
    ['Fatura nº 7', 'FATURAN7'],
    ['11/2026', '2026-11'],
    ['11/26', '2026-11'],
    ['nov/26', '2026-11'],
    ['Novembro/2026', '2026-11'],
    ['novembro 2026', '2026-11'],
    ['2026-11', '2026-11'],
    ['2026/1', '2026-01'],
    ['dez.2026', '2026-12'],
    ['13/2026', '132026'],
    ['setor 10', 'SETOR10'],
    ['***', '***'],
    ['', undefined],
    ['   ', undefined],
  ])('%j reads as %j', (cell, reference) => {
    expect(readReference(cell)).toBe(reference);
  });

  it.each([
    ['2026-11', true],
    ['NF123', false],
    ['202611', false],
  ])('%j is a month: %j', (reference, period) => {
    expect(isPeriod(reference)).toBe(period);
  });
});
