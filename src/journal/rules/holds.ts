/**
 * What a release of held rows frees, and what it says of their file (docs/who-is-paid.md,
 * "What to run"): decided here, applied by a store.
 */
import type { HoldReason } from '../states.js';

/** Rows the balance check holds, and funding frees: rows held before reasons were kept have none. */
export const HELD_FOR_BALANCE: readonly (HoldReason | null)[] = ['balance', null];

/** Reasons whose release says a file's rows are new payments, not a copy of an earlier batch. */
const NEW_PAYMENT_REASONS: readonly HoldReason[] = ['duplicate', 'same-name'];

/**
 * A release of rows held for `reason` says they are new payments: what their file froze
 * of an earlier batch of its name goes on as it stands.
 */
export function thawsOnRelease(reason: HoldReason): boolean {
  return NEW_PAYMENT_REASONS.includes(reason);
}
