/**
 * Covered follows its cover (docs/who-is-paid.md, rule 8), decided from the rows a store
 * reads by `covered_by` from a payout that definitely did not pay: which rows are held
 * for a person, naming it, and which batches open again so that every run names them.
 */
import { failedBeforeSaid, type Covering } from '../admission.js';
import type { Said } from '../../messages/said.js';
import type { BatchState } from '../batch-states.js';
import { RETRYABLE, type HoldReason, type RowState } from '../states.js';
import type { PlannedMove } from './plan.js';

/** A row that names a payout as its cover, as the store reads it by `covered_by`. */
export interface LinkedRow {
  orderId: string;
  coveredBy: string;
  state: RowState;
  holdReason: HoldReason | null;
  batchId: number;
  batchState: BatchState;
}

/** What a cover that ended makes of the rows it covered. */
export interface UncoverPlan {
  moves: PlannedMove[];
  /** What the audit says of each move. */
  why: Said;
  /** Batches done already, opened again to name their held rows. */
  reopen: number[];
}

/** An answer that moves a payout to a state proving it did not pay ends its cover. */
export function endsCover(from: RowState, to: RowState): boolean {
  return from !== to && RETRYABLE.includes(to);
}

/**
 * The rows `orderId` covers, directly or through a covered copy (a copy of a copy), among
 * the rows linked to it; each once, whatever the links.
 */
export function coveredThrough(orderId: string, linked: readonly LinkedRow[]): LinkedRow[] {
  const covered: LinkedRow[] = [];
  const reached = new Set([orderId]);
  const covers = [orderId];
  for (let cover = covers.shift(); cover !== undefined; cover = covers.shift()) {
    for (const row of linked) {
      if (row.coveredBy !== cover || row.state !== 'covered' || reached.has(row.orderId)) continue;
      reached.add(row.orderId);
      covered.push(row);
      covers.push(row.orderId);
    }
  }
  return covered;
}

/** A batch done already opens again when a row of it is held or sent again. */
export function reopens(batchState: BatchState): boolean {
  return batchState === 'done';
}

/** Each batch of these rows that reopens, once. */
function batchesToReopen(rows: readonly { batchId: number; batchState: BatchState }[]): number[] {
  return [...new Set(rows.filter((row) => reopens(row.batchState)).map((row) => row.batchId))];
}

/**
 * The rows a payout covered need a person once it definitely did not pay (failed,
 * refused, canceled, refunded): each is held as a repeat of it, so that one `payouts
 * retry` of it covers them all again, and a batch already done opens again.
 */
export function planUncover(failed: Covering, linked: readonly LinkedRow[]): UncoverPlan {
  const covered = coveredThrough(failed.orderId, linked);
  const said = failedBeforeSaid(failed);
  const ended: Said = {
    code: 'auditCoverEnded',
    orderId: failed.orderId,
    state: failed.state,
    said,
  };
  return {
    moves: covered.map((row) => ({
      orderId: row.orderId,
      from: 'covered',
      to: 'held',
      fields: { holdReason: 'failed-before', coveredBy: failed.orderId, said },
      reason: { code: 'held', said: ended },
    })),
    why: ended,
    reopen: batchesToReopen(covered),
  };
}
