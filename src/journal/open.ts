/**
 * The one way to open a journal, by its location: for work (made when new, brought up
 * to date, written), or read only (nothing made, migrated or written). Only the store's
 * adapter (sqlite/) reads or writes the store itself.
 */
import type { Journal, JournalLocation, JournalState } from './journal.js';
import {
  openSqliteJournal,
  openSqliteJournalReadOnly,
  sqliteJournalMoved,
  sqliteJournalState,
  type JournalOptions,
} from './sqlite/open.js';
import type { Moved } from './sqlite/moved.js';

export type { JournalOptions } from './sqlite/open.js';

export function openJournal(location: JournalLocation, options: JournalOptions = {}): Journal {
  return openSqliteJournal(location.path, options);
}

export function openJournalReadOnly(location: JournalLocation, now: () => number): Journal {
  return openSqliteJournalReadOnly(location.path, now);
}

/** Whether there is a journal at the location, asked of its store, which is left as it was. */
export function journalState(location: JournalLocation): JournalState {
  return sqliteJournalState(location.path);
}

/** Where journal copy moved the journal, if it did: every command that works refuses it. */
export function journalMoved(location: JournalLocation): Moved | undefined {
  return sqliteJournalMoved(location.path);
}

/** Where the journal is, as a person finds it (a file's path), before it is opened. */
export function journalAddress(location: JournalLocation): string {
  return location.path;
}

/** The SQLite journal in this file. */
export function sqliteJournalAt(path: string): JournalLocation {
  return { kind: 'sqlite', path };
}
