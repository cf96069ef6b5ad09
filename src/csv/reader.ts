/**
 * Reads a payout file as a stream: one pass to fingerprint it and tell its encoding,
 * one to parse and validate it row by row. Memory stays flat whatever the row count
 * (a few bytes a row for duplicate detection).
 *
 * Rows are handed over as they are read; the report at the end says whether the file
 * can be used at all. A caller must not act on any row before the report says so:
 * a damaged file (an unclosed quote at the end, a control total that does not match)
 * is held whole, even after some of its rows were read.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, pipeline } from 'node:stream';
import { parse, type CsvError, type Options, type Parser } from 'csv-parse';
import { PayoutsError } from '../errors.js';
import { formatCents } from '../messages/money.js';
import { detectDelimiter, type Delimiter } from './delimiter.js';
import { looksBinary, readBom, type EncodingSetting, type TextEncoding } from './encoding.js';
import type { PayoutField } from '../messages/fields.js';
import { mapHeader } from './header.js';
import type { BytePosition, Said } from '../messages/said.js';
import { batchStem } from './order-id.js';
import { createRowValidator, type RowOutcome } from './row.js';
import { checkControlTotals, parseControlFile, type ControlTotal } from './totals.js';

export interface ReadOptions {
  encoding: EncodingSetting;
  maxFileBytes: number;
  maxPayoutCents: number;
  maxFileCents: number;
  /** The accountant's own headings, read as our columns (the `headings` setting). */
  headings?: Readonly<Record<string, string>>;
  /** Contacts for rows that give none (see the row's check). */
  recipientEmail?: string | null;
  recipientPhone?: string | null;
  /**
   * Fewer repeat keys in memory than MEMORY_KEYS (fingerprints.ts): ingest's bound, and
   * tests', to read the spilled path on small files.
   */
  memoryKeys?: number;
}

export interface FileProblem {
  /** `unusable`: the file cannot be read as payouts. `held`: readable, but nothing may be paid. */
  kind: 'unusable' | 'held';
  message: Said;
}

export interface FileReport {
  file: string;
  bytes: number;
  /** Hex SHA-256 of the file's bytes: the same bytes under any name are the same batch. */
  sha256: string | undefined;
  encoding: TextEncoding | undefined;
  delimiter: Delimiter | undefined;
  header:
    | {
        line: number;
        columns: { field: PayoutField; heading: string; configured?: boolean }[];
        ignored: string[];
        orderIdsDerived: boolean;
      }
    | undefined;
  /** Data rows: valid + invalid. */
  rows: number;
  valid: number;
  invalid: number;
  skipped: number;
  blank: number;
  /** Sum of the valid rows, in cents. */
  totalCents: number;
  /** Valid rows whose e-mail or phone came from their Pix key or the configured default. */
  filled: Record<'email' | 'phone', Record<'key' | 'default', number>>;
  problems: FileProblem[];
}

/** Longer lines are damage, not payouts: found while fingerprinting, before any parsing. */
export const MAX_LINE_CHARACTERS = 100_000;
/** More blank lines in a row than this is not an export: a file of newlines would take hours. */
const MAX_BLANK_RUN = 100_000;
const HEAD_BYTES = 64 * 1024;
const CHUNK_BYTES = 256 * 1024;
/**
 * What reading the rows reads at a time: little enough that a read's text is an ordinary
 * young object, not one of V8's large objects, old at once (docs/benchmarks.md).
 */
const READ_BYTES = 32 * 1024;

/** A file's report before anything of it is read: nothing counted, these problems. */
export function emptyFileReport(file: string, problems: FileProblem[]): FileReport {
  return {
    file,
    bytes: 0,
    sha256: undefined,
    encoding: undefined,
    delimiter: undefined,
    header: undefined,
    rows: 0,
    valid: 0,
    invalid: 0,
    skipped: 0,
    blank: 0,
    totalCents: 0,
    filled: { email: { key: 0, default: 0 }, phone: { key: 0, default: 0 } },
    problems,
  };
}

/** What a batch's derived orderIds are made of, beside its name: see batchSlug. */
export interface OrderIdDerivation {
  /** The batch's number among the batches of its name. */
  batchNumber: number;
  /** The home's tag, or null for a batch journaled before homes had one. */
  home: string | null;
}

