/** A person's request to send definitely failed payouts again (`payouts retry`). */
import type { CashOutRequest } from '../../gateway/contract.js';
import { duplicateSaid } from '../admission.js';
import { JournalError } from '../journal-error.js';
import type { JournalRetries } from '../journal.js';
import type { HoldReason, RowState } from '../states.js';
import type { AdmissionRules, RetryResult } from '../types.js';
import { payoutParams, REQUEST_COLUMNS, REQUEST_VALUES, type PayoutParams } from './admitting.js';
import type { Context, Synchronous } from './context.js';
import { BY_AMOUNT, candidatesOf, toCandidate, type CandidateRow, type Rows } from './rows.js';
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

interface RetryRow {
  order_id: string;
  batch_id: number;
  line: number;
  request: string;
  value_cents: number;
  document: string;
  state: RowState;
  message: string | null;
  covered_by: string | null;
  hold_reason: HoldReason | null;
  retry_of: string | null;
  attempt_number: number | null;
  reference: string | null;
}

type Retries = Synchronous<JournalRetries>;

export function createRetries({ db, now, writing }: Context, rows: Rows): Retries {
  const statements = {
    retryOf: db.prepare<[string], RetryRow>(`
      SELECT order_id, batch_id, line, request, value_cents, document, state, message,
        covered_by, hold_reason, retry_of, attempt_number, reference
      FROM payouts WHERE order_id = ?`),
    retriesOf: db.prepare<[string], { order_id: string }>(
      `SELECT order_id FROM payouts WHERE retry_of = ? ORDER BY order_id`,
    ),
    // Released as it is made: a person asked for it, so the cover rule checked at claim
    // time leaves it be (a held copy of the row it sends again must not hold it back).
    insertRetry: db.prepare<PayoutParams & { retryOf: string; attempt: number }>(`
      INSERT INTO payouts (order_id, batch_id, line, ${REQUEST_COLUMNS}, payload_hash,
        admitted_at, state, updated_at, retry_of, attempt_number, released_at, reference)
      VALUES (@orderId, @batchId, @line, ${REQUEST_VALUES}, @hash, @now, 'queued', @now,
        @retryOf, @attempt, @now, @reference)`),
    // The rows of a batch in the states the retry rule names (payouts_by_state).
    rowsInStates: db.prepare<
      { batchId: number; states: string },
      { order_id: string; state: RowState; hold_reason: HoldReason | null }
    >(`
      SELECT order_id, state, hold_reason FROM payouts
      WHERE batch_id = @batchId AND state IN (SELECT value FROM json_each(@states))
      ORDER BY line, order_id`),
    // The payouts of other files to that person of that amount.
    paidOfAmount: db.prepare<{ document: string; value: number; batchId: number }, CandidateRow>(
      candidatesOf(BY_AMOUNT),
    ),
    batchHasRetries: db.prepare<[number], object>(
      `SELECT 1 FROM payouts WHERE batch_id = ? AND retry_of IS NOT NULL LIMIT 1`,
    ),
  };

  /**
   * Sends a definitely failed payout again, inside the caller's transaction: a new row on
   * its line, under its orderId with the next attempt suffix (-r2, -r3), queued; the
   * failed one becomes `retried`, naming it; copies held because they repeat it are
   * covered by it; its batch, if done, opens again to send it. A payout of another file
   * that covers it now (a corrected copy paid that person that amount) holds it instead,
   * as that payout's possible duplicate: the copies stay held for a person.
   */
  function retryOne(orderId: string, by: string, rules: AdmissionRules): RetryResult {
    const named = statements.retryOf.get(orderId);
    const target =
      named &&
      retryTargetOf({
        orderId: named.order_id,
        state: named.state,
        holdReason: named.hold_reason,
        coveredBy: named.covered_by,
      });
    const row = target === named?.order_id ? named : target && statements.retryOf.get(target);
    if (!row) return { kind: 'absent', orderId };
    if (!isRetryable(row.state)) {
      const [latest] = statements.retriesOf.all(row.order_id);
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
    if (rows.payoutRow(retryId)) {
      throw new JournalError('refused', `${retryId} taken`, {
        refusal: { code: 'retryIdTaken', orderId: row.order_id, retryId },
      });
    }
    const request = { ...(JSON.parse(row.request) as CashOutRequest), orderId: retryId };
    const candidates = statements.paidOfAmount
      .all({ document: row.document, value: row.value_cents, batchId: row.batch_id })
      .map(toCandidate);
    // Its copies, held as its repeats, and their copies in turn.
    const linked = rows.linkedTo(row.order_id);
    const ownCopies = new Set(linked.map((copy) => copy.orderId));
    const covering = paidSince({ batchId: row.batch_id, valueCents: row.value_cents }, candidates, {
      since: coverSince(now(), rules),
      copies: ownCopies,
    });
    const at = now();
    const inserted = statements.insertRetry.run({
      // The payment it sends again keeps its reference: a later copy of it is held by it.
      ...payoutParams(request, row.batch_id, row.line, at, undefined, row.reference),
      retryOf: row.order_id,
      attempt,
    });
    const said = retrySaids({ by, at, failed: { ...row, orderId: row.order_id }, attempt: next });
    rows.auditNew(Number(inserted.lastInsertRowid), said.journaled);
    rows.moveRow(row.order_id, row.state, 'retried', { said: said.retried }, said.retriedAs);
    const batch = rows.batchRow(row.batch_id);
    const fileName = batch?.file_name ?? '';
    const held = covering
      ? duplicateSaid(
          covering,
          { id: row.batch_id, fileName },
          { cents: row.value_cents, reference: row.reference },
        )
      : null;
    if (covering && held)
      rows.holdQueuedRow(retryId, 'duplicate', held, { coveredBy: covering.orderId });
    const copies = repeatsHeldOf(row.order_id, linked);
    rows.applyPlan(planCopiesCovered(copies, retryId, said.repeat, held !== null), said.why);
    rows.addBatchEvent(row.batch_id, 'retried', by, said.event);
    if (batch && reopens(batch.state)) rows.moveBatch(batch.id, 'open');
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

  return {
    retryPayouts: writing(
      (orderIds: readonly string[], by: string, rules: AdmissionRules): RetryResult[] =>
        orderIds.map((orderId) => retryOne(orderId, by, rules)),
    ),
    retryTargetsOf: (batchId) =>
      retryTargetsIn(
        statements.rowsInStates
          .all({ batchId, states: JSON.stringify(RETRY_TARGET_STATES) })
          .map((row) => ({ orderId: row.order_id, state: row.state, holdReason: row.hold_reason })),
      ),
    hasRetries: (batchId) => statements.batchHasRetries.get(batchId) !== undefined,
  };
}
