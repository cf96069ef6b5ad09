/**
 * `payouts journal compact --before DATE`, wired: the audit entries of finished batches
 * received before DATE appended to a dated archive CSV (synced before the journal lets
 * them go), then the freed space made usable (SQLite's WAL checkpointed, PostgreSQL's
 * audit vacuumed). Cut short, a run again picks up where it stopped:
 * the only entries that can be both in the archive and still in the journal are those of
 * the chunk it was writing, the archive's last, which are then deleted, not written twice.
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { safeCell } from '../csv/safe-cell.js';
import type { CompactOutcome, JournalBytes, MovedEntry } from '../journal/compaction.js';
import { openCompaction } from '../journal/open.js';
import type { JournalLocation } from '../journal/journal.js';
import { say } from '../messages/say.js';
import { inTimeZone, spreadsheetTime } from '../results/cells.js';
import { batchDay, BATCH_TIME_ZONE } from '../results/names.js';
import { catalogFor, csvDialectOf, type ResultFormat } from '../results/result-file.js';

/** The archive's columns; the entry number first, which a run cut short reads back. */
export const ARCHIVE_COLUMNS = [
  'entry',
  'orderId',
  'batch',
  'file',
  'line',
  'at',
  'from',
  'to',
  'reason',
] as const;

/** How far back a run cut short looks in the archive: many times one chunk's lines. */
const TAIL_BYTES = 16 * 1024 * 1024;

export interface Compacted extends CompactOutcome {
  archive: string;
  bytesBefore: JournalBytes;
  bytesAfter: JournalBytes;
  /** The freed space made usable: the WAL checkpointed, or the audit vacuumed. */
  settled: boolean;
}

/** `2026-06-01` as the instant that day begins where batches are dated (names.ts). */
export function dayStart(day: string): number {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const noon = new Date(Date.UTC(year, month - 1, date, 12));
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(inTimeZone(noon, BATCH_TIME_ZONE));
  const minutes = offset ? (offset[1] === '-' ? -1 : 1) * (+offset[2]! * 60 + +offset[3]!) : 0;
  return Date.UTC(year, month - 1, date) - minutes * 60_000;
}

/**
 * Finished batches received before `day`, in the journal at `location`: how many, and the
 * entries they would move (nothing is changed).
 */
export async function compactionPending(
  location: JournalLocation,
  day: string,
): Promise<{ batches: number; entries: number }> {
  const compaction = await openCompaction(location);
  try {
    const batches = await compaction.batchesBefore(dayStart(day));
    return { batches: batches.length, entries: batches.reduce((sum, b) => sum + b.entries, 0) };
  } finally {
    await compaction.close();
  }
}

/** Moves the entries out into `<archiveFolder>/<today>.csv`, then settles the journal. */
export async function compactJournal(
  location: JournalLocation,
  archiveFolder: string,
  day: string,
  { format, now }: { format: ResultFormat; now: number },
): Promise<Compacted> {
  mkdirSync(archiveFolder, { recursive: true });
  const exported = exportedTail(archiveFolder);
  const archive = join(archiveFolder, `${batchDay(now)}.csv`);
  const dialect = csvDialectOf(format.dialect);
  const words = catalogFor(format);
  const descriptor = openSync(archive, 'a+', 0o640);
  const compaction = await openCompaction(location).catch((error: unknown) => {
    closeSync(descriptor);
    throw error;
  });
  try {
    cutPartialLine(descriptor);
    const options = {
      delimiter: dialect.delimiter,
      record_delimiter: dialect.recordDelimiter,
    } as const;
    if (fstatSync(descriptor).size === 0) {
      writeSync(
        descriptor,
        (dialect.bom ? '\ufeff' : '') + stringify([[...ARCHIVE_COLUMNS]], options),
      );
    }
    const bytesBefore = await compaction.bytes();
    const outcome = await compaction.compact(dayStart(day), {
      archive,
      now,
      exported,
      exportEntries(entries: readonly MovedEntry[]) {
        const rows = entries.map((entry) =>
          [
            String(entry.id),
            entry.orderId,
            String(entry.batchId),
            entry.fileName,
            String(entry.line),
            spreadsheetTime(new Date(entry.at), format.timeZone),
            entry.from ?? '',
            entry.to,
            say(words, entry.reason),
          ].map(safeCell),
        );
        writeSync(descriptor, stringify(rows, options));
        // On disk before the transaction that deletes them commits.
        fsyncSync(descriptor);
      },
      pause: (heldMs) => new Promise((resolve) => setTimeout(resolve, Math.max(2, heldMs))),
    });
    const settled = await compaction.settle();
    return { ...outcome, archive, bytesBefore, bytesAfter: await compaction.bytes(), settled };
  } finally {
    await compaction.close();
    closeSync(descriptor);
  }
}

/** A run killed while writing leaves half a line: cut back to the last whole one. */
function cutPartialLine(descriptor: number): void {
  const size = fstatSync(descriptor).size;
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, TAIL_BYTES));
  readSync(descriptor, tail, 0, tail.length, size - tail.length);
  const end = tail.lastIndexOf(0x0a);
  if (end === tail.length - 1) return;
  ftruncateSync(descriptor, end < 0 ? 0 : size - tail.length + end + 1);
}

/** The entry numbers of the newest archive's last lines. */
function exportedTail(archiveFolder: string): Set<number> {
  const newest = readdirSync(archiveFolder)
    .filter((name) => /^\d{4}-\d{2}-\d{2}\.csv$/.test(name))
    .sort()
    .at(-1);
  const ids = new Set<number>();
  if (!newest) return ids;
  const descriptor = openSync(join(archiveFolder, newest), 'r');
  try {
    const size = fstatSync(descriptor).size;
    const tail = Buffer.alloc(Math.min(size, TAIL_BYTES));
    readSync(descriptor, tail, 0, tail.length, size - tail.length);
    // Only whole lines: the first may be cut by the window, the last by a kill.
    const lines = tail.toString('utf8').split('\n').slice(1, -1);
    for (const line of lines) {
      const id = /^(\d+)[;,]/.exec(line)?.[1];
      if (id) ids.add(Number(id));
    }
  } finally {
    closeSync(descriptor);
  }
  return ids;
}