/**
 * `onFingerprint`, when given, hears the file's SHA-256 once its bytes are read and
 * before any row is; it answers what the batch's derived orderIds are made of, or false
 * to stop there (a caller that knows these bytes).
 */
export async function readPayoutFile(
  path: string,
  options: ReadOptions,
  onRow: (row: RowOutcome) => void | Promise<void>,
  onFingerprint?: (sha256: string) => Promise<OrderIdDerivation | false>,
): Promise<FileReport> {
  const report = emptyFileReport(path, []);
  const unusable = (message: Said) => {
    report.problems.push({ kind: 'unusable', message });
    return report;
  };

  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return unusable({ code: 'notAFile' });
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return unusable(
      code === 'ENOENT'
        ? { code: 'fileMissing' }
        : { code: 'fileUnreadable', errorCode: code ?? 'error' },
    );
  }
  report.bytes = size;
  if (size === 0) return unusable({ code: 'fileEmpty' });
  if (size > options.maxFileBytes) {
    return unusable({ code: 'fileTooLarge', bytes: size, limit: options.maxFileBytes });
  }

  const sniffed = await sniff(path);
  report.sha256 = sniffed.sha256;
  const derivation = onFingerprint
    ? await onFingerprint(sniffed.sha256)
    : { batchNumber: 1, home: null };
  if (derivation === false) return report;
  const bom = readBom(sniffed.head);
  if (!bom && looksBinary(sniffed.head)) {
    return unusable({ code: 'fileBinary' });
  }
  let encoding: TextEncoding;
  if (bom) encoding = bom.encoding;
  else if (options.encoding === 'utf-8') {
    if (sniffed.invalidUtf8At !== undefined) {
      return unusable({ code: 'notUtf8', at: await byteAt(path, sniffed.invalidUtf8At) });
    }
    encoding = 'utf-8';
  } else if (options.encoding === 'windows-1252' || options.encoding === 'latin1') {
    encoding = 'windows-1252';
  } else if (sniffed.invalidUtf8At === undefined) {
    encoding = 'utf-8';
  } else {
    // Reading a half-UTF-8 file as Windows-1252 would turn "João" into "JoÃ£o" and
    // pass: the orderIds derived from it would change once the file is fixed.
    const utf8At = await findUtf8Sequence(path);
    if (utf8At !== undefined) {
      const [good, bad] = [await byteAt(path, utf8At), await byteAt(path, sniffed.invalidUtf8At)];
      return unusable({ code: 'mixedEncodings', good, bad });
    }
    encoding = 'windows-1252';
  }
  report.encoding = encoding;

  if (sniffed.longLine) {
    return unusable({ code: 'lineTooLong', ...sniffed.longLine, max: MAX_LINE_CHARACTERS });
  }
  const headText = new TextDecoder(encoding).decode(sniffed.head.subarray(bom?.length ?? 0));
  const { delimiter, hintLine } = detectDelimiter(headText);
  report.delimiter = delimiter;

  // Excel's `sep=` line is passed over by starting after it: given to the parser, its
  // one field would make every later record "inconsistent", which csv-parse pays for.
  const skipBytes = hintLine ? hintLineBytes(sniffed.head.subarray(bom?.length ?? 0)) : 0;
  const start = (bom?.length ?? 0) + skipBytes;
  const parseOptions: Options = {
    delimiter,
    record_delimiter: sniffed.recordDelimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    max_record_size: MAX_LINE_CHARACTERS,
  };
  // Without a quote anywhere, CSV is lines split at the delimiter: read so, at a third of
  // csv-parse's cost. With one, csv-parse reads the file (quoted fields, line breaks in them).
  const records = sniffed.quoted
    ? parsedRecords(source(path, start, encoding, sniffed.recordDelimiter), parseOptions)
    : splitRecords(path, start, encoding, delimiter, sniffed.recordDelimiter);

  const stem = batchStem(basename(path));
  let validator: ReturnType<typeof createRowValidator> | undefined;
  let nextLine = hintLine ? 2 : 1;
  let line = nextLine;
  let blankRun = 0;
  let callerFailed = false;
  try {
    for await (const batch of records) {
      for (const record of batch) {
        line = nextLine;
        // A cell holds a line break only between quotes (a file's line ends are of one kind,
        // or all three end records).
        const breaks = sniffed.quoted ? lineBreaksWithin(record) : 0;
        nextLine += 1 + breaks;
        if (!validator) {
          if (record.every((cell) => cell.trim() === '')) continue;
          const header = mapHeader(record, options.headings);
          if (!header.ok) {
            for (const problem of header.problems) {
              unusable({ code: 'headerUnusable', line, problem });
            }
            return report;
          }
          // An orderId column blank in every row is a column the export always writes,
          // not ids: the rows are identified as in a file without one.
          const orderIdColumn = header.columns.orderId;
          if (
            orderIdColumn &&
            !(await anyCellIn(
              source(path, start, encoding, sniffed.recordDelimiter),
              parseOptions,
              orderIdColumn.index,
            ))
          ) {
            delete header.columns.orderId;
            header.ignored.push(`${orderIdColumn.heading} (blank in every row)`);
          }
          report.header = {
            line,
            columns: Object.entries(header.columns).map(([field, column]) => ({
              field: field as PayoutField,
              heading: column.heading,
              ...(column.configured ? { configured: true } : {}),
            })),
            ignored: header.ignored,
            orderIdsDerived: !header.columns.orderId,
          };
          validator = createRowValidator({
            columns: header.columns,
            headings: record,
            delimiter,
            stem,
            ...derivation,
            maxPayoutCents: options.maxPayoutCents,
            recipientEmail: options.recipientEmail ?? null,
            recipientPhone: options.recipientPhone ?? null,
            memoryKeys: options.memoryKeys,
          });
          continue;
        }
        const outcome = validator.check(record, line, line + breaks);
        if (outcome.kind === 'valid') {
          report.valid++;
          report.totalCents += outcome.payout.valueCents;
          if (outcome.filled?.email) report.filled.email[outcome.filled.email]++;
          if (outcome.filled?.phone) report.filled.phone[outcome.filled.phone]++;
        } else if (outcome.kind === 'invalid') report.invalid++;
        else if (outcome.kind === 'skipped') report.skipped++;
        else report.blank++;
        blankRun = outcome.kind === 'blank' ? blankRun + 1 : 0;
        if (blankRun > MAX_BLANK_RUN) {
          return unusable({ code: 'blankRun', max: MAX_BLANK_RUN, line: line - MAX_BLANK_RUN });
        }
        try {
          // Awaited only when it is a promise: a tick per row is measurable on a million rows.
          const handled = onRow(outcome);
          if (handled) await handled;
        } catch (error) {
          callerFailed = true;
          throw error;
        }
      }
    }
  } catch (error) {
    // The caller's own failure (a journal error, say), or this machine's (the temp folder
    // full), is not a damaged file.
    if (callerFailed || error instanceof PayoutsError) throw error;
    // The first line not yet handed over: where the record the parser choked on starts.
    return unusable(describeParseError(error, nextLine));
  } finally {
    validator?.close();
    await records.return(undefined);
  }
  report.rows = report.valid + report.invalid;

  if (!validator) return unusable({ code: 'noHeader' });
  if (report.rows === 0) return unusable({ code: 'noRows' });

  const controls: ControlTotal[] = [];
  const totals = validator.totals();
  const totalLine = totals.trailingTotal;
  if (totalLine?.cents !== undefined) {
    controls.push({ source: { totalLine: totalLine.line }, cents: totalLine.cents });
  } else if (totalLine?.unreadable !== undefined) {
    report.problems.push({
      kind: 'held',
      message: { code: 'totalLineUnreadable', line: totalLine.line, text: totalLine.unreadable },
    });
  }
  for (const suffix of ['.total', '.done']) {
    const text = await readFile(path + suffix, 'utf8').catch(() => undefined);
    if (text === undefined || text.trim() === '') continue;
    const control = parseControlFile(basename(path) + suffix, text);
    if ('problem' in control) report.problems.push({ kind: 'held', message: control.problem });
    else controls.push(control);
  }
  for (const message of checkControlTotals(totals, controls)) {
    report.problems.push({ kind: 'held', message });
  }
  if (report.totalCents > options.maxFileCents) {
    report.problems.push({
      kind: 'held',
      message: {
        code: 'overFileLimit',
        cents: report.totalCents,
        limitCents: options.maxFileCents,
      },
    });
  }
  return report;
}

