/**
 * Retry on purpose (docs/who-is-paid.md, rule 5): a payout that definitely failed
 * (failed, rejected, canceled, refunded) is sent again only when a person asks, by its
 * orderId or for every such row of the batch of a file name that has some, as a new payout
 * under its orderId with an attempt suffix (`-r2`, `-r3`), recorded with who and when.
 * Dropping a file again never does it.
 */
import { basename } from 'node:path';
import type {
  AdmissionRules,
  BatchRecord,
  JournalBatches,
  JournalReports,
  JournalRetries,
  RetryResult,
} from '../journal/journal.js';
import type { RowState } from '../journal/states.js';
import { batchesGivenAs } from './holds.js';

export type RetryOutcome =
  /** Sent again: the new payouts, each queued for the next run. */
  | { kind: 'retried'; batchId: number; payouts: Extract<RetryResult, { kind: 'retried' }>[] }
  /** The orderId named did not definitely fail (paid, pending, or already sent again). */
  | { kind: 'not-failed'; orderId: string; state: RowState; retriedAs?: string }
  /** No orderId of that name, and no file of that name with a payout to send again. */
  | { kind: 'nothing' }
  /** Several batches of that name have payouts to send again, and none was picked. */
  | { kind: 'which-batch'; batches: BatchRecord[] };

/**
 * Sends again what `target` (an orderId, or a file name) names; see RetryOutcome. `rules`
 * weigh each against what has paid that person since. Of a file name, the batch `asked`
 * picks, or the only one with something to send again: never one picked silently.
 */
export async function retryPayouts(
  journal: JournalRetries & JournalBatches & JournalReports,
  target: string,
  asked: { by: string; batch?: number },
  rules: AdmissionRules,
): Promise<RetryOutcome> {
  if (await journal.payout(target)) {
    const [result] = await journal.retryPayouts([target], asked.by, rules);
    if (result?.kind === 'retried') {
      return { kind: 'retried', batchId: result.batchId, payouts: [result] };
    }
    if (result?.kind === 'not-failed') return result;
    return { kind: 'nothing' };
  }
  const named = (await batchesGivenAs(journal, target)).filter(
    (candidate) => asked.batch === undefined || candidate.id === asked.batch,
  );
  // Batches whose retry sends the same payouts (a copy held as repeats of the failed
  // rows of an earlier one) are one choice: the newest, as before; others need --batch.
  const withTargets: BatchRecord[] = [];
  const choices = new Set<string>();
  for (const candidate of named) {
    const sends = await payoutsSentAgain(journal, candidate.id);
    if (sends.length === 0) continue;
    withTargets.push(candidate);
    choices.add(sends.join(' '));
  }
  if (choices.size > 1) return { kind: 'which-batch', batches: withTargets };
  const batch = withTargets.at(-1);
  if (!batch) return { kind: 'nothing' };
  const payouts = (
    await journal.retryPayouts(await journal.retryTargetsOf(batch.id), asked.by, rules)
  ).filter((result) => result.kind === 'retried');
  return payouts.length > 0 ? { kind: 'retried', batchId: batch.id, payouts } : { kind: 'nothing' };
}

/**
 * The payouts a retry of this batch would send again, sorted: a copy held as a repeat of
 * a failed payout names that one (its heldFailedBefore words).
 */
async function payoutsSentAgain(
  journal: JournalRetries & JournalReports,
  batchId: number,
): Promise<string[]> {
  const sends = new Set<string>();
  for (const orderId of await journal.retryTargetsOf(batchId)) {
    const said = (await journal.payout(orderId))?.said;
    sends.add(said?.code === 'heldFailedBefore' ? said.orderId : orderId);
  }
  return [...sends].sort();
}
