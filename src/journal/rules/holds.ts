/**
 * What a release of held rows frees, and what it says of their file (docs/who-is-paid.md,
 * "What to run"): decided here, applied by a store.
 */
import type { BatchState } from '../batch-states.js';
import type { HoldReason, RowState } from '../states.js';

/** Rows the balance check holds, and funding frees: rows held before reasons were kept have none. */
export const HELD_FOR_BALANCE: readonly (HoldReason | null)[] = ['balance', null];

/** The row states a store reads for the balance check; `weighedForBalance` picks among them. */
export const BALANCE_STATES: readonly RowState[] = ['queued', 'held'];

/**
 * The balance check weighs what is about to be sent: the queued rows of an open batch,
 * and the rows of an underfunded batch held for the balance, which funding frees.
 */
export function weighedForBalance(group: {
  batchState: BatchState;
  state: RowState;
  holdReason: HoldReason | null;
}): boolean {
  if (group.batchState === 'open') return group.state === 'queued';
  if (group.batchState === 'underfunded') {
    return group.state === 'held' && HELD_FOR_BALANCE.includes(group.holdReason);
  }
  return false;
}

/** A store's sums of one batch's rows in one state and hold reason. */
export interface BalanceGroup {
  batchId: number;
  batchState: BatchState;
  state: RowState;
  holdReason: HoldReason | null;
  cents: number;
  count: number;
}

/** What the balance check weighs of each batch (weighedForBalance), in the groups' order. */
export function balanceByBatch(
  groups: readonly BalanceGroup[],
): { batchId: number; cents: number; count: number }[] {
  const byBatch = new Map<number, { batchId: number; cents: number; count: number }>();
  for (const group of groups) {
    if (!weighedForBalance(group)) continue;
    const batch = byBatch.get(group.batchId) ?? { batchId: group.batchId, cents: 0, count: 0 };
    batch.cents += group.cents;
    batch.count += group.count;
    byBatch.set(group.batchId, batch);
  }
  return [...byBatch.values()];
}

/** Reasons whose release says a file's rows are new payments, not a copy of an earlier batch. */
const NEW_PAYMENT_REASONS: readonly HoldReason[] = ['duplicate', 'same-name'];

/**
 * A release of rows held for `reason` says they are new payments: what their file froze
 * of an earlier batch of its name goes on as it stands.
 */
export function thawsOnRelease(reason: HoldReason): boolean {
  return NEW_PAYMENT_REASONS.includes(reason);
}
