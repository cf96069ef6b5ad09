/**
 * Amounts to integer cents, from text, never through floating point. A reais column
 * takes what spreadsheets write (`1234.56`, `1.234,56`, `R$ 1.234,56`, `1234`); a cents
 * column takes whole cents only.
 */
import { SCIENTIFIC_NOTATION } from './documents.js';

export type AmountReading = { ok: true; cents: number } | { ok: false; problem: string };

const fail = (problem: string): AmountReading => ({ ok: false, problem });

function toCents(whole: string, fraction: string, shown: string): AmountReading {
  const cents = BigInt(whole || '0') * 100n + BigInt(fraction.padEnd(2, '0') || '0');
  if (cents === 0n) return fail(`${shown} is zero: a payout must be more than zero`);
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) return fail(`${shown} is too large`);
  return { ok: true, cents: Number(cents) };
}

function commonChecks(text: string): AmountReading | string {
  const shown = text.trim().replace(/\u00a0/g, ' ');
  if (shown === '') return fail('is empty');
  if (SCIENTIFIC_NOTATION.test(shown)) {
    return fail(
      `"${shown}" was turned into scientific notation by the spreadsheet: format the column as text or number with 2 decimals`,
    );
  }
  if (/^\(.*\)$/.test(shown) || /^-|-$/.test(shown.replace(/^R\$\s*/i, ''))) {
    return fail(`${shown} is negative: a payout must be more than zero`);
  }
  return shown;
}

// The shapes nearly every cell has (`1.234,56`, `R$ 1234,56`, `1234.56`), read without
// the general path's regular expressions; at most 12 whole digits keeps cents exact.
const COMMON_REAIS = /^(?:R\$ ?)?(\d{1,3}(?:\.\d{3}){1,3}|\d{1,12}),(\d{2})$|^(\d{1,12})\.(\d{2})$/;

/** Reais, as people and spreadsheets write them. */
export function parseReais(text: string): AmountReading {
  const common = COMMON_REAIS.exec(text.trim());
  if (common) {
    const whole = (common[1] ?? common[3] ?? '').replaceAll('.', '');
    const cents = Number(whole) * 100 + Number(common[2] ?? common[4]);
    if (cents > 0) return { ok: true, cents };
  }
  const checked = commonChecks(text);
  if (typeof checked !== 'string') return checked;
  const shown = checked;
  const bare = shown.replace(/^R\$/i, '').replace(/\s+/g, '');
  if (!/^\d[\d.,]*$/.test(bare) || /[.,]$/.test(bare)) {
    return fail(`"${shown}" is not an amount in reais (write it like 1234,56 or R$ 1.234,56)`);
  }
  const lastDot = bare.lastIndexOf('.');
  const lastComma = bare.lastIndexOf(',');
  let decimal: '.' | ',' | undefined;
  if (lastDot >= 0 && lastComma >= 0) {
    decimal = lastDot > lastComma ? '.' : ',';
  } else if (lastDot >= 0 || lastComma >= 0) {
    const separator = lastDot >= 0 ? '.' : ',';
    const count = bare.split(separator).length - 1;
    const after = bare.length - bare.lastIndexOf(separator) - 1;
    // `0,001` cannot be thousands: it is three decimals, refused below.
    if (count === 1 && after === 3 && !/^0+[.,]/.test(bare)) {
      return fail(
        `${shown} could mean thousands or decimals: write ${bare.replace(separator, '')} for whole reais, or use two decimals (1.234,00)`,
      );
    }
    if (count === 1) decimal = separator;
  }
  const thousands =
    decimal === undefined ? (lastDot >= 0 ? '.' : ',') : decimal === '.' ? ',' : '.';
  const cut = decimal === undefined ? bare.length : bare.lastIndexOf(decimal);
  const wholePart = bare.slice(0, cut);
  const fraction = decimal === undefined ? '' : bare.slice(cut + 1);
  if (fraction.length > 2 || /[.,]/.test(fraction)) {
    return fail(`${shown} has more than two decimal places`);
  }
  const grouped = new RegExp(`^\\d{1,3}(\\${thousands}\\d{3})+$`);
  if (/[.,]/.test(wholePart) && !grouped.test(wholePart)) {
    return fail(`${shown} has its thousands separators in the wrong places`);
  }
  return toCents(wholePart.replace(/[.,]/g, ''), fraction, shown);
}

/** Whole cents, as the interface's `value` (1250 is R$ 12,50). */
export function parseCents(text: string): AmountReading {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed) && Number(trimmed) > 0)
    return { ok: true, cents: Number(trimmed) };
  const checked = commonChecks(text);
  if (typeof checked !== 'string') return checked;
  if (/^\d+$/.test(checked))
    return toCents(checked.slice(0, -2), checked.slice(-2).padStart(2, '0'), checked);
  if (/^\d+[.,]\d+$/.test(checked)) {
    return fail(
      `${checked} is not whole cents: this column holds cents (1250 for R$ 12,50); for reais, name the column "amount" or "valor"`,
    );
  }
  return fail(`"${checked}" is not a whole number of cents (1250 for R$ 12,50)`);
}

/** `R$ 1.234,56`: how amounts are shown to people. */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const reais = Math.trunc(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}R$ ${reais},${String(abs % 100).padStart(2, '0')}`;
}
