/**
 * A CSV file written beside its final name and renamed into place once complete, so a
 * reader (a person's spreadsheet, a script) never sees half a file.
 */
import { once } from 'node:events';
import { closeSync, createWriteStream, fsyncSync, openSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { syncFolderOf } from '../runtime/sync-folder.js';

export interface CsvDialect {
  delimiter: string;
  /** A UTF-8 byte-order mark first: spreadsheets then read the accents right. */
  bom: boolean;
  recordDelimiter: 'unix' | 'windows';
}

const PLAIN: CsvDialect = { delimiter: ',', bom: false, recordDelimiter: 'unix' };

export interface AtomicCsv {
  /** A promise only when the record filled a chunk: then await it before the next write. */
  write(line: readonly string[]): Promise<void> | undefined;
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
  // A write error ends a wait for 'drain' in that error, not forever.
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  failed.catch(() => undefined);
  const eol = dialect.recordDelimiter === 'windows' ? '\r\n' : '\n';
  const { delimiter } = dialect;
  const quoting = quotingOf(delimiter);
  const record = (line: readonly string[]) => {
    let text = '';
    for (let i = 0; i < line.length; i++) {
      const cell = line[i]!;
      if (i > 0) text += delimiter;
      text += quoting.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
    }
    return text + eol;
  };
  // Records are joined into chunks of about CHUNK characters: a stream write per record
  // cost more than the record's own text (docs/benchmarks.md, follow).
  let chunk = (dialect.bom ? '\ufeff' : '') + record(columns);
  const flush = async () => {
    const text = chunk;
    chunk = '';
    if (!file.write(text)) await Promise.race([once(file, 'drain'), failed]);
  };
  return {
    write(line) {
      chunk += record(line);
      return chunk.length >= CHUNK ? flush() : undefined;
    },
    async commit() {
      await flush();
      file.end();
      await Promise.race([finished(file), failed]);
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
      file.destroy();
      close();
      await rm(temporary, { force: true });
    },
  };
}

/** Characters of records gathered before they are written. */
const CHUNK = 64 * 1024;

/**
 * Which cells RFC 4180 (and csv-stringify) quote, their quotes doubled: those holding the
 * delimiter, a quote or a line break.
 */
function quotingOf(delimiter: string): RegExp {
  return new RegExp(`["\\r\\n${delimiter.replace(/[\\^\]-]/g, '\\$&')}]`);
}
