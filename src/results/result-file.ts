/**
 * The result file of an input file (docs/result-files.md): one line per input row, in
 * input order, including invalid and skipped rows, rewritten whole and atomically each
 * time, every cell safe to open in a spreadsheet.
 */
import { openAtomicCsv, type CsvDialect } from '../csv/atomic-csv.js';
import { safeCell } from '../csv/safe-cell.js';
import { PIX_KEY_TYPES } from '../gateway/contract.js';
import type {
  BatchEvent,
  BatchRecord,
  JournalBatches,
  JournalGateway,
  JournalReports,
  ResultEntry,
} from '../journal/journal.js';
import { saidNow } from '../journal/answers.js';
import type { RowState } from '../journal/states.js';
import { CATALOGS, type Catalog, type StatusWord } from '../messages/catalog.js';
import type { Language } from '../messages/language.js';
import { reaisWith } from '../messages/money.js';
import {
  decimalComma,
  gatewayInstant,
  inTimeZone,
  punctuatedDocument,
  shownPixKey,
  spreadsheetTime,
} from './cells.js';
import { APPROVAL_COLUMNS, RESULT_COLUMNS, type ResultColumn } from './columns.js';
import { say, sayInEnglish } from '../messages/say.js';
import { withHintFlags } from '../messages/hint-flags.js';
import type { Said } from '../messages/said.js';

/** Starts whatever is written or printed from a journal bound to the embedded sandbox. */
export const SANDBOX_MARK = CATALOGS.en.sandboxMoved;

export const RESULT_DIALECTS = ['excel', 'rfc4180'] as const;
export type ResultDialect = (typeof RESULT_DIALECTS)[number];

/** How a result is written: the config's resultDialect and timeZone. */
export interface ResultFormat {
  dialect: ResultDialect;
  timeZone: string;
  /**
   * Of the headings and status words in the `excel` dialect, which is for people;
   * `rfc4180` is for programs and keeps English whatever the language. English when absent.
   */
  language?: Language;
  /**
   * The global flags the commands in its messages take (see withHintFlags): those of the
   * command that writes the file (a run, reconcile) or shows its lines (status); none if absent.
   */
  hintFlags?: string;
}

/** The catalog a file in this format speaks: English unless written for people. */
export function catalogFor(format: Pick<ResultFormat, 'dialect' | 'language'>): Catalog {
  return CATALOGS[format.dialect === 'excel' ? (format.language ?? 'en') : 'en'];
}

const DIALECTS: Readonly<Record<ResultDialect, CsvDialect & { decimal: string }>> = {
  // Excel set to Portuguese splits on ";" and reads "1234,56" as a number.
  excel: { delimiter: ';', bom: true, recordDelimiter: 'windows', decimal: ',' },
  rfc4180: { delimiter: ',', bom: false, recordDelimiter: 'windows', decimal: '.' },
};

/** How a CSV of ours for people (a result, a validation report) is laid out in a dialect. */
export function csvDialectOf(dialect: ResultDialect): CsvDialect {
  const { delimiter, bom, recordDelimiter } = DIALECTS[dialect];
  return { delimiter, bom, recordDelimiter };
}

/** Why a batch's held rows are held, for their message, in the file's words. */
export function holdMessage(
  batch: Pick<BatchRecord, 'state' | 'problems' | 'heldBecause'>,
  words: Catalog = CATALOGS.en,
  hintFlags = '',
): string {
  const said: Said =
    batch.state === 'underfunded'
      ? { code: 'heldForBalance', why: batch.heldBecause }
      : { code: 'heldWithFile', problems: batch.problems, state: batch.state };
  return say(words, withHintFlags(said, hintFlags));
}

/** States of a covering payout that leave the row it covered unpaid. */
const UNDONE: ReadonlySet<RowState> = new Set(['refunded', 'failed', 'canceled', 'rejected']);

export type ResultRecord = Record<ResultColumn, string>;

/**
 * One input line's result, as text. `fee` and `net` are the gateway's text, verbatim but
 * for a decimal comma in the excel dialect, where documents keep their punctuation so
 * that Excel keeps them as text.
 */
