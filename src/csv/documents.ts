/**
 * A CPF or CNPJ read from what spreadsheets make of it; its check digits are
 * src/domain/check-digits.ts.
 */
import { isValidCnpj, isValidCpf } from '../domain/check-digits.js';
import type { Said } from '../messages/said.js';
import type { DocumentKind } from '../messages/fields.js';

export type DocumentReading =
  | { ok: true; kind: DocumentKind; value: string; restoredZeros: number }
  | { ok: false; problem: Said };

/** A number a spreadsheet turned into scientific notation: `1,23457E+10`, `5.29982E+10`. */
export const SCIENTIFIC_NOTATION = /^\s*\d+(?:[.,]\d+)?\s*e\s*[+-]?\d+\s*$/i;

/**
 * Reads a CPF or CNPJ written with or without punctuation. Leading zeros a spreadsheet
 * dropped are put back only when the check digits then hold and the reading is not in
 * doubt.
 *
 * `expected` is what the file says the document is (a column headed `CNPJ`, a key type
 * CNPJ): only that lets a bare number of 11 digits or fewer become a CNPJ. Without it,
 * such a number that fails as a CPF is refused, because one CPF typo in about a hundred
 * passes as a CNPJ once zeros are added; and a value written as a CPF (`505.596.314-60`)
 * is a CPF whatever the file says. A number written with its leading `0` lost no zeros, so
 * it is never padded: padded, one CPF typo in about a hundred holds as a CNPJ.
 */
export function readDocument(text: string, expected?: DocumentKind): DocumentReading {
  // A row often gives the same document twice (its CPF and its CPF key): read it once.
  if (text === lastRead.text && expected === lastRead.expected) return lastRead.reading;
  const reading = readDocumentText(text, expected);
  lastRead = { text, expected, reading };
  return reading;
}

let lastRead: {
  text: string | undefined;
  expected: DocumentKind | undefined;
  reading: DocumentReading;
} = { text: undefined, expected: undefined, reading: { ok: false, problem: { code: 'empty' } } };

/** CPF punctuation, or part of it, around 11 digits: `529.982.247-25`, `529982247-25`. */
const WRITTEN_AS_CPF = /^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/;

function readDocumentText(text: string, expected: DocumentKind | undefined): DocumentReading {
  const trimmed = text.trim();
  // The common case, a full CPF with or without its punctuation, without the general path;
  // but 11 bare digits in a CNPJ column may be a CNPJ that lost its zeros: the general path.
  if (WRITTEN_AS_CPF.test(trimmed) && !(expected === 'CNPJ' && /^[1-9]\d{10}$/.test(trimmed))) {
    const value =
      trimmed.length === 11
        ? trimmed
        : trimmed.length === 14 // 123.456.789-09, cut at its marks (a regex replace cost more)
          ? trimmed.slice(0, 3) + trimmed.slice(4, 7) + trimmed.slice(8, 11) + trimmed.slice(12)
          : trimmed.replace(/[.-]/g, '');
    if (isValidCpf(value)) return { ok: true, kind: 'CPF', value, restoredZeros: 0 };
    if (value !== trimmed) return invalidCpf(trimmed, 'checkPerson');
  }
  if (trimmed === '') return { ok: false, problem: { code: 'empty' } };
  if (SCIENTIFIC_NOTATION.test(trimmed)) {
    return { ok: false, problem: { code: 'documentScientific', text: trimmed } };
  }
  if (!/^[0-9A-Za-z.\-/\s]+$/.test(trimmed)) {
    return { ok: false, problem: { code: 'documentCharacters', text: trimmed } };
  }
  const value = trimmed.replace(/[.\-/\s]/g, '').toUpperCase();
  if (value.length === 14) {
    return isValidCnpj(value)
      ? { ok: true, kind: 'CNPJ', value, restoredZeros: 0 }
      : { ok: false, problem: { code: 'cnpjCheckDigits', text: trimmed } };
  }
  // Only a bare number lost zeros: a spreadsheet keeps the text it shows.
  if (/^[1-9]\d*$/.test(trimmed) && value.length < 14) return readBareNumber(trimmed, expected);
  if (value.length === 11 && /^\d+$/.test(value)) return readCpfDigits(trimmed, value);
  return { ok: false, problem: { code: 'notCpfOrCnpj', text: trimmed } };
}

/** A number of 13 digits or fewer (an 11-digit valid CPF was read before). */
function readBareNumber(digits: string, expected: DocumentKind | undefined): DocumentReading {
  const asCpf = digits.length <= 11 && isValidCpf(digits.padStart(11, '0'));
  const asCnpj = isValidCnpj(digits.padStart(14, '0'));
  const restoredCnpj = digits.padStart(14, '0');
  const restored = (kind: DocumentKind): DocumentReading => {
    const length = kind === 'CPF' ? 11 : 14;
    const value = digits.padStart(length, '0');
    return { ok: true, kind, value, restoredZeros: length - digits.length };
  };
  // 12 or 13 digits cannot be a CPF: the check digits alone decide.
  if (digits.length > 11) {
    return asCnpj
      ? restored('CNPJ')
      : {
          ok: false,
          problem: { code: 'cnpjEvenRestored', digits, restored: restoredCnpj, keepZeros: false },
        };
  }
  if (expected === 'CNPJ' && asCnpj) return restored('CNPJ');
  if (asCpf && (expected === 'CPF' || !asCnpj)) return restored('CPF');
  if (asCpf) {
    return { ok: false, problem: { code: 'cpfOrCnpjWithoutZeros', digits } };
  }
  if (expected === 'CNPJ') {
    return {
      ok: false,
      problem: { code: 'cnpjEvenRestored', digits, restored: restoredCnpj, keepZeros: true },
    };
  }
  const maybeCnpj = asCnpj && expected === undefined;
  if (digits.length === 11) return invalidCpf(digits, maybeCnpj ? 'maybeCnpj' : undefined);
  if (!maybeCnpj && expected === undefined) {
    return { ok: false, problem: { code: 'notCpfOrCnpj', text: digits } };
  }
  return {
    ok: false,
    problem: { code: 'cpfRestored', digits, restored: digits.padStart(11, '0'), maybeCnpj },
  };
}

/** A CPF's 11 digits written some other way: grouped by spaces, or with a CNPJ's slash. */
function readCpfDigits(text: string, digits: string): DocumentReading {
  if (!isValidCpf(digits)) return invalidCpf(text);
  if (text.includes('/')) {
    const written = `${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)}-${digits.slice(9)}`;
    return { ok: false, problem: { code: 'cpfWithSlash', text, written } };
  }
  return { ok: true, kind: 'CPF', value: digits, restoredZeros: 0 };
}

function invalidCpf(text: string, hint?: 'checkPerson' | 'maybeCnpj'): DocumentReading {
  return {
    ok: false,
    problem:
      hint === undefined
        ? { code: 'cpfCheckDigits', text }
        : { code: 'cpfCheckDigits', text, hint },
  };
}