/**
 * Whether any record after the header has a non-blank cell at `index`: read only as far
 * as the first one (the first row, in a file that has ids), so a file pays for a whole
 * second reading only when the column is blank throughout.
 */
async function anyCellIn(input: Readable, options: Options, index: number): Promise<boolean> {
  const parser = quietErrors(sameLengthRecords(parse(options)));
  pipeline(input, parser, () => {
    // A damaged file is found and said by the main reading; here it only ends the look.
  });
  let header = false;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      const blank = record.every((cell) => cell.trim() === '');
      if (!header) {
        header = !blank;
        continue;
      }
      if ((record[index] ?? '').trim() !== '') return true;
    }
  } catch {
    // The main reading says what is wrong with the file.
    return true;
  } finally {
    input.destroy();
    parser.destroy();
  }
  return false;
}

/** One pass over the bytes: the fingerprint, the first bytes, and whether it is valid UTF-8. */
async function sniff(path: string): Promise<{
  sha256: string;
  head: Uint8Array;
  invalidUtf8At: number | undefined;
  /** The first line longer than MAX_LINE_CHARACTERS bytes, if any. */
  longLine: { line: number; bytes: number } | undefined;
  recordDelimiter: string | string[];
  /** Whether any byte is a double quote (0x22): in every encoding read, none means no `"`. */
  quoted: boolean;
}> {
  const hash = createHash('sha256');
  let head: Uint8Array | undefined;
  let offset = 0;
  let invalidUtf8At: number | undefined;
  // A character cut between two chunks: its first bytes, checked with the next chunk.
  let carry: Buffer = Buffer.alloc(0);
  const byLf = { number: 1, bytes: 0 };
  const byCr = { number: 1, bytes: 0 };
  let longLine: { line: number; bytes: number } | undefined;
  const ends = { crlf: 0, lf: 0, cr: 0 };
  let previousByte = -1;
  let quoted = false;
  // A chunk joined to the carry before it, in a buffer of its own reused by every chunk.
  const joined = Buffer.allocUnsafe(3 + CHUNK_BYTES);
  for await (const chunk of chunksOf(path, 0, CHUNK_BYTES)) {
    hash.update(chunk);
    head ??= Buffer.from(chunk.subarray(0, HEAD_BYTES));
    quoted ||= chunk.includes(34);
    // Lines counted both ways, ended by LF and ended by CR: a line is too long only when
    // it is by both, so a file of CR-only line ends (a Mac's "CSV") is not one long line.
    let lf = chunk.indexOf(10);
    let cr = chunk.indexOf(13);
    for (let start = 0; ;) {
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      const bytes = (end < 0 ? chunk.length : end) - start;
      byLf.bytes += bytes;
      byCr.bytes += bytes;
      if (byLf.bytes > MAX_LINE_CHARACTERS && byCr.bytes > MAX_LINE_CHARACTERS) {
        const lines = ends.lf + ends.crlf > 0 ? byLf : byCr;
        longLine ??= { line: lines.number, bytes: lines.bytes };
      }
      if (end < 0) break;
      if (end === lf) {
        const before = end > 0 ? chunk[end - 1] : previousByte;
        if (before === 13) ends.crlf++;
        else ends.lf++;
        byLf.number++;
        byLf.bytes = 0;
        lf = chunk.indexOf(10, end + 1);
      } else {
        ends.cr++;
        byCr.number++;
        byCr.bytes = 0;
        byLf.bytes++;
        cr = chunk.indexOf(13, end + 1);
      }
      start = end + 1;
    }
    previousByte = chunk[chunk.length - 1] ?? previousByte;
    if (invalidUtf8At === undefined) {
      let bytes = chunk;
      if (carry.length > 0) {
        carry.copy(joined);
        chunk.copy(joined, carry.length);
        bytes = joined.subarray(0, carry.length + chunk.length);
      }
      const cut = bytes.length - incompleteTail(bytes);
      const whole = bytes.subarray(0, cut);
      if (!isUtf8(whole)) invalidUtf8At = offset - carry.length + firstBadUtf8(whole);
      carry = Buffer.from(bytes.subarray(cut));
    }
    offset += chunk.length;
  }
  if (invalidUtf8At === undefined && carry.length > 0) invalidUtf8At = offset - carry.length;
  return {
    sha256: hash.digest('hex'),
    head: head ?? new Uint8Array(),
    invalidUtf8At,
    longLine,
    recordDelimiter: recordDelimiter(ends),
    quoted,
  };
}

