/**
 * A payment's reference (an invoice, an order, a competência) as the journal compares it
 * (docs/who-is-paid.md, "A reference tells payments apart"): `NF 0123`, `nf 123` and
 * `NF-123` are one invoice; `11/2026`, `nov/26` and `2026-11` one competência.
 */
import { foldText } from './fold.js';

/** Each month's names, Portuguese and English, folded: its abbreviation first. */
const MONTH_NAMES: readonly (readonly string[])[] = [
  ['jan', 'janeiro', 'january'],
  ['fev', 'feb', 'fevereiro', 'february'],
  ['mar', 'marco', 'march'],
  ['abr', 'apr', 'abril', 'april'],
  ['mai', 'may', 'maio'],
  ['jun', 'junho', 'june'],
  ['jul', 'julho', 'july'],
  ['ago', 'aug', 'agosto', 'august'],
  ['set', 'sep', 'setembro', 'september'],
  ['out', 'oct', 'outubro', 'october'],
  ['nov', 'novembro', 'november'],
  ['dez', 'dec', 'dezembro', 'december'],
];
const SEPARATOR = '[/.\\- ]';
const MONTH_YEAR = new RegExp(`^(\\d{1,2})${SEPARATOR}(\\d{2}|\\d{4})$`);
const YEAR_MONTH = new RegExp(`^(\\d{4})${SEPARATOR}(\\d{1,2})$`);
const NAMED_MONTH = new RegExp(`^([a-z]{3,9})${SEPARATOR}?(\\d{2}|\\d{4})$`);
/** A competência as the journal keeps it. */
const PERIOD = /^\d{4}-\d{2}$/;

/**
 * The reference a cell gives, as compared: a month as `2026-11`; anything else in capitals
 * without accents, punctuation, spaces or leading zeros of its numbers. Undefined for an
 * empty cell (the row is weighed by duplicateWindow).
 */
export function readReference(cell: string): string | undefined {
  const folded = foldText(cell);
  if (folded === '') return undefined;
  const month = periodOf(folded);
  if (month !== undefined) return month;
  const plain = folded
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .map((word) => (/^\d+$/.test(word) ? word.replace(/^0+(?=\d)/, '') : word))
    .join('')
    .toUpperCase();
  return plain === '' ? folded : plain;
}

/**
 * A month names a period, not a payment: salary, férias and 13º share one competência, so
 * a reference that is a month tells payments apart only with their amount.
 */
export function isPeriod(reference: string): boolean {
  return PERIOD.test(reference);
}

function periodOf(folded: string): string | undefined {
  let year: number;
  let month: number;
  const monthYear = MONTH_YEAR.exec(folded);
  const yearMonth = YEAR_MONTH.exec(folded);
  const named = NAMED_MONTH.exec(folded);
  if (monthYear) [month, year] = [Number(monthYear[1]), Number(monthYear[2])];
  else if (yearMonth) [year, month] = [Number(yearMonth[1]), Number(yearMonth[2])];
  else if (named) {
    const name = named[1] ?? '';
    const index = MONTH_NAMES.findIndex((names) => names.includes(name));
    if (index < 0) return undefined;
    [month, year] = [index + 1, Number(named[2])];
  } else return undefined;
  if (month < 1 || month > 12) return undefined;
  if (year < 100) year += 2000;
  return `${year}-${String(month).padStart(2, '0')}`;
}
