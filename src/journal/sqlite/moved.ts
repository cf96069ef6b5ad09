/**
 * The mark `journal copy` leaves in a SQLite journal it moved to PostgreSQL: every command
 * that works refuses the file from then on (a row queued in both journals would be paid by
 * each), and the read-only ones say where the journal went.
 */
import { JournalError } from '../journal-error.js';
import type { Database } from '../sqlite.js';

export interface Moved {
  /** The database's address, its password masked. */
  address: string;
  at: number;
}

/** The journal's mark, if it was moved; a journal older than the mark has none. */
export function movedOf(db: Database): Moved | undefined {
  const kept = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'moved'`);
  if (kept.get() === undefined) return undefined;
  return db.prepare('SELECT address, at FROM moved WHERE id = 1').get() as Moved | undefined;
}

export function markMoved(db: Database, moved: Moved): void {
  db.prepare('INSERT OR REPLACE INTO moved (id, address, at) VALUES (1, ?, ?)').run(
    moved.address,
    moved.at,
  );
}

export function unmarkMoved(db: Database): void {
  db.prepare('DELETE FROM moved WHERE id = 1').run();
}

/** Work refused on a journal moved to PostgreSQL, nothing written. */
export function movedRefusal(path: string, { address, at }: Moved): JournalError {
  return new JournalError('refused', `moved to ${address}`, {
    path,
    refusal: { code: 'journalMoved', address, at },
  });
}
