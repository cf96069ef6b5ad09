/**
 * The journal's view: a copy of the journal the service writes for its `sharedGroup`
 * (the journal itself is owner-only), so that an accountant's `validate` weighs a file
 * against what the service has paid without opening the journal. Written whole beside
 * its name and renamed into place, so a reader sees one complete copy or the one before.
 */
import { chmodSync, chownSync, rmSync, renameSync, statSync } from 'node:fs';
import { Database } from '../sqlite.js';

/** The group may read it; nobody but the owner writes it. */
const VIEW_MODE = 0o640;

/**
 * Writes the view of the journal at `journalPath` when the journal has changed since
 * the view was written (its newest audit entry is another); says whether it wrote one.
 */
export function writeJournalView(journalPath: string, viewPath: string, gid: number): boolean {
  const journal = new Database(journalPath, { readonly: true, fileMustExist: true });
  try {
    const newest = newestAuditOf(journal);
    if (statSync(viewPath, { throwIfNoEntry: false }) !== undefined) {
      const view = new Database(viewPath, { readonly: true, fileMustExist: true });
      try {
        if (newestAuditOf(view) === newest) return false;
      } finally {
        view.close();
      }
    }
    const next = `${viewPath}.next`;
    // What a process that stopped halfway left: VACUUM INTO writes only a new file.
    rmSync(next, { force: true });
    // One read of the journal (a consistent copy, writers not held up), in rollback mode:
    // a reader who may not write in the home can open it.
    journal.prepare(`VACUUM INTO ?`).run(next);
    chownSync(next, -1, gid);
    chmodSync(next, VIEW_MODE);
    renameSync(next, viewPath);
    return true;
  } finally {
    journal.close();
  }
}

function newestAuditOf(db: InstanceType<typeof Database>): number {
  return (db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM audit`).get() as { id: number }).id;
}