export function resultRecord(
  entry: ResultEntry,
  format: ResultFormat,
  heldBecause: string,
): ResultRecord {
  const { dialect, timeZone } = format;
  const words = (said: Said) =>
    say(catalogFor(format), withHintFlags(said, format.hintFlags ?? ''));
  const excel = dialect === 'excel';
  const shown = (document: string) => (excel ? punctuatedDocument(document) : document);
  const figure = (text: string) => (excel ? decimalComma(text) : text);
  // Both times in timeZone, alike: date-times to a spreadsheet, with their offset to a program.
  const time = (text: string) => {
    const instant = gatewayInstant(text);
    if (!instant) return text;
    return excel ? spreadsheetTime(instant, timeZone) : inTimeZone(instant, timeZone);
  };
  const payout = entry.payout;
  const request = payout?.request;
  // A covered row was paid by another payout: when that one came back or failed, neither
  // was paid, and this row says so rather than `covered`.
  const undone = entry.cover && UNDONE.has(entry.cover.state) ? entry.cover : null;
  const own = entry.kind === 'payout' ? (payout?.state ?? entry.kind) : entry.kind;
  const status = undone ? undone.state : own;
  // A row held (or covered) by a rule on who is paid says why itself, in the reader's
  // language where the journal kept it as a value; one held with its whole batch (the
  // balance, a control total) says what holds the batch.
  const why = payout?.said ? words(saidNow(payout.said, entry.repeatsState)) : payout?.message;
  const said =
    entry.kind === 'payout'
      ? status === 'held'
        ? why || heldBecause
        : (why ?? '')
      : [entry.column, entry.said ? words(entry.said) : entry.note].filter(Boolean).join(': ');
  const message = undone
    ? say(catalogFor(format), {
        code: 'coverUndone',
        orderId: undone.orderId,
        file: undone.fileName,
        line: undone.line,
        state: undone.state,
        own: said,
        hintFlags: format.hintFlags ?? '',
      })
    : said;
  const keyType = request
    ? (PIX_KEY_TYPES[request.pixKeyType] ?? String(request.pixKeyType))
    : undefined;
  // A line that is no payout of its own (invalid, held, superseded) still shows the name
  // and amount its row had, so a person finds it and a sum of the column adds up; a payout
  // sent again leaves its amount to the attempt that replaced it, so the sum counts it once.
  const valueCents = status === 'retried' ? null : (request?.value ?? entry.valueCents);
  return {
    line: String(entry.line),
    orderId: entry.orderId ?? '',
    name: request?.person.name ?? entry.name ?? '',
    // A line that is no payout shows the document and key its row had, as written.
    pixKeyType: keyType ?? entry.pixKeyType ?? '',
    pixKey:
      request && keyType && excel
        ? shownPixKey(keyType, request.pixKey)
        : (request?.pixKey ?? entry.pixKey ?? ''),
    cpfCnpj: shown(request?.cpfCnpj ?? entry.cpfCnpj ?? ''),
    value: valueCents === null ? (entry.valueWritten ?? '') : amountIn(valueCents, dialect),
    status,
    transactionId: payout?.transactionId?.toString() ?? '',
    endToEndId: payout?.endToEndId ?? '',
    fee: figure(payout?.fee ?? ''),
    net: figure(payout?.net ?? ''),
    createdAt: time(payout?.gatewayCreatedAt ?? ''),
    processedAt: time(payout?.processedAt ?? ''),
    message,
  };
}

/** A time of ours as the file's other times are shown: for a spreadsheet, or with its offset. */
function shownTime(at: number, format: ResultFormat): string {
  const instant = new Date(at);
  return format.dialect === 'excel'
    ? spreadsheetTime(instant, format.timeZone)
    : inTimeZone(instant, format.timeZone);
}

/**
 * Who dropped a batch and who approved it, as its journal recorded them: the cells of
 * APPROVAL_COLUMNS, or undefined for a batch nobody approved. Under four eyes, the
 * approvers of the code that released it, each once; else whoever approved it last.
 */