/**
 * The file's bytes from `start`, `size` at a time, every read into one buffer: a chunk
 * holds until the next is asked for, rather than a stream's buffer a read, garbage that piles
 * up (docs/benchmarks.md).
 */
async function* chunksOf(path: string, start: number, size: number): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(size);
    for (let position = start; ;) {
      const { bytesRead } = await file.read(buffer, 0, size, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/**
 * The line end the file uses, when it uses one kind (csv-parse is slower told to watch for
 * all three, docs/benchmarks.md); all three when it mixes them, so that a CRLF file with one LF
 * line does not merge two rows. Line breaks inside quotes count too: a mix is read right
 * either way, only more slowly.
 */
function recordDelimiter(ends: { crlf: number; lf: number; cr: number }): string | string[] {
  const loneCr = ends.cr - ends.crlf;
  const kinds = [ends.crlf > 0, ends.lf > 0, loneCr > 0].filter(Boolean).length;
  if (kinds > 1) return ['\r\n', '\n', '\r'];
  if (ends.crlf > 0) return '\r\n';
  return loneCr > 0 ? '\r' : '\n';
}

/** Offset of the first byte that neither starts nor continues a well-formed UTF-8 character. */
function firstBadUtf8(bytes: Uint8Array): number {
  for (let at = 0; at < bytes.length;) {
    const lead = bytes[at] ?? 0;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    if (length === 0 || !isUtf8(bytes.subarray(at, at + length))) return at;
    at += length;
  }
  return bytes.length;
}

/** Where a byte is, for people: "line 3, byte 0xE7 at offset 112". */
async function byteAt(path: string, offset: number): Promise<BytePosition> {
  let line = 1;
  let read = 0;
  for await (const chunk of createReadStream(path, {
    end: offset,
    highWaterMark: CHUNK_BYTES,
  }) as AsyncIterable<Buffer>) {
    const before = chunk.subarray(0, Math.max(0, offset - read));
    for (let at = before.indexOf(10); at >= 0; at = before.indexOf(10, at + 1)) line++;
    const byte = read + chunk.length > offset ? chunk[offset - read] : undefined;
    if (byte !== undefined) {
      return { line, offset, byte: byte.toString(16).toUpperCase().padStart(2, '0') };
    }
    read += chunk.length;
  }
  return { line, offset };
}

/** Offset of the first well-formed multi-byte UTF-8 character, if any (within a chunk). */
async function findUtf8Sequence(path: string): Promise<number | undefined> {
  let offset = 0;
  for await (const chunk of createReadStream(path, {
    highWaterMark: CHUNK_BYTES,
  }) as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length; at++) {
      const lead = chunk[at] ?? 0;
      if (lead < 0xc2 || lead > 0xf4) continue;
      const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
      let continued = 1;
      while (continued < length && ((chunk[at + continued] ?? 0) & 0xc0) === 0x80) continued++;
      if (continued === length) return offset + at;
    }
    offset += chunk.length;
  }
  return undefined;
}

/** How many bytes at the end start a UTF-8 character that the buffer does not finish. */
function incompleteTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * The file's text for csv-parse. UTF-8 goes in as bytes (csv-parse decodes each field
 * whole, so a character split between chunks is safe); other encodings are decoded
 * here, since Node's own `latin1` is not Windows-1252 (€, “ ” and – differ).
 */
