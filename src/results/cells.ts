/**
 * Cells of a result file as a Brazilian Excel reads them (the `excel` dialect): a
 * document keeps its punctuation (as bare digits, Excel drops a CPF's leading zero or
 * shows a CNPJ as 1,12E+13), amounts use a decimal comma, and times are date-times in the
 * operator's time zone. Pure text in, text out.
 */

/** `52998224725` as `529.982.247-25`, a CNPJ (digits or the alphanumeric kind) as `11.222.333/0001-81`. */
export function punctuatedDocument(document: string): string {
  if (/^\d{11}$/.test(document)) {
    return `${document.slice(0, 3)}.${document.slice(3, 6)}.${document.slice(6, 9)}-${document.slice(9)}`;
  }
  if (/^[0-9A-Z]{12}\d{2}$/.test(document)) {
    return `${document.slice(0, 2)}.${document.slice(2, 5)}.${document.slice(5, 8)}/${document.slice(8, 12)}-${document.slice(12)}`;
  }
  return document;
}

/**
 * A Pix key as a Brazilian Excel keeps it as text: a CPF or CNPJ key punctuated, a phone
 * key as it is written in Brazil, `(11) 98765-4321` (every Pix phone key is +55; as
 * `+5511…` Excel reads a number or a formula, and made inert it shows a leading `'`).
 */
export function shownPixKey(type: string, key: string): string {
  if (type === 'CPF' || type === 'CNPJ') return punctuatedDocument(key);
  const phone = type === 'TELEFONE' ? /^\+55(\d{2})(\d{4,5})(\d{4})$/.exec(key) : null;
  return phone ? `(${phone[1]}) ${phone[2]}-${phone[3]}` : key;
}

/** The gateway's numeric text (`0.50`) with a decimal comma (`0,50`); anything else as it came. */
export function decimalComma(text: string): string {
  return /^-?\d+\.\d+$/.test(text) ? text.replace('.', ',') : text;
}

/**
 * The instant of a time the gateway wrote: ISO 8601 with `Z` (its `createdAt`) or with no
 * zone (its `processedAt`), which it writes in UTC like `createdAt` (docs/gateway.md).
 * Undefined for any other text.
 */
export function gatewayInstant(text: string): Date | undefined {
  const match = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(Z?)$/.exec(text);
  if (!match) return undefined;
  return new Date(match[1] ? text : `${text}Z`);
}

const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: making one costs far more than using it (an archive of a million). */
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    FORMATTERS.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * An instant as the clocks of `timeZone` read it, to the second, with that zone's offset
 * then: 2026-11-23T20:41:07Z in America/Sao_Paulo is `2026-11-23T17:41:07` and -180.
 */
function wallClock(instant: Date, timeZone: string): { local: string; offsetMinutes: number } {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  const local = `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
  const offsetMinutes = Math.round(
    (Date.parse(`${local}Z`) - Math.floor(instant.getTime() / 1000) * 1000) / 60_000,
  );
  return { local, offsetMinutes };
}

/** For programs: `2026-11-23T17:41:07-03:00`, the instant in `timeZone` with its offset. */
export function inTimeZone(instant: Date, timeZone: string): string {
  const { local, offsetMinutes } = wallClock(instant, timeZone);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.trunc(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return `${local}${sign}${hours}:${minutes}`;
}

/**
 * For a spreadsheet: `2026-11-23 17:41:07`, the instant as the clocks of `timeZone` read
 * it, which Excel and Calc read as a date-time (an offset would make it text).
 */
export function spreadsheetTime(instant: Date, timeZone: string): string {
  return wallClock(instant, timeZone).local.replace('T', ' ');
}