export function approvalCells(
  events: readonly BatchEvent[],
  format: ResultFormat,
): [droppedBy: string, approvedBy: string] | undefined {
  const approvals = events.filter((event) => event.event === 'approved');
  const last = approvals.at(-1);
  if (!last) return undefined;
  const words = catalogFor(format);
  const code = last.detail.code === 'eventFourEyesApproved' ? last.detail.approvalCode : null;
  const people = new Map<string, { by: string; at: string }>();
  for (const event of code === null ? [last] : approvals) {
    const { detail } = event;
    if (code !== null && (detail.code !== 'eventFourEyesApproved' || detail.approvalCode !== code))
      continue;
    // One person once, by uid where recorded: an approval recorded again when more were needed.
    const person =
      detail.code === 'eventFourEyesApproved' && detail.uid !== undefined
        ? `uid ${detail.uid}`
        : `name ${event.by}`;
    if (people.has(person)) continue;
    const by = detail.code === 'eventMovedIntoApproved' ? words.movedIntoApproved : event.by;
    people.set(person, { by, at: shownTime(event.at, format) });
  }
  const dropped = events.find((event) => event.event === 'dropped')?.by ?? '';
  return [dropped, words.approvedByCell({ approvals: [...people.values()], code })];
}

/** One line of the result file: the record's cells in column order, each formula-safe. */
export function resultLine(
  entry: ResultEntry,
  format: ResultFormat,
  heldBecause: string,
): string[] {
  const record = resultRecord(entry, format, heldBecause);
  const words = catalogFor(format);
  const status = words.state[record.status as StatusWord] ?? record.status;
  return RESULT_COLUMNS.map((column) => safeCell(column === 'status' ? status : record[column]));
}

/** Cents as reais in the dialect: `1234,56` (excel) or `1234.56`. */
export function amountIn(cents: number, dialect: ResultDialect): string {
  return reaisWith(cents, DIALECTS[dialect].decimal);
}

const PAGE = 2_000;

/**
 * Every line of a batch in file order, read from the journal a page at a time: memory
 * stays flat for a large file, and no cursor stays open while the caller awaits.
 */
export async function* entriesOf(
  journal: JournalReports,
  batchId: number,
): AsyncGenerator<ResultEntry> {
  for await (const page of pagesOf(journal, batchId)) yield* page;
}

/** entriesOf a page at a time: a promise a page, not one a line. */
async function* pagesOf(
  journal: JournalReports,
  batchId: number,
): AsyncGenerator<readonly ResultEntry[]> {
  for (let after = 0; ;) {
    const page = await journal.resultEntries(batchId, after, PAGE);
    const last = page.at(-1);
    if (!last) return;
    yield page;
    after = last.line;
  }
}

/**
 * Writes the whole result file of a batch to `path`, replacing it only once complete. A
 * result made against the embedded sandbox has a first column saying so on every line:
 * a `paid` there moved no money, and a column survives sorting, filtering and copying
 * rows in a spreadsheet where a title line would not. Results of a real gateway have none.
 * False when `stop` came first: `path` keeps what it had.
 */
export async function writeResultFile(
  journal: JournalReports & JournalGateway & Pick<JournalBatches, 'batchEvents'>,
  batch: BatchRecord,
  path: string,
  format: ResultFormat,
  stop?: AbortSignal,
): Promise<boolean> {
  const sandbox = (await journal.gatewayKind()) === 'sandbox';
  const words = catalogFor(format);
  // Read once: the same two cells end every line of the batch.
  const approval = approvalCells(await journal.batchEvents(batch.id), format)?.map(safeCell);
  const headings = [...RESULT_COLUMNS, ...(approval ? APPROVAL_COLUMNS : [])].map(
    (column) => words.heading[column],
  );
  const columns = sandbox ? [words.heading.sandbox, ...headings] : headings;
  const file = openAtomicCsv(path, columns, DIALECTS[format.dialect]);
  const heldBecause = holdMessage(batch, words, format.hintFlags);
  try {
    for await (const page of pagesOf(journal, batch.id)) {
      if (stop?.aborted) {
        await file.abandon();
        return false;
      }
      for (const entry of page) {
        const line = resultLine(entry, format, heldBecause);
        if (approval) line.push(...approval);
        if (sandbox) line.unshift(words.sandboxMoved);
        const full = file.write(line);
        if (full) await full;
      }
    }
    await file.commit();
    return true;
  } catch (error) {
    await file.abandon();
    throw error;
  }
}
