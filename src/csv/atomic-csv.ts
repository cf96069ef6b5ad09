/**
 * A CSV file written beside its final name and renamed into place once complete, so a
 * reader (a person's spreadsheet, a script) never sees half a file.
 */
import { once } from 'node:events';
import { closeSync, createWriteStream, fsyncSync, openSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { syncFolderOf } from '../runtime/sync-folder.js';

export interface CsvDialect {
  delimiter: string;
  /** A UTF-8 byte-order mark first: spreadsheets then read the accents right. */
  bom: boolean;
  recordDelimiter: 'unix' | 'windows';
}

const PLAIN: CsvDialect = { delimiter: ',', bom: false, recordDelimiter: 'unix' };

export interface AtomicCsv {
  write(line: readonly string[]): Promise<void>;
  /** Renames the complete file into place. */
  commit(): Promise<void>;
  /** Removes the unfinished file; the final name keeps what it had. */
  abandon(): Promise<void>;
}

/** Opens `path`'s temporary twin; throws the system error when it cannot be created. */
export function openAtomicCsv(
  path: string,
  columns: readonly string[],
  dialect: CsvDialect = PLAIN,
): AtomicCsv {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const descriptor = openSync(temporary, 'w', 0o644);
  // Kept open after the stream ends, to be synced before the rename.
  const file = createWriteStream(temporary, { fd: descriptor, autoClose: false });
  let closed = false;
  const close = () => {
    if (!closed) closeSync(descriptor);
    closed = true;
  };
  const csv = stringify({
    header: true,
    columns: [...columns],
    delimiter: dialect.delimiter,
    bom: dialect.bom,
    record_delimiter: dialect.recordDelimiter,
  });
  // A write error destroys both, so a wait for 'drain' ends in that error, not forever.
  const written = pipeline(csv, file);
  written.catch(() => undefined);
  return {
    async write(line) {
      if (!csv.write(line)) await once(csv, 'drain');
    },
    async commit() {
      csv.end();
      await written;
      // On disk before it takes the name, and the name on disk after: a power cut leaves
      // the old file or the new one, never an empty one.
      fsyncSync(descriptor);
      close();
      try {
        await rename(temporary, path);
      } catch (error) {
        // The rows (people's names and documents) must not stay behind under a temporary name.
        await rm(temporary, { force: true });
        throw error;
      }
      syncFolderOf(path);
    },
    async abandon() {
      csv.destroy();
      file.destroy();
      close();
      await rm(temporary, { force: true });
    },
  };
}
