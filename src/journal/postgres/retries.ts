/**
 * A person's request to send definitely failed payouts again (`payouts retry`) on the
 * PostgreSQL journal, decided by the retry rule (../rules/retry.ts) as the SQLite store
 * does. A retry reads the failed row, its copies and the cover rule's candidates, then
 * writes: it takes the admission lock, so no admission, claim or other retry writes
 * between its read and its write, and locks the rows it moves.
 */
import type pg from 'pg';
import { duplicateSaid, payloadHash } from '../admission.js';
import { JournalError } from '../journal-error.js';
import type { JournalRetries } from '../journal.js';
import type { HoldReason, RowState } from '../states.js';
import type { AdmissionRules, RetryResult } from '../types.js';
import { coverSince, paidSince } from '../rules/cover.js';
import {
  isRetryable,
  nextAttempt,
  planCopiesCovered,
  repeatsHeldOf,
  RETRY_TARGET_STATES,
  retryTargetOf,
  retryTargetsIn,
  retrySaids,
} from '../rules/retry.js';
import { reopens } from '../rules/uncover.js';
import { inTransaction, type Runner } from './connection.js';
import { admissionLock, valuesFor } from './payouts.js';
import { requestOf, type RequestRow } from '../sqlite/context.js';
import { REQUEST_COLUMNS, rowsOn, type Rows } from './rows.js';
import { AT, statement } from './sql.js';

interface RetryRow extends RequestRow {
  batch_id: number;
  line: number;
  document: string;
  state: RowState;
  message: string | null;
  covered_by: string | null;
  hold_reason: HoldReason | null;
  retry_of: string | null;
  attempt_number: number | null;
  reference: string | null;
}

type InsertRetry = ReturnType<typeof valuesFor> & { retryOf: string; attempt: number };

const statements = {
  // Locked as read: an answer for it waits until the retry is committed.
  retryOf: statement<{ orderId: string }>(
    'retry-of',
    `SELECT ${REQUEST_COLUMNS}, batch_id, line, document, state, message, covered_by,
       hold_reason, retry_of, attempt_number, reference
     FROM payouts WHERE order_id = @orderId FOR UPDATE`,
  ),
  retriesOf: statement<{ orderId: string }>(
    'retries-of',
    `SELECT order_id FROM payouts WHERE retry_of = @orderId ORDER BY order_id`,
  ),
  // Released as it is made: a person asked for it, so the cover rule checked at claim
  // time leaves it be (a held copy of the row it sends again must not hold it back).
  insertRetry: statement<InsertRetry>(
    'insert-retry',
    `INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, pix_key, document,
       cpf_cnpj, name, email, phone, payload_hash, admitted_at, state, updated_at, retry_of,
       attempt_number, released_at, reference)
     VALUES (@orderId, @batchId, @line, @value, @pixKeyType, @pixKey, @document, @cpfCnpj,
       @name, @email, @phone, @hash, ${AT}, 'queued', ${AT}, @retryOf, @attempt, ${AT},
       @reference)
     RETURNING id`,
  ),
  // The rows of a batch in the states the retry rule names (payouts_by_state).
  rowsInStates: statement<{ batchId: number; states: string[] }>(
    'rows-in-states',
    `SELECT order_id, state, hold_reason FROM payouts
     WHERE batch_id = @batchId AND state = ANY(@states::text[])
     ORDER BY line, order_id`,
  ),
  batchHasRetries: statement<{ batchId: number }>(
    'batch-has-retries',
    `SELECT 1 FROM payouts WHERE batch_id = @batchId AND retry_of IS NOT NULL LIMIT 1`,
  ),
};

/**
 * Sends a definitely failed payout again, inside the caller's transaction: as the SQLite
 * store's retryOne (a new row on its line with the next attempt suffix, the failed one
 * `retried`, its held copies covered by it, its batch opened again if done), or held as
 * the possible duplicate of another file's payout that covers it now.
 */
