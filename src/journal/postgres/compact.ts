/**
 * `payouts journal compact`, the PostgreSQL journal's side (../compaction.ts): a chunk's
 * entries read outside any transaction, deleted in one short transaction that first locks
 * the batch's row (FOR SHARE: a `payouts retry` opening it again waits for the commit, or
 * has committed and the chunk is left), then the audit vacuumed.
 */
import pg from 'pg';
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
import { reasonOf } from '../sqlite/context.js';
import { inTransaction, onPool, poolFor } from './connection.js';
import { statement } from './sql.js';

/** VACUUM of a large audit outlasts a statement's usual bound; it blocks no writer. */
const VACUUM_BOUND_MS = 10 * 60_000;

/** The newest entry stays: its id is the high water journal.marker compares. */
const NOT_NEWEST = `a.id < (SELECT MAX(id) FROM audit)`;

const statements = {
  batches: statement<{ before: number }>(
    'compact-batches',
    `SELECT b.id, COUNT(a.id)::bigint AS entries FROM batches b
     JOIN payouts p ON p.batch_id = b.id JOIN audit a ON a.payout_id = p.id
     WHERE b.state = 'done' AND b.received_at < @before AND ${NOT_NEWEST}
     GROUP BY b.id ORDER BY b.id`,
  ),
  // The next payouts of a batch in file order, after the cursor (line, id).
  payouts: statement<{ batchId: number; line: number; id: number; limit: number }>(
    'compact-payouts',
    `SELECT id, line FROM payouts WHERE batch_id = @batchId AND (line, id) > (@line, @id)
     ORDER BY line, id LIMIT @limit`,
  ),
  entries: statement<{ ids: number[] }>(
    'compact-entries',
    `SELECT a.id, p.order_id, p.batch_id, b.file_name, p.line, a.at, a.from_state,
       a.to_state, a.reason
     FROM audit a JOIN payouts p ON p.id = a.payout_id JOIN batches b ON b.id = p.batch_id
     WHERE a.payout_id = ANY(@ids::bigint[]) AND ${NOT_NEWEST}
     ORDER BY p.line, p.id, a.id`,
  ),
  stateOf: statement<{ batchId: number }>(
    'compact-state-of',
    `SELECT state FROM batches WHERE id = @batchId FOR SHARE`,
  ),
  remove: statement<{ ids: number[] }>(
    'compact-remove',
    `DELETE FROM audit a WHERE a.id = ANY(@ids::bigint[]) AND ${NOT_NEWEST}`,
  ),
  // Once per archive file: a run cut short and run again the next day adds the second.
  recordMoved: statement<{ batchId: number; at: number; detail: string }>(
    'compact-record-moved',
    `INSERT INTO batch_events (batch_id, at, event, by, detail)
     SELECT @batchId, @at, '${COMPACTED_EVENT}', '${COMPACTED_BY}', @detail
     WHERE NOT EXISTS (SELECT 1 FROM batch_events WHERE batch_id = @batchId
       AND event = '${COMPACTED_EVENT}' AND detail = @detail)`,
  ),
  // The journal's tables (this schema's), each with its indexes and TOAST.
  bytes: statement(
    'compact-bytes',
    `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS tables,
       pg_total_relation_size('audit')::bigint AS audit
     FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`,
  ),
};

/** Opens the PostgreSQL journal at `url` (brought up to date beforehand) for compaction. */
export async function openPostgresCompaction(url: string): Promise<Compaction> {
  const pool = poolFor(url, 1);
  const pooled = onPool(pool);

  /** A chunk's entries, in file order. */
  const read = async (batchId: number, cursor: ChunkCursor) => {
    const payouts = await pooled.rows<
      { id: number; line: number },
      { batchId: number; line: number; id: number; limit: number }
    >(statements.payouts, { batchId, ...cursor, limit: PAYOUTS_PER_CHUNK });
    const ids = payouts.map((payout) => payout.id);
    const entries =
      ids.length === 0
        ? []
        : (await pooled.rows<EntryRow, { ids: number[] }>(statements.entries, { ids })).map((row) =>
            movedEntryOf(row, reasonOf(row.reason)),
          );
    return { last: payouts.at(-1), entries };
  };

  /** Deletes exported entries in one short transaction, if their batch is still done. */
  const remove = (batchId: number, ids: number[], moved: { at: number; detail: string }) =>
    inTransaction(pool, async (tx) => {
      const [batch] = await tx.rows<{ state: string }, { batchId: number }>(statements.stateOf, {
        batchId,
      });
      if (batch?.state !== 'done') return false;
      await tx.count(statements.remove, { ids });
      await tx.count(statements.recordMoved, { batchId, ...moved });
      return true;
    });

  const batchesBefore = (before: number) =>
    pooled.rows<{ id: number; entries: number }, { before: number }>(statements.batches, {
      before,
    });

  return {
    batchesBefore,
    compact: (before, options) =>
      compactBatches({ batchesBefore, readChunk: read, removeChunk: remove }, before, options),
    async settle() {
      // A connection of its own: the pool's bound every statement by STATEMENT_TIMEOUT_MS.
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: 10_000,
        statement_timeout: VACUUM_BOUND_MS,
        query_timeout: VACUUM_BOUND_MS + 5_000,
      });
      try {
        await client.connect();
        await client.query('VACUUM (ANALYZE) audit');
        return true;
      } catch {
        // Autovacuum does the same later; the compaction itself is done.
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    async bytes() {
      const [row] = await pooled.rows<{ tables: number; audit: number }, object>(
        statements.bytes,
        {},
      );
      return { kind: 'postgres', tables: row?.tables ?? 0, audit: row?.audit ?? 0 };
    },
    close: () => pool.end(),
  };
}