function source(
  path: string,
  start: number,
  encoding: TextEncoding,
  recordDelimiter: string | string[],
): Readable {
  const bytes = createReadStream(path, { start, highWaterMark: READ_BYTES });
  // Lines are counted at their last character: LF, or CR in a file of CR-only line ends.
  const lineEnd = recordDelimiter === '\r' ? 13 : 10;
  return Readable.from(
    encoding === 'utf-8' ? inSlices(bytes, lineEnd) : inSlices(decoded(bytes, encoding), lineEnd),
  );
}

/**
 * At most this many lines, or bytes, are given to csv-parse at once. csv-parse turns all
 * it is given into records at once, however many are still unread, so memory followed
 * what the file held (docs/benchmarks.md). A slice bounds
 * the records ahead of the reader, and the next one is asked for only when they are
 * read. A slice is at most a read (READ_BYTES) of ordinary rows.
 */
const SLICE_LINES = 1024;
const SLICE_BYTES = 64 * 1024;

async function* inSlices<T extends Buffer | string>(
  chunks: AsyncIterable<T>,
  lineEnd: number,
): AsyncGenerator<T> {
  const endChar = String.fromCharCode(lineEnd);
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string';
    for (let start = 0; start < chunk.length;) {
      const limit = Math.min(chunk.length, start + SLICE_BYTES);
      let end = limit;
      let from = start;
      for (let lines = 0; lines < SLICE_LINES; lines++) {
        const at = text ? chunk.indexOf(endChar, from) : (chunk as Buffer).indexOf(lineEnd, from);
        if (at < 0 || at >= limit) break;
        from = at + 1;
        if (lines === SLICE_LINES - 1) end = from;
      }
      // A character cut between two slices is safe: csv-parse decodes each field whole.
      yield (text ? chunk.slice(start, end) : (chunk as Buffer).subarray(start, end)) as T;
      start = end;
    }
  }
}

