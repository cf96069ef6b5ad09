/**
 * Retry on purpose (docs/who-is-paid.md, rule 5): a payout that definitely failed
 * (failed, rejected, canceled, refunded) is sent again only when a person asks, by its
 * orderId or for every such row of the newest batch of a file name, as a new payout
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
  | { kind: 'nothing' };

/**
 * Sends again what `target` (an orderId, or a file name) names; see RetryOutcome. `rules`
 * weigh each against what has paid that person since.
 */
export async function retryPayouts(
  journal: JournalRetries & JournalBatches & JournalReports,
  target: string,
  asked: { by: string },
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
  // The newest batch of that name with something to send again.
  let batch: BatchRecord | undefined;
  for (const candidate of (await batchesGivenAs(journal, target)).reverse()) {
    if ((await journal.retryTargetsOf(candidate.id)).length > 0) {
      batch = candidate;
      break;
    }
  }
  if (!batch) return { kind: 'nothing' };
  const payouts = (
    await journal.retryPayouts(await journal.retryTargetsOf(batch.id), asked.by, rules)
  ).filter((result) => result.kind === 'retried');
  return payouts.length > 0 ? { kind: 'retried', batchId: batch.id, payouts } : { kind: 'nothing' };
}
