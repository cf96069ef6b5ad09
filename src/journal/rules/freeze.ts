/**
 * A batch frozen while a later file of its name waits for a person (docs/who-is-paid.md,
 * rule 3), and thawed by that person's answer: plans of moves from the rows a store read.
 */
import type { Said } from '../../messages/said.js';
import type { BatchState } from '../batch-states.js';
import type { HoldReason, RowState } from '../states.js';
import type { PlannedMove } from './plan.js';

/** A frozen row: held, as a later file of its name waits for a person. */
export const FROZEN = { state: 'held', holdReason: 'copy-waiting' } as const satisfies {
  state: RowState;
  holdReason: HoldReason;
};

/** The states of a batch's rows never sent: those a freeze weighs. */
export const UNSENT: readonly RowState[] = ['queued', 'held'];

/** A row as a freeze weighs it, with the payout it repeats, which a move keeps. */
export interface StandingRow {
  orderId: string;
  state: RowState;
  holdReason: HoldReason | null;
  /** A released repeat keeps the payout it repeats through a freeze and a thaw. */
  coveredBy: string | null;
}

/**
 * The rows of a batch frozen for `frozen` (a later file of its name waiting): its queued
 * rows, and those only the balance held, are held until that file is answered. A row held
 * by a rule of its own (a possible duplicate, a changed paid row) stays as it is.
 */
export function planFreeze(rows: readonly StandingRow[], frozen: Said): PlannedMove[] {
  return rows.flatMap((row): PlannedMove[] => {
    const balanceOnly = row.state === 'held' && (row.holdReason ?? 'balance') === 'balance';
    if (row.state !== 'queued' && !balanceOnly) return [];
    return [
      {
        orderId: row.orderId,
        from: row.state,
        to: FROZEN.state,
        fields: { holdReason: FROZEN.holdReason, coveredBy: row.coveredBy, said: frozen },
        reason: { code: 'frozen' },
      },
    ];
  });
}

/** A held row of an earlier batch of a file's name, the file that froze it, and its batch's state. */
export interface FrozenRow extends StandingRow {
  /** The batch whose arrival froze it, when it is frozen. */
  frozenBy: number | null;
  batchState: BatchState;
}

/**
 * The rows `copy` froze, thawed once it is answered, as their batch stands: queued to be
 * sent, or held again for the balance (an underfunded batch) or for the person who turned
 * the batch down (a refused one).
 */
export function planThaw(rows: readonly FrozenRow[], copy: number): PlannedMove[] {
  return rows.flatMap((row): PlannedMove[] => {
    if (!isFrozenBy(row, copy)) return [];
    const heldFor = HELD_AFTER_THAW[row.batchState] ?? null;
    return [
      {
        orderId: row.orderId,
        from: row.state,
        to: heldFor === null ? 'queued' : 'held',
        fields: { holdReason: heldFor, coveredBy: row.coveredBy },
        reason: { code: 'thawed' },
      },
    ];
  });
}

/** Whether `copy`'s arrival froze a row, which its answer thaws. */
function isFrozenBy(row: FrozenRow, copy: number): boolean {
  return (
    row.state === FROZEN.state && row.holdReason === FROZEN.holdReason && row.frozenBy === copy
  );
}

/** A held row of an earlier batch of a file's name, with its batch's file and its amount. */
export interface FrozenPayout extends FrozenRow {
  batchId: number;
  fileName: string;
  cents: number;
}

/** The batches `copy` froze, in the journal's order, each with how many rows and how much it holds back. */
export function frozenBatches(
  rows: readonly FrozenPayout[],
  copy: number,
): { batchId: number; fileName: string; rows: number; cents: number }[] {
  const batches = new Map<
    number,
    { batchId: number; fileName: string; rows: number; cents: number }
  >();
  for (const row of rows.filter((row) => isFrozenBy(row, copy))) {
    const batch = batches.get(row.batchId) ?? {
      batchId: row.batchId,
      fileName: row.fileName,
      rows: 0,
      cents: 0,
    };
    batches.set(row.batchId, { ...batch, rows: batch.rows + 1, cents: batch.cents + row.cents });
  }
  return [...batches.values()].sort((a, b) => a.batchId - b.batchId);
}

/** Why a thawed row of a batch in these states is held again; any other is queued. */
const HELD_AFTER_THAW: Partial<Record<BatchState, HoldReason>> = {
  underfunded: 'balance',
  refused: 'file',
};
