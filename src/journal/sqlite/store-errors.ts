/**
 * Where SQLite's failures become the journal's: the only reader of SQLite's result codes
 * (better-sqlite3 puts them in `code`). Everything the SQLite journal throws passes
 * through `journalErrorOf` at its edge (open.ts, sending-thread.ts), so what is above it
 * acts on a JournalError's kind and never on a store's codes.
 */
import { JournalError, type JournalErrorKind } from '../journal-error.js';

/** The kind of SQLite's result code `code`, an extended one (`SQLITE_IOERR_WRITE`) included. */
export function kindOfSqliteCode(code: string): JournalErrorKind {
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'damaged';
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC')
    return 'full';
  return 'unavailable';
}

/**
 * What the journal at `path` threw, as the JournalError its callers act on: its own as it
 * is; SQLite's by its code; anything else (its sending thread gone, say) as the journal
 * unavailable, for a failure below the journal is never a file's.
 */
export function journalErrorOf(error: unknown, path: string): JournalError {
  if (error instanceof JournalError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new JournalError(kindOfSqliteCode(code), message, {
      cause: error,
      storeCode: code,
      path,
    });
  }
  return new JournalError('unavailable', message, { cause: error, path });
}

/** `work`, whose failures are the journal's at `path`. */
export function asJournal<T>(path: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw journalErrorOf(error, path);
  }
}
