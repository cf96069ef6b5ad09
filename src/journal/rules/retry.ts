/**
 * `payouts retry` (docs/who-is-paid.md, rule 5), decided from the failed payout and what
 * the store read: which payout a request sends again, under which orderId, and what
 * becomes of the copies held as its repeats.
 */
import type { Said } from '../../messages/said.js';
import type { HoldReason } from '../states.js';
import type { PlannedMove } from './plan.js';

/**
 * The payout a request names: a copy's row held because it repeats a failed payout names
 * that payout, which is the one sent again.
 */
export function retryTargetOf(row: {
  orderId: string;
  state: string;
  holdReason: HoldReason | null;
  coveredBy: string | null;
}): string {
  return row.state === 'held' && row.holdReason === 'failed-before' && row.coveredBy
    ? row.coveredBy
    : row.orderId;
}

/** A payout sent again is a new one on its line: its orderId with the next attempt (-r2, -r3). */
export function nextAttempt(row: {
  orderId: string;
  retryOf: string | null;
  attemptNumber: number | null;
}): { attempt: number; base: string; retryId: string } {
  const attempt = (row.attemptNumber ?? 1) + 1;
  const base = row.retryOf === null ? row.orderId : row.orderId.replace(/-r\d+$/, '');
  return { attempt, base, retryId: `${base}-r${attempt}` };
}

/**
 * The copies held as repeats of the failed payout are covered by the payout sent again,
 * unless another file's payout holds that one as a possible duplicate (`heldAgain`): then
 * they stay held for a person.
 */
export function planCopiesCovered(
  copies: readonly { orderId: string }[],
  retryId: string,
  repeat: Said,
  heldAgain: boolean,
): PlannedMove[] {
  if (heldAgain) return [];
  return copies.map((copy) => ({
    orderId: copy.orderId,
    from: 'held',
    to: 'covered',
    fields: { coveredBy: retryId, said: repeat },
    reason: { code: 'coveredByRetry', retryId },
  }));
}
