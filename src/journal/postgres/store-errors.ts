/**
 * Where PostgreSQL's failures become the journal's: the only reader of its SQLSTATE codes
 * (node-postgres puts them in `code`) and of the socket's errors beneath it. Everything
 * the PostgreSQL journal throws passes through `journalErrorOf` at its edge (open.ts).
 */
import { JournalError, type JournalErrorKind } from '../journal-error.js';
import { timeoutOf } from './connection.js';

/** The kind of an SQLSTATE (five characters: its class is the first two). */
export function kindOfSqlState(code: string): JournalErrorKind {
  // disk_full, and out of memory or too many connections (class 53) otherwise.
  if (code === '53100') return 'full';
  // invalid_catalog_name: the database dropped, or never made.
  if (code === '3D000') return 'missing';
  // data_corrupted, index_corrupted.
  if (code === 'XX001' || code === 'XX002') return 'damaged';
  // undefined_table, undefined_column: the schema says migrated, so a part of it was dropped.
  if (code === '42P01' || code === '42703') return 'damaged';
  // Integrity (23: a unique orderId, a foreign key) and data errors (22) are a write the
  // journal's rules let through: refused, never retried as if the server were away.
  if (code.startsWith('23') || code.startsWith('22')) return 'refused';
  return 'unavailable';
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * What the journal at `address` threw, as the JournalError its callers act on: its own as
 * it is; PostgreSQL's by its SQLSTATE; anything else (a refused or reset connection, a
 * pool closed, no answer in time) as the journal unavailable, for a failure below the
 * journal is never a file's.
 */
export function journalErrorOf(error: unknown, address: string): JournalError {
  if (error instanceof JournalError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && SQLSTATE.test(code)) {
    return new JournalError(kindOfSqlState(code), message, {
      cause: error,
      storeCode: code,
      path: address,
    });
  }
  // No answer in time is the server out of reach, said with the bound it had.
  return new JournalError('unavailable', timeoutOf(error) ?? message, {
    cause: error,
    ...(typeof code === 'string' && { storeCode: code }),
    path: address,
  });
}
