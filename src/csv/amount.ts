/**
 * Amounts to integer cents, from text, never through floating point. A reais column
 * takes what spreadsheets write (`1234.56`, `1.234,56`, `R$ 1.234,56`, `1 234,56`,
 * `1234`); a cents column takes whole cents only.
 *
 * Every separator is read strictly, because a separator dropped in the wrong place
 * makes another number (`9 99` is not R$ 999,00): a thousands separator (`.`, `,` or a
 * space: normal, non-breaking or narrow) stands only between groups of exactly three
 * digits, one kind per amount; the decimal mark (`,` or `.`, the other one) comes once,
 * last, before one or two digits. Anything else is refused with what to write instead.
 */
import type { Said } from '../messages/said.js';
import { SCIENTIFIC_NOTATION } from './documents.js';

export type AmountReading = { ok: true; cents: number } | { ok: false; problem: Said };

const fail = (problem: Said): AmountReading => ({ ok: false, problem });

/** The spaces a spreadsheet puts in numbers: normal, non-breaking (U+00A0), narrow (U+202F). */
const SPACE = /[ \u00a0\u202f]/;
const isSpace = (character: string) => SPACE.test(character);

function toCents(whole: string, fraction: string, shown: string): AmountReading {
  const cents = BigInt(whole || '0') * 100n + BigInt(fraction.padEnd(2, '0') || '0');
  if (cents === 0n) return fail({ code: 'amountZero', shown });
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) return fail({ code: 'amountTooLarge', shown });
  return { ok: true, cents: Number(cents) };
}

/** The cell as shown in messages: trimmed, every kind of space shown as a plain one. */
function show(text: string): string {
  return text.trim().replace(/[\u00a0\u202f]/g, ' ');
}

function scientific(shown: string): AmountReading {
  return fail({ code: 'amountScientific', shown });
}

/**
 * The shapes nearly every cell has, read by a look at each character without the general
 * path's scanning, which cost validate a share of its time (docs/benchmarks.md):
 * `1.234,56`, `1234,56` and `1234.56`, after `R$`, `R$ ` or nothing; at most 12 whole
 * digits, so cents stay exact. The cents, or undefined for the general path.
 */
function commonReais(text: string): number | undefined {
  const end = text.length;
  let at = 0;
  // R$
  if (text.charCodeAt(0) === 82 && text.charCodeAt(1) === 36)
    at = text.charCodeAt(2) === 32 ? 3 : 2;
  let whole = 0;
  const first = at;
  while (at < end && isDigit(text.charCodeAt(at))) whole = whole * 10 + text.charCodeAt(at++) - 48;
  const firstDigits = at - first;
  if (firstDigits === 0) return undefined;
  // `1234.56`: a point before the last two digits.
  if (firstDigits <= 12 && at === end - 3 && text.charCodeAt(at) === 46) {
    return twoDigits(text, at + 1, whole);
  }
  let groups = 0;
  // `.234`, exactly three digits, up to three times after one to three digits.
  while (text.charCodeAt(at) === 46 && groups < 3 && firstDigits <= 3) {
    for (let digit = 1; digit <= 3; digit++) {
      const code = text.charCodeAt(at + digit);
      if (!isDigit(code)) return undefined;
      whole = whole * 10 + code - 48;
    }
    at += 4;
    groups++;
  }
  if (groups === 0 && firstDigits > 12) return undefined;
  if (at !== end - 3 || text.charCodeAt(at) !== 44) return undefined;
  return twoDigits(text, at + 1, whole);
}

