import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidCnpj, isValidCpf, readDocument, withCheckDigits } from '../../src/csv/documents.js';

const digits = (n: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
const alnum = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''));
const notAllSame = (s: string) => !/^(.)\1+$/.test(s);

describe('CPF and CNPJ check digits', () => {
  it.each([
    ['52998224725', true],
    ['11144477735', true],
    ['52998224726', false],
    ['11111111111', false],
    ['5299822472', false],
  ])('CPF %s valid: %s', (value, valid) => {
    expect(isValidCpf(value)).toBe(valid);
  });

  it.each([
    ['11222333000181', true],
    ['11222333000182', false],
    ['00000000000000', false],
    // Alphanumeric CNPJ, as published by the Receita Federal.
    ['12ABC34501DE35', true],
    ['12ABC34501DE36', false],
  ])('CNPJ %s valid: %s', (value, valid) => {
    expect(isValidCnpj(value)).toBe(valid);
  });

  // Not "any one digit": CPF maps remainders 0 and 1 to the same check digit, so some
  // changes to the body go unseen (fast-check found 291722446 -> 191722446). A changed
  // check digit is always seen.
  it('accepts every generated CPF, and rejects it with a check digit changed', () => {
    fc.assert(
      fc.property(
        digits(9).filter(notAllSame),
        fc.integer({ min: 9, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        (base, at, shift) => {
          const cpf = withCheckDigits(base);
          expect(isValidCpf(cpf)).toBe(true);
          const changed = cpf.slice(0, at) + ((Number(cpf[at]) + shift) % 10) + cpf.slice(at + 1);
          expect(isValidCpf(changed)).toBe(false);
        },
      ),
    );
  });

  it('accepts every generated CNPJ, numeric or alphanumeric, and rejects a changed check digit', () => {
    fc.assert(
      fc.property(
        fc
          .array(alnum, { minLength: 12, maxLength: 12 })
          .map((a) => a.join(''))
          .filter(notAllSame),
        fc.integer({ min: 1, max: 9 }),
        (base, shift) => {
          const cnpj = withCheckDigits(base);
          expect(isValidCnpj(cnpj)).toBe(true);
          const changed = cnpj.slice(0, 13) + ((Number(cnpj[13]) + shift) % 10);
          expect(isValidCnpj(changed)).toBe(false);
        },
      ),
    );
  });
});

describe('readDocument', () => {
  it.each([
    ['529.982.247-25', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    [' 52998224725 ', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    ['11.222.333/0001-81', { ok: true, kind: 'CNPJ', value: '11222333000181', restoredZeros: 0 }],
    ['12.abc.345/01de-35', { ok: true, kind: 'CNPJ', value: '12ABC34501DE35', restoredZeros: 0 }],
    // Lost leading zeros, restored because the check digits then hold.
    ['1234567890', { ok: true, kind: 'CPF', value: '01234567890', restoredZeros: 1 }],
    ['1234000153', { ok: true, kind: 'CNPJ', value: '00001234000153', restoredZeros: 4 }],
    ['19100010041', { ok: true, kind: 'CNPJ', value: '00019100010041', restoredZeros: 3 }],
  ])('%j -> %j', (text, expected) => {
    expect(readDocument(text)).toEqual(expected);
  });

  it.each([
    ['', /is empty/],
    ['529.982.247-26', /not a valid CPF \(the check digits do not match\)/],
    ['11.222.333/0001-82', /not a valid CNPJ/],
    ['1234567891', /not a CPF \(11 digits\) or a CNPJ/],
    ['5,29982E+10', /scientific notation.*format the column as text/],
    ['5.29982e10', /scientific notation/],
    ['=1+1', /not a CPF or CNPJ/],
    // Valid both as a CPF and as a CNPJ once the zeros are back: not guessed.
    ['123456797', /could be a CPF or a CNPJ/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = readDocument(text);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('restores lost zeros of any valid CPF', () => {
    fc.assert(
      fc.property(digits(9).filter(notAllSame), (base) => {
        const cpf = withCheckDigits(base);
        const reading = readDocument(String(Number(cpf)));
        if (cpf.startsWith('0') && isValidCnpj(cpf.padStart(14, '0'))) {
          expect(reading).toMatchObject({
            ok: false,
            problem: expect.stringMatching(/could be a CPF or a CNPJ/),
          });
        } else if (cpf.startsWith('0')) {
          expect(reading).toMatchObject({ ok: true, kind: 'CPF', value: cpf });
        } else {
          expect(reading).toEqual({ ok: true, kind: 'CPF', value: cpf, restoredZeros: 0 });
        }
      }),
    );
  });
});
