/**
 * Reconcile (DESIGN.md section 6): a `paid` payout can still come back (a Pix return).
 * Paid payouts sent in the last days are read again by transactionId; one the gateway
 * now says is refunded becomes `refunded`. Anything else unexpected is reported, never
 * moved: `paid` may only become `refunded`.
 */
import { decidePoll } from './decisions.js';
import {
  answerOf,
  inFlightSignal,
  requestSlots,
  settleAll,
  type EngineDeps,
  type EngineOptions,
} from './engine.js';

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
  deps: EngineDeps,
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
  let after = '';
  let pausedUntil = 0;
  while (!report.stopped && !options.signal.aborted) {
    if (pausedUntil > deps.now()) {
      await deps.sleep(pausedUntil - deps.now(), options.signal);
      continue;
    }
    const grant = await requestSlots(deps, options.signal, options.concurrency);
    const claims = deps.journal.claimPaid(options.owner, grant, options.leaseMs, since, after);
    deps.budget.take(claims.length, deps.now());
    const last = claims.at(-1);
    if (!last) break;
    after = last.orderId;
    await settleAll(
      claims.map(async (claim) => {
        const transactionId = claim.transactionId as number;
        const answer = await answerOf(
          deps.gateway.getTransactionById(transactionId, {
            signal: inFlightSignal(options.signal),
          }),
        );
        const decision = decidePoll(claim.request, transactionId, answer);
        if (decision.signal.kind === 'stop') report.stopped ??= decision.signal.why;
        if (decision.signal.kind === 'pause') {
          pausedUntil = Math.max(pausedUntil, deps.now() + (decision.signal.ms ?? 1_000));
        }
        if ('kind' in answer) {
          // No answer: not checked, and the row is left as it was, for the next reconcile.
          report.failed++;
          report.lastFailure = answer.message;
          deps.journal.move(claim.orderId, claim.fence, 'paid', 'reconcile: no answer', {});
          return;
        }
        report.checked++;
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