/** The cents of `whole` reais and the two digits at `at`, when both are digits. */
function twoDigits(text: string, at: number, whole: number): number | undefined {
  const tens = text.charCodeAt(at);
  const units = text.charCodeAt(at + 1);
  if (!isDigit(tens) || !isDigit(units)) return undefined;
  return whole * 100 + (tens - 48) * 10 + (units - 48);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

const CURRENCY_PREFIX = /^R\$[ \u00a0\u202f]*/i;
// R$ is the only currency paid; a dollar or euro amount is not read as reais.
const OTHER_CURRENCY = /(?<!R)\$|€|£|¥|\b(?:USD|EUR)\b/i;

/** Reais, as people and spreadsheets write them. */
export function parseReais(text: string): AmountReading {
  const common = commonReais(text.trim());
  if (common !== undefined && common > 0) return { ok: true, cents: common };
  const shown = show(text);
  if (shown === '') return fail({ code: 'empty' });
  if (SCIENTIFIC_NOTATION.test(shown)) return scientific(shown);

  // Accounting writes a negative amount with a sign on either side or in parentheses,
  // before or after the R$: all of them are refused as negative, never read as positive.
  const negative = unwrapNegative(text.trim());
  if (negative) {
    const magnitude = readMagnitude(negative.body, shown);
    if (!magnitude.ok) return magnitude;
    return fail({
      code: 'amountNegative',
      shown,
      cents: magnitude.cents,
      parentheses: negative.parentheses,
    });
  }
  return readMagnitude(text.trim().replace(CURRENCY_PREFIX, ''), shown);
}

/** The amount inside a negative's sign or parentheses (and its R$), or undefined when there is none. */
function unwrapNegative(text: string): { body: string; parentheses: boolean } | undefined {
  let body = text.replace(CURRENCY_PREFIX, '');
  let parentheses = false;
  let minus = false;
  if (/^\(.*\)$/s.test(body)) {
    parentheses = true;
    body = body.slice(1, -1).trim().replace(CURRENCY_PREFIX, '');
  }
  if (/^-/.test(body)) {
    minus = true;
    body = body.slice(1).trim().replace(CURRENCY_PREFIX, '');
  } else if (/-$/.test(body)) {
    minus = true;
    body = body.slice(0, -1).trim();
  }
  return parentheses || minus ? { body, parentheses } : undefined;
}

/** A positive amount, its R$ and any sign already taken off; `shown` is the cell for messages. */
function readMagnitude(body: string, shown: string): AmountReading {
  const notAmount = (wholeReaisMissing?: string) =>
    fail(
      wholeReaisMissing === undefined
        ? { code: 'notAnAmount', shown }
        : { code: 'notAnAmount', shown, wholeReaisMissing },
    );
  if (OTHER_CURRENCY.test(body)) return fail({ code: 'notInReais', shown });
  if (/^[.,]\d/.test(body)) return notAmount(body);
  if (!/^\d[\d., \u00a0\u202f]*$/.test(body) || !/\d$/.test(body)) return notAmount();

  // Runs of digits and what stands between them. Two marks in a row (`1.,5`) are no amount;
  // a space next to another mark or doubled is a space out of place.
  const groups: string[] = [];
  const marks: string[] = [];
  for (const match of body.matchAll(/(\d+)([^\d]*)/g)) {
    groups.push(match[1] ?? '');
    const between = match[2] ?? '';
    if (between === '') continue;
    if (between.length > 1) {
      return [...between].some(isSpace) ? misplacedSpace(shown) : notAmount();
    }
    marks.push(isSpace(between) ? ' ' : between);
  }

  // The decimal mark is the last mark when it is a point or comma used nowhere else; its
  // digits are the decimals. One `.` or `,` before exactly three digits, alone, could be
  // thousands or decimals: refused with both readings.
  const last = marks[marks.length - 1];
  const lastGroup = groups[groups.length - 1] ?? '';
  let decimal: string | undefined;
  if (last === '.' || last === ',') {
    const once = marks.indexOf(last) === marks.length - 1;
    const first = groups[0] ?? '';
    if (
      once &&
      marks.length === 1 &&
      lastGroup.length === 3 &&
      first.length <= 3 &&
      /[1-9]/.test(first)
    ) {
      return fail({ code: 'thousandsOrDecimals', shown, digits: groups.join('') });
    }
    if (once) decimal = last;
  }
  const fraction = decimal === undefined ? '' : lastGroup;
  const wholeGroups = decimal === undefined ? groups : groups.slice(0, -1);
  const thousands = decimal === undefined ? marks : marks.slice(0, -1);
  if (fraction.length > 2) return fail({ code: 'tooManyDecimals', shown });

  const kinds = new Set(thousands);
  if (kinds.size > 1) {
    return fail({ code: 'mixedThousands', shown, separators: [...kinds] });
  }
  const [separator] = kinds;
  if (separator !== undefined) {
    const wellGrouped =
      (wholeGroups[0]?.length ?? 0) <= 3 && wholeGroups.slice(1).every((g) => g.length === 3);
    if (separator === ' ' && !wellGrouped) return misplacedSpace(shown);
    if (separator === decimal || !wellGrouped) return fail({ code: 'misplacedThousands', shown });
  } else if (decimal === undefined && marks.length > 0) {
    return fail({ code: 'misplacedThousands', shown });
  }
  return toCents(wholeGroups.join(''), fraction, shown);
}

function misplacedSpace(shown: string): AmountReading {
  return fail({ code: 'misplacedSpace', shown });
}

/** Whole cents, as the interface's `value` (1250 is R$ 12,50). */
export function parseCents(text: string): AmountReading {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed) && Number(trimmed) > 0)
    return { ok: true, cents: Number(trimmed) };
  const shown = show(text);
  if (shown === '') return fail({ code: 'empty' });
  if (SCIENTIFIC_NOTATION.test(shown)) return scientific(shown);
  if (unwrapNegative(trimmed)) return fail({ code: 'centsNegative', shown });
  if (/^\d+$/.test(shown))
    return toCents(shown.slice(0, -2), shown.slice(-2).padStart(2, '0'), shown);
  if (/^\d+[.,]\d+$/.test(shown)) {
    return fail({ code: 'centsWithDecimals', shown });
  }
  return fail({ code: 'notCents', shown });
}
