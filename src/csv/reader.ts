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
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { formatCents } from './amount.js';
import { detectDelimiter, type Delimiter } from './delimiter.js';
import { looksBinary, readBom, type EncodingSetting, type TextEncoding } from './encoding.js';
import { mapHeader, type PayoutField } from './header.js';
import { batchStem } from './order-id.js';
import { createRowValidator, type RowOutcome } from './row.js';
import { checkControlTotals, parseControlFile, type ControlTotal } from './totals.js';

export interface ReadOptions {
  encoding: EncodingSetting;
  maxFileBytes: number;
  maxPayoutCents: number;
  maxFileCents: number;
}

export interface FileProblem {
  /** `unusable`: the file cannot be read as payouts. `held`: readable, but nothing may be paid. */
  kind: 'unusable' | 'held';
  message: string;
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
        columns: { field: PayoutField; heading: string }[];
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
  problems: FileProblem[];
}

/** Longer lines are damage, not payouts: a 50 MB line is refused in its first 100 kB. */
export const MAX_LINE_CHARACTERS = 100_000;
const HEAD_BYTES = 64 * 1024;
const CHUNK_BYTES = 256 * 1024;

export async function readPayoutFile(
  path: string,
  options: ReadOptions,
  onRow: (row: RowOutcome) => void | Promise<void>,
): Promise<FileReport> {
  const report: FileReport = {
    file: path,
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
    problems: [],
  };
  const unusable = (message: string) => {
    report.problems.push({ kind: 'unusable', message });
    return report;
  };

  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return unusable('is not a file');
    size = info.size;
  } catch (error) {
    return unusable(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  report.bytes = size;
  if (size === 0) return unusable('is empty (0 bytes)');
  if (size > options.maxFileBytes) {
    return unusable(
      `is ${size} bytes, over the limit of ${options.maxFileBytes} (maxFileBytes): split it, or raise the limit`,
    );
  }

  const sniffed = await sniff(path);
  report.sha256 = sniffed.sha256;
  const bom = readBom(sniffed.head);
  if (!bom && looksBinary(sniffed.head)) {
    return unusable(
      'is not a CSV text file: it holds NUL bytes (is it an .xlsx workbook, or UTF-16 without a byte-order mark?); save it as "CSV UTF-8" or "CSV (separated by semicolons)"',
    );
  }
  let encoding: TextEncoding;
  if (bom) encoding = bom.encoding;
  else if (options.encoding === 'utf-8') {
    if (sniffed.invalidUtf8At !== undefined) {
      return unusable(
        `is not valid UTF-8 (first bad byte near offset ${sniffed.invalidUtf8At}) but encoding is set to utf-8: use auto or windows-1252`,
      );
    }
    encoding = 'utf-8';
  } else if (options.encoding === 'windows-1252' || options.encoding === 'latin1') {
    encoding = 'windows-1252';
  } else {
    encoding = sniffed.invalidUtf8At === undefined ? 'utf-8' : 'windows-1252';
  }
  report.encoding = encoding;

  const headText = new TextDecoder(encoding).decode(sniffed.head.subarray(bom?.length ?? 0));
  const { delimiter, hintLine } = detectDelimiter(headText);
  report.delimiter = delimiter;

  const parser = source(path, bom?.length ?? 0, encoding).pipe(
    parse({
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      max_record_size: MAX_LINE_CHARACTERS,
    }),
  );

  const stem = batchStem(basename(path));
  let validator: ReturnType<typeof createRowValidator> | undefined;
  let nextLine = 1;
  let line = 1;
  try {
    for await (const batch of inBatches<string[]>(parser)) {
      for (const record of batch) {
        line = nextLine;
        nextLine += 1 + lineBreaksWithin(record);
        if (line === 1 && hintLine) continue;
        if (!validator) {
          if (record.every((cell) => cell.trim() === '')) continue;
          const header = mapHeader(record);
          if (!header.ok) {
            for (const problem of header.problems)
              unusable(`line ${line} (the header): ${problem}`);
            return report;
          }
          report.header = {
            line,
            columns: Object.entries(header.columns).map(([field, column]) => ({
              field: field as PayoutField,
              heading: column.heading,
            })),
            ignored: header.ignored,
            orderIdsDerived: !header.columns.orderId,
          };
          validator = createRowValidator({
            columns: header.columns,
            headingCount: record.length,
            stem,
            maxPayoutCents: options.maxPayoutCents,
          });
          continue;
        }
        const outcome = validator.check(record, line);
        if (outcome.kind === 'valid') {
          report.valid++;
          report.totalCents += outcome.payout.valueCents;
        } else if (outcome.kind === 'invalid') report.invalid++;
        else if (outcome.kind === 'skipped') report.skipped++;
        else report.blank++;
        // Awaited only when it is a promise: a tick per row is measurable on a million rows.
        const handled = onRow(outcome);
        if (handled) await handled;
      }
    }
  } catch (error) {
    parser.destroy();
    return unusable(describeParseError(error, nextLine));
  }
  report.rows = report.valid + report.invalid;

  if (!validator) return unusable('has no header row (only blank lines)');
  if (report.rows === 0) return unusable('has a header but no payout rows');

  const controls: ControlTotal[] = [];
  const totals = validator.totals();
  if (totals.trailingTotal?.cents !== undefined) {
    controls.push({
      source: `the total line (line ${totals.trailingTotal.line})`,
      cents: totals.trailingTotal.cents,
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
      message: `its valid rows add up to ${formatCents(report.totalCents)}, over the limit of ${formatCents(options.maxFileCents)} per file (maxFileCents)`,
    });
  }
  return report;
}

/** One pass over the bytes: the fingerprint, the first bytes, and whether it is valid UTF-8. */
async function sniff(
  path: string,
): Promise<{ sha256: string; head: Uint8Array; invalidUtf8At: number | undefined }> {
  const hash = createHash('sha256');
  let head: Uint8Array | undefined;
  let offset = 0;
  let invalidUtf8At: number | undefined;
  // A character cut between two chunks: its first bytes, checked with the next chunk.
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, {
    highWaterMark: CHUNK_BYTES,
  }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    head ??= chunk.subarray(0, HEAD_BYTES);
    if (invalidUtf8At === undefined) {
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const cut = bytes.length - incompleteTail(bytes);
      if (!isUtf8(bytes.subarray(0, cut))) invalidUtf8At = offset - carry.length;
      carry = Buffer.from(bytes.subarray(cut));
    }
    offset += chunk.length;
  }
  if (invalidUtf8At === undefined && carry.length > 0) invalidUtf8At = offset - carry.length;
  return { sha256: hash.digest('hex'), head: head ?? new Uint8Array(), invalidUtf8At };
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
function source(path: string, start: number, encoding: TextEncoding): Readable {
  const bytes = createReadStream(path, { start, highWaterMark: CHUNK_BYTES });
  if (encoding === 'utf-8') return bytes;
  return Readable.from(decoded(bytes, encoding));
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

function describeParseError(error: unknown, line: number): string {
  const code = (error as CsvError).code;
  if (code === 'CSV_QUOTE_NOT_CLOSED') {
    return `line ${line}: a quote opened here is never closed, so the rest of the file cannot be read (was the file cut short?)`;
  }
  if (code === 'CSV_MAX_RECORD_SIZE') {
    return `line ${line} is longer than ${MAX_LINE_CHARACTERS} characters: this is not a payout file, or a quote is missing`;
  }
  return `line ${line} cannot be read as CSV: ${error instanceof Error ? error.message : String(error)}`;
}
