/**
 * Reconcile (DESIGN.md section 6): a `paid` payout can still come back (a Pix return).
 * Paid payouts sent in the last days are read again by transactionId; one the gateway
 * now says is refunded becomes `refunded`. Anything else unexpected is reported, never
 * moved: `paid` may only become `refunded`.
 */
import { decidePoll } from './decisions.js';
import {
  answerOf,
  requestSlots,
  settleAll,
  type EngineDeps,
  type EngineOptions,
} from './engine.js';

export interface ReconcileReport {
  checked: number;
  /** Payouts that came back, with the batches whose results must be written again. */
  refunded: { orderId: string; batchId: number }[];
  /** Payouts the gateway now describes otherwise, for a person. */
  unexpected: { orderId: string; why: string }[];
  stopped: string | undefined;
}

export async function reconcilePaid(
  deps: EngineDeps,
  options: EngineOptions,
  since: number,
): Promise<ReconcileReport> {
  const report: ReconcileReport = { checked: 0, refunded: [], unexpected: [], stopped: undefined };
  let after = '';
  while (!report.stopped && !options.signal.aborted) {
    const grant = await requestSlots(deps, options.signal, options.concurrency);
    const claims = deps.journal.claimPaid(options.owner, grant, options.leaseMs, since, after);
    deps.budget.take(claims.length, deps.now());
    const last = claims.at(-1);
    if (!last) break;
    after = last.orderId;
    await settleAll(
      claims.map(async (claim) => {
        const transactionId = claim.transactionId as number;
        const answer = await answerOf(deps.gateway.getTransactionById(transactionId));
        report.checked++;
        const decision = decidePoll(claim.request, transactionId, answer);
        if (decision.signal.kind === 'stop') report.stopped ??= decision.signal.why;
        if (decision.to === 'refunded') {
          deps.journal.move(
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
          deps.journal.move(claim.orderId, claim.fence, 'paid', 'reconcile: unchanged', {});
        }
      }),
    );
  }
  return report;
}