async function retryOne(
  tx: Runner,
  rows: Rows,
  now: number | null,
  orderId: string,
  by: string,
  rules: AdmissionRules,
): Promise<RetryResult> {
  const read = async (id: string) =>
    (await tx.rows<RetryRow, { orderId: string }>(statements.retryOf, { orderId: id }))[0];
  const named = await read(orderId);
  const target =
    named &&
    retryTargetOf({
      orderId: named.order_id,
      state: named.state,
      holdReason: named.hold_reason,
      coveredBy: named.covered_by,
    });
  const row = target === named?.order_id ? named : target && (await read(target));
  if (!row) return { kind: 'absent', orderId };
  if (!isRetryable(row.state)) {
    const [latest] = await tx.rows<{ order_id: string }, { orderId: string }>(
      statements.retriesOf,
      { orderId: row.order_id },
    );
    return {
      kind: 'not-failed',
      orderId: row.order_id,
      state: row.state,
      ...(latest ? { retriedAs: latest.order_id } : {}),
    };
  }
  const next = nextAttempt({
    orderId: row.order_id,
    retryOf: row.retry_of,
    attemptNumber: row.attempt_number,
  });
  const { attempt, retryId } = next;
  if (await rows.payoutRow(retryId)) {
    throw new JournalError('refused', `${retryId} taken`, {
      refusal: { code: 'retryIdTaken', orderId: row.order_id, retryId },
    });
  }
  const request = { ...requestOf(row), orderId: retryId };
  const candidates = await rows.coverCandidates(
    { orderId: row.order_id, document: row.document, valueCents: row.value_cents, reference: null },
    row.batch_id,
  );
  // Its copies, held as its repeats, and their copies in turn.
  const linked = await rows.linkedTo(row.order_id);
  const at = await rows.at();
  const covering = paidSince({ batchId: row.batch_id, valueCents: row.value_cents }, candidates, {
    since: coverSince(at, rules),
    copies: new Set(linked.map((copy) => copy.orderId)),
  });
  const [inserted] = await tx.rows<{ id: number }, InsertRetry>(statements.insertRetry, {
    // The payment it sends again keeps its reference: a later copy of it is held by it.
    ...valuesFor({
      request,
      batchId: row.batch_id,
      line: row.line,
      hash: payloadHash(request),
      reference: row.reference ?? undefined,
      now,
    }),
    retryOf: row.order_id,
    attempt,
  });
  if (!inserted) throw new JournalError('refused', `${retryId}: not journaled`);
  const said = retrySaids({ by, at, failed: { ...row, orderId: row.order_id }, attempt: next });
  await rows.auditById(inserted.id, null, 'queued', said.journaled);
  await rows.moveRow(row.order_id, row.state, 'retried', { said: said.retried }, said.retriedAs);
  const batch = await rows.batchRow(row.batch_id);
  const held = covering
    ? duplicateSaid(
        covering,
        { id: row.batch_id, fileName: batch?.file_name ?? '' },
        { cents: row.value_cents, reference: row.reference },
      )
    : null;
  if (covering && held) {
    await rows.holdQueuedRow(retryId, 'duplicate', held, { coveredBy: covering.orderId });
  }
  const copies = repeatsHeldOf(row.order_id, linked);
  await rows.applyPlan(planCopiesCovered(copies, retryId, said.repeat, held !== null), said.why);
  await rows.addBatchEvent(row.batch_id, 'retried', by, said.event);
  if (batch && reopens(batch.state)) await rows.moveBatch(batch.id, 'open');
  return {
    kind: 'retried',
    orderId: retryId,
    retryOf: row.order_id,
    batchId: row.batch_id,
    line: row.line,
    valueCents: row.value_cents,
    held,
  };
}

export function createRetries(
  pool: pg.Pool,
  pooled: Runner,
  clock: () => number | null,
): JournalRetries {
  return {
    retryPayouts: (orderIds, by, rules) => {
      const now = clock();
      return inTransaction(pool, async (tx) => {
        await tx.rows(admissionLock, {});
        const rows = rowsOn(tx, now);
        const results: RetryResult[] = [];
        for (const orderId of orderIds) {
          results.push(await retryOne(tx, rows, now, orderId, by, rules));
        }
        return results;
      });
    },
    retryTargetsOf: async (batchId) =>
      retryTargetsIn(
        (
          await pooled.rows<
            { order_id: string; state: RowState; hold_reason: HoldReason | null },
            { batchId: number; states: string[] }
          >(statements.rowsInStates, { batchId, states: [...RETRY_TARGET_STATES] })
        ).map((row) => ({ orderId: row.order_id, state: row.state, holdReason: row.hold_reason })),
      ),
    hasRetries: async (batchId) =>
      (await pooled.rows(statements.batchHasRetries, { batchId })).length > 0,
  };
}
