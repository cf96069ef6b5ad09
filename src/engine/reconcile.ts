/**
 * Reconcile (docs/operations.md, "Following, results and status"): a `paid` payout can still come back (a Pix return).
 * Paid payouts sent in the last days are read again by transactionId; one the gateway
 * now says is refunded becomes `refunded`. Anything else unexpected is reported, never
 * moved: `paid` may only become `refunded`.
 */
import type { JournalAnswers, JournalFollowing } from '../journal/journal.js';
import { decidePoll } from './decisions.js';
import type { EngineDeps, EngineOptions } from './engine.js';

export interface ReconcileReport {
  checked: number;
  /** Reads that failed (the gateway unreachable, a 5xx, a 401): these rows were not checked. */
  failed: number;
  /** Why the last of them failed. */
  lastFailure: string | undefined;
  /** Payouts that came back, with the batches whose results must be written again. */
  refunded: { orderId: string; batchId: number }[];
  /** Payouts the gateway now describes otherwise, for a person. */
  unexpected: { orderId: string; why: string }[];
  stopped: string | undefined;
}

export async function reconcilePaid(
  deps: EngineDeps<JournalFollowing & JournalAnswers>,
  options: EngineOptions,
  since: number,
): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    checked: 0,
    failed: 0,
    lastFailure: undefined,
    refunded: [],
    unexpected: [],
    stopped: undefined,
  };
  const { pool } = deps;
  let after = '';
  while (!report.stopped && !pool.stop.aborted) {
    const grant = await pool.grant();
    if (grant === 0) break; // stopped
    const claims = await deps.journal.claimPaid(
      options.owner,
      grant,
      options.leaseMs,
      since,
      after,
    );
    const last = claims.at(-1);
    if (!last) break;
    after = last.orderId;
    await pool.runAll(claims, async (claim) => {
      const transactionId = claim.transactionId as number;
      const answer = await pool.ask((call) => deps.gateway.getTransactionById(transactionId, call));
      const decision = decidePoll(claim.request, transactionId, answer);
      if (decision.signal.kind === 'stop') report.stopped ??= decision.signal.why;
      if (decision.signal.kind === 'pause') pool.pause(decision.signal.ms ?? 1_000, 'rate-limited');
      if ('kind' in answer) {
        // No answer: not checked, and the row is left as it was, for the next reconcile.
        report.failed++;
        report.lastFailure = answer.message;
        await deps.journal.move(claim.orderId, claim.fence, 'paid', 'reconcile: no answer', {});
        return;
      }
      report.checked++;
      if (decision.to === 'refunded') {
        await deps.journal.move(
          claim.orderId,
          claim.fence,
          'refunded',
          `reconcile: ${decision.reason}`,
          decision.details,
        );
        report.refunded.push({ orderId: claim.orderId, batchId: claim.batchId });
      } else {
        if (decision.to !== 'paid') {
          report.unexpected.push({ orderId: claim.orderId, why: decision.reason });
        }
        // Still paid (or for a person): released as it was.
        await deps.journal.move(claim.orderId, claim.fence, 'paid', 'reconcile: unchanged', {});
      }
    });
  }
  return report;
}
