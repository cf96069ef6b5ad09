/**
 * The one way to open a journal, by its location: for work (made when new, brought up
 * to date, written), or read only (nothing made, migrated or written). Only the store's
 * adapter (sqlite/, postgres/) reads or writes the store itself.
 */
import type { Journal, JournalLocation, JournalState } from './journal.js';
import {
  openPostgresJournal,
  openPostgresJournalReadOnly,
  postgresJournalState,
  type PostgresJournalOptions,
} from './postgres/open.js';
import {
  openSqliteJournal,
  openSqliteJournalReadOnly,
  sqliteJournalMoved,
  sqliteJournalState,
  type JournalOptions as SqliteJournalOptions,
} from './sqlite/open.js';
import type { Moved } from './sqlite/moved.js';
import type { Compaction } from './compaction.js';
import { openPostgresCompaction } from './postgres/compact.js';
import { openSqliteCompaction } from './sqlite/compact.js';

/** What opening a journal for work takes: each store reads what concerns it. */
export type JournalOptions = SqliteJournalOptions &
  Pick<PostgresJournalOptions, 'concurrency' | 'onSending'>;
export { journalAddress } from './location.js';

export async function openJournal(
  location: JournalLocation,
  options: JournalOptions = {},
): Promise<Journal> {
  return location.kind === 'sqlite'
    ? openSqliteJournal(location.path, options)
    : openPostgresJournal(location, options);
}

export async function openJournalReadOnly(
  location: JournalLocation,
  now: () => number,
): Promise<Journal> {
  return location.kind === 'sqlite'
    ? openSqliteJournalReadOnly(location.path, now)
    : openPostgresJournalReadOnly(location);
}

/** Whether there is a journal at the location, asked of its store, which is left as it was. */
export async function journalState(location: JournalLocation): Promise<JournalState> {
  return location.kind === 'sqlite'
    ? sqliteJournalState(location.path)
    : postgresJournalState(location);
}

/** Where journal copy moved the journal, if it did: every command that works refuses it. */
export function journalMoved(location: JournalLocation): Moved | undefined {
  return location.kind === 'sqlite' ? sqliteJournalMoved(location.path) : undefined;
}

/** The journal at `location` (brought up to date beforehand), opened for `journal compact`. */
export function openCompaction(location: JournalLocation): Promise<Compaction> {
  return location.kind === 'sqlite'
    ? Promise.resolve(openSqliteCompaction(location.path))
    : openPostgresCompaction(location.url);
}

/** The SQLite journal in this file. */
export function sqliteJournalAt(path: string): Extract<JournalLocation, { kind: 'sqlite' }> {
  return { kind: 'sqlite', path };
}
