import fc from 'fast-check';

/** Strings of `n` digits. */
export const digits = (n: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));

export const notAllSame = (s: string) => !/^(.)\1+$/.test(s);

/** The digit at `at` changed by `shift`: a one-digit typo. */
export const withTypo = (digits: string, at: number, shift: number) =>
  digits.slice(0, at) + ((Number(digits[at]) + shift) % 10) + digits.slice(at + 1);