async function* decoded(bytes: AsyncIterable<Buffer>, encoding: TextEncoding) {
  const decoder = new TextDecoder(encoding);
  for await (const chunk of bytes) yield decoder.decode(chunk, { stream: true });
  const tail = decoder.decode();
  if (tail !== '') yield tail;
}

/**
 * Line breaks inside a record's fields (CRLF, LF or CR each count once): the record takes
 * its own line plus these. csv-parse's `info.lines` would count a quoted CRLF twice.
 */
function lineBreaksWithin(record: readonly string[]): number {
  let count = 0;
  for (const field of record) {
    if (field.indexOf('\n') < 0 && field.indexOf('\r') < 0) continue;
    for (let at = 0; at < field.length; at++) {
      const code = field.charCodeAt(at);
      if (code === 13) {
        count++;
        if (field.charCodeAt(at + 1) === 10) at++;
      } else if (code === 10) count++;
    }
  }
  return count;
}

/** Bytes of the first line, its end included (`sep=;` and CRLF, LF or CR). */
function hintLineBytes(head: Uint8Array): number {
  const lf = head.indexOf(10);
  const cr = head.indexOf(13);
  if (cr >= 0 && (lf < 0 || cr < lf)) return head[cr + 1] === 10 ? cr + 2 : cr + 1;
  return lf < 0 ? head.length : lf + 1;
}

/**
 * csv-parse builds an Error, stack trace and all, for every record whose width differs
 * from the first record's, even with relax_column_count; blank lines and trailing empty
 * headings make that every record. Its transform is synchronous, so stack capture is
 * turned off just for that call.
 */
function quietErrors(parser: Parser): Parser {
  const transform = parser._transform.bind(parser);
  parser._transform = (chunk, encoding, callback) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      transform(chunk, encoding, callback);
    } finally {
      Error.stackTraceLimit = limit;
    }
  };
  return parser;
}

/**
 * With relax_column_count, csv-parse still builds a CsvError for every record whose width
 * differs from the first record's (a blank line, a row without its trailing empty
 * columns), copying each of its contexts through JSON, for an error it then drops
 * (docs/benchmarks.md). The rows' widths are checked by the row validator, so the
 * parser is told each record is the width it expects. Reaches into csv-parse's
 * per-instance API; when that is not there, the parser is left as it is (slower, as right).
 */
function sameLengthRecords(parser: Parser): Parser {
  const api = (parser as unknown as { api?: Record<string, unknown> }).api;
  const onRecord = api?.['__onRecord'];
  const state = api?.['state'] as { record?: unknown[]; expectedRecordLength?: number } | undefined;
  if (typeof onRecord !== 'function' || !state || !api) return parser;
  api['__onRecord'] = function (this: unknown, ...args: unknown[]) {
    if (Array.isArray(state.record)) state.expectedRecordLength = state.record.length;
    return (onRecord as (...a: unknown[]) => unknown).apply(this, args);
  };
  return parser;
}

