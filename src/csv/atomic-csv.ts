/**
 * A CSV file written beside its final name and renamed into place once complete, so a
 * reader (a person's spreadsheet, a script) never sees half a file.
 */
import { once } from 'node:events';
import { createWriteStream, openSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';

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
  const file = createWriteStream(temporary, { fd: openSync(temporary, 'w', 0o644) });
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
      await rename(temporary, path);
    },
    async abandon() {
      csv.destroy();
      file.destroy();
      await rm(temporary, { force: true });
    },
  };
}
