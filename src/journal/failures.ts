/**
 * SQLite failures of the journal that a person must act on, as sentences that say what
 * happened and what to do: a damaged journal and a full disk. Matched on SQLite's result
 * codes (better-sqlite3 puts them in `code`), never on message text.
 */
import { waysOn } from './loss.js';
import { restoreOf, sqliteJournalAt } from './open.js';

export type JournalFailureKind = 'damaged' | 'full';

export function journalFailureKind(error: unknown): JournalFailureKind | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'damaged';
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC')
    return 'full';
  return undefined;
}

/**
 * The sentence for a journal failure, or undefined when `error` is not one. `sent` says
 * whether requests may have left before it (a failure at open: none did).
 */
export function explainJournalFailure(
  error: unknown,
  journalPath: string,
  sent: 'nothing' | 'maybe',
): string | undefined {
  const kind = journalFailureKind(error);
  if (kind === undefined) return undefined;
  const what = (error as Error).message;
  const stopped =
    sent === 'nothing'
      ? 'nothing was sent'
      : 'nothing more is sent; requests in flight are left for the next run to resolve by lookup';
  if (kind === 'full') {
    return `the disk holding the journal ${journalPath} is full or failing to write (${what}): ${stopped}. Free space on that disk (df -h), then run again; the journal is kept as it is.`;
  }
  return `the journal ${journalPath} is damaged (${what}): ${stopped}. Do not delete it, and keep it for a person to look at. ${waysOn(
    restoreOf(sqliteJournalAt(journalPath)),
  )
    .replace('Either restore the right journal', 'Either restore the last good copy of it')
    .replace(
      'or run "payouts run --recover"',
      'or move it aside and run "payouts run --recover"',
    )}`;
}
