/**
 * Admission of one row (docs/who-is-paid.md, rules 1, 2 and 6), decided from what the
 * journal holds of its orderId and the payout that may cover it: a plan the store applies.
 */
import { commandTarget } from '../../csv/given-name.js';
import type { Said } from '../../messages/said.js';
import {
  admit,
  duplicateSaid,
  journaledSaid,
  type Admission,
  type Covering,
  type Known,
  type NamedBatch,
} from '../admission.js';
import type { HoldReason, RowState } from '../states.js';
import type { PayoutInput } from '../types.js';

/** Why an admitted row is held at once, and the payout it repeats. */
export interface AdmissionHold {
  reason: HoldReason;
  said: Said;
  coveredBy: string | null;
}

/** What admission does with a row: journal it, take an earlier row over, or hold its line. */
export type AdmissionPlan = { admission: Admission } & (
  | { write: 'insert'; hold: AdmissionHold | null }
  | {
      write: 'replace';
      /** The state of the row taken over, as the store read it. */
      from: RowState;
      hold: AdmissionHold | null;
      /** The earlier batch's line of the row taken over, kept so its result has every row. */
      supersedes: { batchId: number; line: number; said: Said } | null;
    }
  | { write: 'held-line'; said: Said }
);

/** The same row of the same batch, journaled already: an interrupted admission resuming. */
export function isResumed(
  previous: Known | undefined,
  row: { batchId: number; line: number; hash: string },
): boolean {
  return (
    previous !== undefined &&
    previous.batchId === row.batchId &&
    previous.line === row.line &&
    previous.payloadHash === row.hash
  );
}

/**
 * The plan for a row of `batch` (see admit): a row the cover rule holds is a possible
 * duplicate of its cover; one identical to an earlier line of its file is held until a
 * person confirms both; an orderId of another file is a held line, never sent under it.
 */
export function planAdmission(
  batch: NamedBatch,
  { line, request, identicalTo, reference }: PayoutInput,
  facts: { previous: Known | undefined; covering: Covering | undefined; hash: string },
): AdmissionPlan {
  const admission = admit(facts.previous, facts.covering, facts.hash);
  if (admission.kind === 'journaled') {
    return {
      admission,
      write: 'held-line',
      said: journaledSaid(request.orderId, admission.previous),
    };
  }
  const covering =
    admission.kind === 'duplicate' || admission.kind === 'retry' ? admission.covering : undefined;
  let hold: AdmissionHold | null = null;
  if (covering) {
    const row = { cents: request.value, reference };
    const said = duplicateSaid(covering, batch, row);
    hold = { reason: 'duplicate', said, coveredBy: covering.orderId };
  } else if (identicalTo !== undefined) {
    const target = commandTarget(batch.fileName, batch.id);
    hold = {
      reason: 'identical',
      said: { code: 'heldIdentical', line: identicalTo, ...target },
      coveredBy: null,
    };
  }
  if (admission.kind !== 'retry') return { admission, write: 'insert', hold };
  const { previous } = admission;
  const supersedes =
    previous.batchId === batch.id
      ? null
      : {
          batchId: previous.batchId,
          line: previous.line,
          said: {
            code: 'takenOverByLine',
            state: previous.state,
            line,
            file: batch.fileName,
          } satisfies Said,
        };
  return { admission, write: 'replace', from: previous.state, hold, supersedes };
}
