/**
 * `payouts journal compact`, the SQLite journal's side (../compaction.ts): a chunk's
 * entries read without the write lock, deleted in one IMMEDIATE transaction, then the WAL
 * checkpointed.
 */
import { statSync } from 'node:fs';
import {
  COMPACTED_BY,
  COMPACTED_EVENT,
  PAYOUTS_PER_CHUNK,
  compactBatches,
  movedEntryOf,
  type ChunkCursor,
  type Compaction,
  type EntryRow,
} from '../compaction.js';
import { connect } from './connection.js';
import { reasonOf } from './context.js';

/** Opens the SQLite journal at `path` (brought up to date beforehand) for compaction. */
export function openSqliteCompaction(path: string): Compaction {
  const db = connect(path);
  const statements = {
    batches: db.prepare<[number], { id: number; entries: number }>(`
      SELECT b.id, COUNT(a.id) AS entries FROM batches b
      JOIN payouts p ON p.batch_id = b.id JOIN audit a ON a.payout_id = p.id
      WHERE b.state = 'done' AND b.received_at < ? AND a.id < (SELECT MAX(id) FROM audit)
      GROUP BY b.id ORDER BY b.id`),
    stateOf: db.prepare<[number], { state: string }>(`SELECT state FROM batches WHERE id = ?`),
    // The next payouts of a batch in file order, after the cursor (line, id).
    payouts: db.prepare<
      { batchId: number; line: number; id: number; limit: number },
      { id: number; line: number }
    >(`
      SELECT id, line FROM payouts
      WHERE batch_id = @batchId AND (line > @line OR (line = @line AND id > @id))
      ORDER BY line, id LIMIT @limit`),
    // The journal's newest entry stays: its id is the high water journal.marker compares,
    // and SQLite numbers the next entry after the highest left.
    entries: db.prepare<[string], EntryRow>(`
      SELECT a.id, p.order_id, p.batch_id, b.file_name, p.line, a.at, a.from_state,
        a.to_state, a.reason
      FROM json_each(?) j JOIN audit a ON a.payout_id = j.value
      JOIN payouts p ON p.id = a.payout_id JOIN batches b ON b.id = p.batch_id
      WHERE a.id < (SELECT MAX(id) FROM audit)
      ORDER BY p.line, p.id, a.id`),
    remove: db.prepare<[string]>(`
      DELETE FROM audit WHERE id IN (SELECT value FROM json_each(?))
        AND id < (SELECT MAX(id) FROM audit)`),
    // Once per archive file: a run cut short and run again the next day adds the second.
    recordMoved: db.prepare<{ batchId: number; at: number; detail: string }>(`
      INSERT INTO batch_events (batch_id, at, event, by, detail)
      SELECT @batchId, @at, '${COMPACTED_EVENT}', '${COMPACTED_BY}', @detail
      WHERE NOT EXISTS (SELECT 1 FROM batch_events WHERE batch_id = @batchId
        AND event = '${COMPACTED_EVENT}' AND detail = @detail)`),
  };

  /** A chunk's entries (read outside any write lock), in file order. */
  const read = (batchId: number, cursor: ChunkCursor) => {
    const payouts = statements.payouts.all({
      batchId,
      line: cursor.line,
      id: cursor.id,
      limit: PAYOUTS_PER_CHUNK,
    });
    const entries = statements.entries
      .all(JSON.stringify(payouts.map((payout) => payout.id)))
      .map((row) => movedEntryOf(row, reasonOf(row.reason)));
    return { last: payouts.at(-1), entries };
  };

  /** Deletes exported entries in one short write transaction, if their batch is still done. */
  const remove = db.transaction(
    (batchId: number, ids: readonly number[], moved: { at: number; detail: string }): boolean => {
      // `payouts retry` may have opened it again since the chunk was read.
      if (statements.stateOf.get(batchId)?.state !== 'done') return false;
      statements.remove.run(JSON.stringify(ids));
      statements.recordMoved.run({ batchId, ...moved });
      return true;
    },
  );

  const batchesBefore = async (before: number) => statements.batches.all(before);

  return {
    batchesBefore,
    compact: (before, options) =>
      compactBatches(
        {
          batchesBefore,
          readChunk: read,
          removeChunk: (batchId, ids, moved) => remove.immediate(batchId, ids, moved),
        },
        before,
        options,
      ),
    async settle() {
      // TRUNCATE empties the WAL file when no reader is still on its pages (a daemon
      // mid-read): then it says busy, and the next checkpoint finishes the job. It holds
      // writers back while it waits for readers, so it waits a moment, not BUSY_WAIT_MS.
      db.pragma('busy_timeout = 250');
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return result?.busy === 0;
    },
    async bytes() {
      const size = (file: string) => {
        try {
          return statSync(file).size;
        } catch {
          return 0;
        }
      };
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const freePages = db.pragma('freelist_count', { simple: true }) as number;
      return {
        kind: 'sqlite',
        file: size(path),
        wal: size(`${path}-wal`),
        free: pageSize * freePages,
      };
    },
    close: async () => {
      db.close();
    },
  };
}
