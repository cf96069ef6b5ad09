/**
 * Covered follows its cover (docs/who-is-paid.md, rule 8), decided from the rows a store
 * reads by `covered_by` from a payout that did not pay, or is not known to have paid (a
 * conflict): which rows are held for a person, naming it, and which batches open again so
 * that every run names them.
 */
import { commandTarget, givenName } from '../../csv/given-name.js';
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
  /** Its batch's file, named in the command that releases it. */
  fileName: string;
}

/** What a cover that ended makes of the rows it covered. */
export interface UncoverPlan {
  moves: PlannedMove[];
  /** What the audit says of each move. */
  why: Said;
  /** Batches done already, opened again to name their held rows. */
  reopen: number[];
}

/**
 * An answer that moves a payout to a state proving it did not pay ends its cover; so does
 * a conflict: the gateway's transaction under its orderId is not it, so no money is known
 * to have left by it.
 */
export function endsCover(from: RowState, to: RowState): boolean {
  return from !== to && (RETRYABLE.includes(to) || to === 'conflict');
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
 * retry` of it covers them all again, and a batch already done opens again. Once it ends
 * in conflict (never retried: it may yet be our money under a confusing answer), each is
 * held as its possible duplicate, paid only by a person's `approve --new-batch --repeats`.
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
  const conflict = failed.state === 'conflict';
  return {
    moves: covered.map((row) => ({
      orderId: row.orderId,
      from: 'covered',
      to: 'held',
      fields: conflict
        ? { holdReason: 'duplicate', coveredBy: failed.orderId, said: conflictSaid(failed, row) }
        : { holdReason: 'failed-before', coveredBy: failed.orderId, said },
      reason: { code: 'held', said: ended },
    })),
    why: ended,
    reopen: batchesToReopen(covered),
  };
}

/** What a row covered by a payout that ended in conflict says, and the command freeing it. */
function conflictSaid(cover: Covering, row: LinkedRow): Said {
  const target = commandTarget(row.fileName, row.batchId);
  return {
    code: 'heldCoverConflict',
    file: givenName(cover.fileName),
    line: cover.line,
    orderId: cover.orderId,
    newFile: target.file,
    hintFlags: target.hintFlags,
  };
}
