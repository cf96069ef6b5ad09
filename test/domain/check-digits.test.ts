import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidCnpj, isValidCpf, withCheckDigits } from '../../src/domain/check-digits.js';
import { digits, notAllSame, withTypo } from '../support/documents.js';

const alnum = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''));

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
          const changed = withTypo(cpf, at, shift);
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
