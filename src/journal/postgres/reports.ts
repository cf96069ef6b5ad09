/**
 * The reports a result file and `payouts status` are written from, on the PostgreSQL
 * journal: what became of a batch's lines, counted in SQL (a file may have a million
 * rows), its result lines a page at a time, the batches a refund shows in, and how long a
 * batch's payouts have been pending. Each is one statement, read as the SQLite store's.
 */
import type { Journal } from '../journal.js';
import type { RowState } from '../states.js';
import type { LineOutcome } from '../types.js';
import {
  RESULT_ENTRIES,
  toPayee,
  toResultEntry,
  totalsOf,
  type PayeeRow,
  type ResultLineRow,
} from '../sqlite/reports.js';
import type { Runner } from './connection.js';
import { toPayout, type PayoutRow } from './rows.js';
import { statement } from './sql.js';

type Reports = Pick<
  Journal,
  | 'rowTotalsOfBatch'
  | 'resultEntries'
  | 'payeesOfBatch'
  | 'batchesShowingRefundedSince'
  | 'countsOfBatch'
  | 'pendingSentBefore'
>;

const statements = {
  // A line that is not a payout counts as its kind: a replay or a held orderId of another
  // file never counts as what became of that file's payout (it was not paid by this one).
  rowTotalsOfBatch: statement<{ batchId: number }>(
    'row-totals-of-batch',
    `SELECT state AS key, COUNT(*)::bigint AS n, SUM(value_cents)::bigint AS cents
     FROM payouts WHERE batch_id = @batchId GROUP BY state
     UNION ALL
     SELECT kind AS key, COUNT(*)::bigint AS n, 0::bigint AS cents
     FROM batch_lines WHERE batch_id = @batchId GROUP BY kind`,
  ),
  resultEntries: statement<{ batchId: number; after: number; limit: number }>(
    'result-entries',
    RESULT_ENTRIES,
  ),
  // The request's fields from its columns, or from its own text where one was kept.
  payeesOfBatch: statement<{ batchId: number; after: number; limit: number }>(
    'payees-of-batch',
    `SELECT line, state, message, said,
       CASE WHEN request_written IS NULL THEN value_cents
         ELSE (request_written::jsonb ->> 'value')::bigint END AS value_cents,
       CASE WHEN request_written IS NULL THEN cpf_cnpj
         ELSE request_written::jsonb ->> 'cpfCnpj' END AS cpf_cnpj,
       CASE WHEN request_written IS NULL THEN pix_key
         ELSE request_written::jsonb ->> 'pixKey' END AS pix_key,
       CASE WHEN request_written IS NULL THEN name
         ELSE request_written::jsonb #>> '{person,name}' END AS name
     FROM payouts WHERE batch_id = @batchId AND line > @after ORDER BY line LIMIT @limit`,
  ),
  // Batches whose results show a payout returned since then: its own, those with a row
  // it covers, those with a line naming it (a covered, held or replayed orderId).
  batchesShowingRefundedSince: statement<{ since: number }>(
    'batches-showing-refunded-since',
    `WITH r AS (
       SELECT order_id, batch_id FROM payouts WHERE state = 'refunded' AND updated_at >= @since)
     SELECT batch_id FROM r
     UNION SELECT p.batch_id FROM payouts p JOIN r ON p.covered_by = r.order_id
     UNION SELECT l.batch_id FROM batch_lines l JOIN r ON l.order_id = r.order_id
     ORDER BY batch_id`,
  ),
  countsOfBatch: statement<{ batchId: number }>(
    'counts-of-batch',
    `SELECT state, COUNT(*)::bigint AS count FROM payouts WHERE batch_id = @batchId GROUP BY state`,
  ),
  // Pending payouts of a batch sent at or before @before, and the oldest of them (the
  // first in file order of those sent at once).
  pendingSentBefore: statement<{ batchId: number; before: number }>(
    'pending-sent-before',
    `SELECT COUNT(*) OVER ()::bigint AS n, sent_at AS oldest, order_id FROM (
       SELECT order_id, line, COALESCE(last_sent_at, admitted_at, updated_at) AS sent_at
       FROM payouts WHERE batch_id = @batchId AND state = 'pending') pending
     WHERE sent_at <= @before ORDER BY sent_at, line LIMIT 1`,
  ),
};

export function createReports(pooled: Runner): Reports {
  return {
    rowTotalsOfBatch: async (batchId) =>
      totalsOf(
        await pooled.rows<{ key: LineOutcome; n: number; cents: number }, { batchId: number }>(
          statements.rowTotalsOfBatch,
          { batchId },
        ),
      ),

    resultEntries: async (batchId, after, limit) =>
      (
        await pooled.rows<ResultLineRow, { batchId: number; after: number; limit: number }>(
          statements.resultEntries,
          { batchId, after, limit },
        )
      ).map(toResultEntry),

    payeesOfBatch: async (batchId, after, limit) =>
      (
        await pooled.rows<PayeeRow, { batchId: number; after: number; limit: number }>(
          statements.payeesOfBatch,
          { batchId, after, limit },
        )
      ).map(toPayee),

    batchesShowingRefundedSince: async (since) =>
      (
        await pooled.rows<{ batch_id: number }, { since: number }>(
          statements.batchesShowingRefundedSince,
          { since },
        )
      ).map((row) => row.batch_id),

    countsOfBatch: async (batchId) =>
      Object.fromEntries(
        (
          await pooled.rows<{ state: RowState; count: number }, { batchId: number }>(
            statements.countsOfBatch,
            { batchId },
          )
        ).map((row) => [row.state, { count: row.count }]),
      ),

    pendingSentBefore: async (batchId, before) => {
      const [row] = await pooled.rows<
        { n: number; oldest: number; order_id: string },
        { batchId: number; before: number }
      >(statements.pendingSentBefore, { batchId, before });
      return row && { rows: row.n, oldestSentAt: row.oldest, oldestOrderId: row.order_id };
    },
  };
}
