/**
 * What `payouts doctor` reports of a journal file, read without changing it: a journal
 * of any schema, older or newer than this payouts, may be looked at.
 */
import { Database, SQLITE_BINDING } from '../sqlite.js';
import type { GatewayKind } from '../types.js';
import { asJournal } from './store-errors.js';

/** Which store holds the journal, in words. */
export const JOURNAL_STORE = `SQLite through ${SQLITE_BINDING}`;

export interface JournalFileFacts {
  schema: number;
  /** The kind of gateway it has sent to, if it has sent. */
  gatewayKind: GatewayKind | undefined;
}

export function readJournalFacts(path: string): JournalFileFacts {
  return asJournal(path, () => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const schema = db.pragma('user_version', { simple: true }) as number;
      const hasGateway =
        db
          .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'gateway'`)
          .get() !== undefined;
      const gatewayKind = hasGateway
        ? (
            db.prepare(`SELECT kind FROM gateway WHERE id = 1`).get() as
              { kind: GatewayKind } | undefined
          )?.kind
        : undefined;
      return { schema, gatewayKind };
    } finally {
      db.close();
    }
  });
}
