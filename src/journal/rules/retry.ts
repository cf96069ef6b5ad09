/**
 * `payouts retry` (docs/who-is-paid.md, rule 5), decided from the failed payout and what
 * the store read: which payout a request sends again, under which orderId, and what
 * becomes of the copies held as its repeats.
 */
import type { Said } from '../../messages/said.js';
import { RETRYABLE, type HoldReason, type RowState } from '../states.js';
import type { PlannedMove } from './plan.js';
import type { LinkedRow } from './uncover.js';

/** A payout that definitely did not pay, which only a person's request sends again. */
export function isRetryable(state: RowState): boolean {
  return RETRYABLE.includes(state);
}

/** The states of the rows of a batch a store reads for retryTargetsIn. */
export const RETRY_TARGET_STATES: readonly RowState[] = [...RETRYABLE, 'held'];

/**
 * The rows of a batch `payouts retry FILE` names, in the file's order: each payout that
 * definitely did not pay, and each copy held because it repeats one (it names that one).
 */
export function retryTargetsIn(
  rows: readonly { orderId: string; state: RowState; holdReason: HoldReason | null }[],
): string[] {
  return rows
    .filter((row) => isRetryable(row.state) || heldAsRepeat(row))
    .map((row) => row.orderId);
}

/** A copy held because it repeats a failed payout unchanged. */
function heldAsRepeat(row: { state: string; holdReason: HoldReason | null }): boolean {
  return row.state === 'held' && row.holdReason === 'failed-before';
}

/** The copies held as repeats of the failed payout `orderId`, among the rows linked to it. */
export function repeatsHeldOf(orderId: string, linked: readonly LinkedRow[]): LinkedRow[] {
  return linked.filter((row) => row.coveredBy === orderId && heldAsRepeat(row));
}

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
  return heldAsRepeat(row) && row.coveredBy ? row.coveredBy : row.orderId;
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

/** What a retry says: in the audit, on the failed row and its copies, in its batch's events. */
export interface RetrySaids {
  /** Who sent it again, and when: why each move of the retry is audited. */
  why: Said;
  /** The new payout's first audit entry. */
  journaled: Said;
  /** The failed payout's message, and its audit entry as it becomes `retried`. */
  retried: Said;
  retriedAs: Said;
  /** The message of a copy the new payout covers. */
  repeat: Said;
  /** The batch's event. */
  event: Said;
}

export function retrySaids(retry: {
  by: string;
  at: number;
  failed: { orderId: string; state: RowState; line: number; message: string | null };
  attempt: { attempt: number; base: string; retryId: string };
}): RetrySaids {
  const { by, at, failed } = retry;
  const { attempt, base, retryId } = retry.attempt;
  const why: Said = { code: 'auditSentAgainBy', by, at };
  return {
    why,
    journaled: {
      code: 'auditRetry',
      attempt,
      base,
      orderId: failed.orderId,
      state: failed.state,
      why,
    },
    retried: { code: 'sentAgainOnPurpose', by, at, retryId, earlier: failed.message || null },
    retriedAs: { code: 'auditRetriedAs', why, retryId },
    repeat: { code: 'repeatSentAgain', by, at, retryId },
    event: {
      code: 'eventSentAgainAs',
      line: failed.line,
      orderId: failed.orderId,
      state: failed.state,
      retryId,
    },
  };
}