/** csv-parse's records of `input`, a batch at a time. */
async function* parsedRecords(input: Readable, options: Options): AsyncGenerator<string[][]> {
  const parser = quietErrors(sameLengthRecords(parse(options)));
  pipeline(input, parser, () => {
    // Errors reach the reader through the parser, which pipeline destroys with them.
  });
  try {
    yield* inBatches<string[]>(parser);
  } finally {
    input.destroy();
    parser.destroy();
  }
}

/**
 * The records of a file that holds no quote, as csv-parse reads them (with
 * skip_empty_lines off and relax_column_count on): each line ended by the record
 * delimiter is a record, an empty one `['']`, and a last line without an end is one
 * unless empty. A cell cannot hold a line break: the file's line ends are of one kind,
 * else all three kinds end records. A batch is at most SLICE_LINES records, so memory
 * does not follow what the file holds.
 */
async function* splitRecords(
  path: string,
  start: number,
  encoding: TextEncoding,
  delimiter: string,
  recordDelimiter: string | string[],
): AsyncGenerator<string[][]> {
  const ends = typeof recordDelimiter === 'string' ? recordDelimiter : undefined;
  let rest = '';
  let batch: string[][] = [];
  const tooLong = () =>
    Object.assign(new Error(`a record longer than ${MAX_LINE_CHARACTERS} characters`), {
      code: 'CSV_MAX_RECORD_SIZE',
    });
  for await (const chunk of decoded(chunksOf(path, start, READ_BYTES), encoding)) {
    const text = rest === '' ? chunk : rest + chunk;
    let from = 0;
    for (;;) {
      let end: number;
      let next: number;
      if (ends) {
        end = text.indexOf(ends, from);
        next = end + ends.length;
      } else {
        end = nextLineEnd(text, from);
        // A CR last in the text may be the first half of a CRLF: wait for the next chunk.
        if (end === text.length - 1 && text.charCodeAt(end) === 13) end = -1;
        next = end + (text.charCodeAt(end) === 13 && text.charCodeAt(end + 1) === 10 ? 2 : 1);
      }
      if (end < 0) break;
      if (end - from > MAX_LINE_CHARACTERS) {
        if (batch.length > 0) yield batch;
        throw tooLong();
      }
      batch.push(text.slice(from, end).split(delimiter));
      from = next;
      if (batch.length === SLICE_LINES) {
        yield batch;
        batch = [];
      }
    }
    rest = text.slice(from);
    if (rest.length > MAX_LINE_CHARACTERS) {
      if (batch.length > 0) yield batch;
      throw tooLong();
    }
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  // The CR held back for a CRLF that did not come ends the last record.
  const last = !ends && rest.endsWith('\r') ? rest.slice(0, -1) : rest;
  if (rest !== '') yield [last.split(delimiter)];
}

/** The first LF or CR at or after `from`, or -1. */
function nextLineEnd(text: string, from: number): number {
  for (let at = from; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 10 || code === 13) return at;
  }
  return -1;
}

/**
 * The parser's records, a batch at a time: whatever is buffered when the stream becomes
 * readable. One promise a batch instead of one a record (the stream's own iterator).
 */
async function* inBatches<T>(stream: Readable): AsyncGenerator<T[]> {
  for (;;) {
    const batch: T[] = [];
    for (let item = stream.read() as T | null; item !== null; item = stream.read() as T | null) {
      batch.push(item);
    }
    if (batch.length > 0) {
      yield batch;
      continue;
    }
    if (stream.errored) throw stream.errored;
    if (stream.readableEnded) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        stream.off('readable', onReadable);
        stream.off('end', onReadable);
        stream.off('error', settle);
        if (error) reject(error);
        else resolve();
      };
      const onReadable = () => settle();
      stream.on('readable', onReadable);
      stream.on('end', onReadable);
      stream.on('error', settle);
    });
  }
}

function describeParseError(error: unknown, line: number): Said {
  const code = (error as CsvError).code;
  if (typeof code === 'string' && !code.startsWith('CSV_') && code !== 'INVALID_OPENING_QUOTE') {
    return { code: 'fileUnreadable', errorCode: code };
  }
  if (code === 'CSV_QUOTE_NOT_CLOSED') return { code: 'quoteNotClosed', line };
  if (code === 'CSV_MAX_RECORD_SIZE') {
    return { code: 'recordTooLong', line, max: MAX_LINE_CHARACTERS };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { code: 'notCsv', line, detail };
}
