import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readDocument } from '../../src/csv/documents.js';
import { isValidCnpj, isValidCpf, withCheckDigits } from '../../src/domain/check-digits.js';
import { digits, notAllSame, withTypo } from '../support/documents.js';
import { inEnglish } from '../support/english.js';

describe('readDocument', () => {
  it.each([
    ['529.982.247-25', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    [' 52998224725 ', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    ['11.222.333/0001-81', { ok: true, kind: 'CNPJ', value: '11222333000181', restoredZeros: 0 }],
    ['12.abc.345/01de-35', { ok: true, kind: 'CNPJ', value: '12ABC34501DE35', restoredZeros: 0 }],
    // Lost leading zeros, restored because the check digits then hold.
    ['1234567890', { ok: true, kind: 'CPF', value: '01234567890', restoredZeros: 1 }],
    // 12 or 13 digits can only be a CNPJ that lost its zeros.
    ['360305000104', { ok: true, kind: 'CNPJ', value: '00360305000104', restoredZeros: 2 }],
    // A CPF's 11 digits in groups split by spaces, as a CNPJ's 14 may be.
    ['529 982 247 25', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    ['656 393 827 24', { ok: true, kind: 'CPF', value: '65639382724', restoredZeros: 0 }],
    ['529 982 247-25', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
  ])('%j -> %j', (text, expected) => {
    expect(inEnglish(readDocument(text))).toEqual(expected);
  });

  it.each([
    ['', /is empty/],
    ['529.982.247-26', /not a valid CPF \(the check digits do not match\)/],
    ['11.222.333/0001-82', /not a valid CNPJ/],
    ['1234567891', /not a CPF \(11 digits\) or a CNPJ/],
    // Written as a CPF, it is a CPF: a typo is not turned into the CNPJ 00050559631460.
    ['505.596.314-60', /^505\.596\.314-60 is not a valid CPF \(the check digits do not match\)/],
    ['505596314-60', /is not a valid CPF/],
    // Bare, 11 digits or fewer, valid only as a CNPJ once zeros are added: the column or the
    // key type must say CNPJ, or it is most likely a CPF typo.
    ['50559631460', /^50559631460 is not a valid CPF .*if it is a CNPJ, write all 14 digits/],
    ['19100010041', /is not a valid CPF/],
    ['1234000153', /not a valid CPF with its leading zeros.*if it is a CNPJ, write all 14 digits/],
    ['5,29982E+10', /scientific notation.*format the column as text/],
    ['5.29982e10', /scientific notation/],
    ['=1+1', /not a CPF or CNPJ/],
    // Valid both as a CPF and as a CNPJ once the zeros are back: not guessed.
    ['123456797', /could be a CPF or a CNPJ/],
    // A CNPJ's slash among a valid CPF's digits: said how to write it, not a false typo.
    [
      '656.393.827/24',
      /^656\.393\.827\/24 has the 11 digits of a valid CPF, with a slash a CPF does not have: write it 656\.393\.827-24$/,
    ],
    ['656.393.827/25', /is not a valid CPF \(the check digits do not match\)/],
    ['529 982 247 26', /is not a valid CPF \(the check digits do not match\)/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = inEnglish(readDocument(text));
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('restores lost zeros of any valid CPF', () => {
    fc.assert(
      fc.property(digits(9).filter(notAllSame), (base) => {
        const cpf = withCheckDigits(base);
        const reading = inEnglish(readDocument(String(Number(cpf))));
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

describe('readDocument, where the column or the key type says which document it is', () => {
  it.each([
    ['50559631460', 'CNPJ', { ok: true, kind: 'CNPJ', value: '00050559631460', restoredZeros: 3 }],
    ['19100010041', 'CNPJ', { ok: true, kind: 'CNPJ', value: '00019100010041', restoredZeros: 3 }],
    ['1234000153', 'CNPJ', { ok: true, kind: 'CNPJ', value: '00001234000153', restoredZeros: 4 }],
    // Valid both ways once the zeros are back: the column decides.
    ['123456797', 'CNPJ', { ok: true, kind: 'CNPJ', value: '00000123456797', restoredZeros: 5 }],
    ['123456797', 'CPF', { ok: true, kind: 'CPF', value: '00123456797', restoredZeros: 2 }],
    // Full-length documents are what they are, whatever the column says.
    ['01234567890', 'CNPJ', { ok: true, kind: 'CPF', value: '01234567890', restoredZeros: 0 }],
    ['529 982 247 25', 'CNPJ', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    ['529.982.247-25', 'CNPJ', { ok: true, kind: 'CPF', value: '52998224725', restoredZeros: 0 }],
    [
      '11222333000181',
      'CPF',
      { ok: true, kind: 'CNPJ', value: '11222333000181', restoredZeros: 0 },
    ],
  ] as const)('%j as a %s -> %j', (text, expected, reading) => {
    expect(inEnglish(readDocument(text, expected))).toEqual(reading);
  });

  it.each([
    // Punctuation says CPF louder than any column.
    ['505.596.314-60', 'CNPJ', /is not a valid CPF/],
    ['50559631460', 'CPF', /is not a valid CPF/],
    ['1234000153', 'CPF', /not a valid CPF with its leading zeros/],
    // Written with its leading zero, it did not lose zeros to a spreadsheet: never padded.
    ['01234567891', 'CNPJ', /^01234567891 is not a valid CPF \(the check digits do not match\)$/],
    ['0123456789', 'CNPJ', /is not a CPF \(11 digits\) or a CNPJ/],
    ['0360305000104', 'CNPJ', /is not a CPF \(11 digits\) or a CNPJ/],
  ] as const)('%j as a %s is refused: %s', (text, expected, problem) => {
    const reading = inEnglish(readDocument(text, expected));
    expect(reading).toEqual({ ok: false, problem: expect.stringMatching(problem) });
  });

  // Found by the property below: 11 digits left of a CNPJ that are a valid CPF too.
  it('takes 11 bare digits in a CNPJ column as the CNPJ that lost its zeros, though a valid CPF', () => {
    expect(inEnglish(readDocument('43600687000', 'CNPJ'))).toEqual({
      ok: true,
      kind: 'CNPJ',
      value: '00043600687000',
      restoredZeros: 3,
    });
    // Without a column that says which, 11 digits that hold as a CPF are the CPF.
    expect(inEnglish(readDocument('43600687000'))).toMatchObject({ ok: true, kind: 'CPF' });
    expect(inEnglish(readDocument('43600687000', 'CPF'))).toMatchObject({ ok: true, kind: 'CPF' });
  });

  it('restores the lost zeros of any CNPJ in a CNPJ column', () => {
    fc.assert(
      fc.property(digits(12).filter(notAllSame), fc.integer({ min: 1, max: 8 }), (base, zeros) => {
        const cnpj = withCheckDigits('0'.repeat(zeros) + base.slice(zeros));
        fc.pre(isValidCnpj(cnpj) && !/^0+$/.test(cnpj));
        const bare = cnpj.replace(/^0+/, '');
        expect(inEnglish(readDocument(bare, 'CNPJ'))).toEqual({
          ok: true,
          kind: 'CNPJ',
          value: cnpj,
          restoredZeros: 14 - bare.length,
        });
      }),
    );
  });
});

describe('a CPF with a one-digit typo is never accepted as another document', () => {
  const writings = (cpf: string) => [
    cpf,
    `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`,
    cpf.replace(/^0+/, ''), // what a spreadsheet shows of it
  ];

  it('whatever the position and digit, in every writing, with or without a column that says CNPJ', () => {
    fc.assert(
      fc.property(
        digits(9).filter(notAllSame),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(undefined, 'CPF' as const),
        (base, at, shift, expected) => {
          const cpf = withCheckDigits(base);
          const typo = withTypo(cpf, at, shift);
          for (const text of writings(typo)) {
            const reading = inEnglish(readDocument(text, expected));
            // Check digits cannot see every typo (remainders 0 and 1 share a digit): such a
            // typo is itself a valid CPF, and is read as that CPF, never as a CNPJ.
            if (reading.ok) expect(reading).toMatchObject({ kind: 'CPF', value: typo });
            if (reading.ok) expect(isValidCpf(typo)).toBe(true);
          }
          // Written with CPF punctuation, not even a CNPJ column makes it a CNPJ.
          const punctuated = inEnglish(readDocument(writings(typo)[1] ?? '', 'CNPJ'));
          if (punctuated.ok) expect(punctuated).toMatchObject({ kind: 'CPF', value: typo });
        },
      ),
      { numRuns: 5000 },
    );
  });

  // A CPF that starts with 0, with a typo elsewhere, still shows its zero: no spreadsheet
  // dropped it, so even a column headed CNPJ does not pad it into a CNPJ that happens to hold.
  it('never pads a typo of a CPF written with its leading 0 into a CNPJ', () => {
    fc.assert(
      fc.property(
        digits(8).filter(notAllSame),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(undefined, 'CPF' as const, 'CNPJ' as const),
        (rest, at, shift, expected) => {
          const cpf = withCheckDigits(`0${rest}`);
          const typo = withTypo(cpf, at, shift);
          for (const text of writings(typo).slice(0, 2)) {
            const reading = inEnglish(readDocument(text, expected));
            if (reading.ok)
              expect(reading).toEqual({ ok: true, kind: 'CPF', value: typo, restoredZeros: 0 });
          }
        },
      ),
      { numRuns: 5000 },
    );
  });
});
