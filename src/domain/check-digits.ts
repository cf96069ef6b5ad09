/**
 * The check digits of a CPF (11 digits) and of a CNPJ (14 characters: 12 letters or
 * digits, then 2 check digits, the alphanumeric form in use since July 2026): pure, so
 * that reading a file and masking a log line tell a document alike.
 */

/** Mod-11 check digit over the first `weights.length` characters, each worth its code - 48. */
function checkDigit(text: string, weights: readonly number[], extra = -1): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) {
    const value = i < text.length ? text.charCodeAt(i) - 48 : extra;
    sum += value * (weights[i] ?? 0);
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

const CPF_WEIGHTS_1 = [10, 9, 8, 7, 6, 5, 4, 3, 2];
const CPF_WEIGHTS_2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2];

export function isValidCpf(digits: string): boolean {
  if (!/^\d{11}$/.test(digits) || /^(\d)\1{10}$/.test(digits)) return false;
  return (
    digits.charCodeAt(9) - 48 === checkDigit(digits, CPF_WEIGHTS_1) &&
    digits.charCodeAt(10) - 48 === checkDigit(digits, CPF_WEIGHTS_2)
  );
}

const CNPJ_WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_WEIGHTS_2 = [6, ...CNPJ_WEIGHTS_1];

/** Numeric and alphanumeric CNPJ: each character counts as its code minus 48 ('0'). */
export function isValidCnpj(value: string): boolean {
  if (!/^[0-9A-Z]{12}\d{2}$/.test(value) || /^(\d)\1{13}$/.test(value)) return false;
  return (
    value.charCodeAt(12) - 48 === checkDigit(value, CNPJ_WEIGHTS_1) &&
    value.charCodeAt(13) - 48 === checkDigit(value, CNPJ_WEIGHTS_2)
  );
}

/** Check digits for the first 9 (CPF) or 12 (CNPJ) characters: used by tests and samples. */
export function withCheckDigits(base: string): string {
  const cpf = base.length === 9;
  const first = checkDigit(base, cpf ? CPF_WEIGHTS_1 : CNPJ_WEIGHTS_1);
  return `${base}${first}${checkDigit(base, cpf ? CPF_WEIGHTS_2 : CNPJ_WEIGHTS_2, first)}`;
}
