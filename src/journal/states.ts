/**
 * Which moves between the states of a payout row (src/domain/row-states.ts) are allowed.
 * Every change the journal makes is checked against this table, so a bug elsewhere
 * cannot, say, move a `paid` row back to `queued` and send it again.
 * (The words batch, file, line, row, payout and attempt are defined in types.ts.)
 */
import type { RowState } from '../domain/row-states.js';
import type { LineOutcome } from './types.js';

export { ROW_STATES, type RowState } from '../domain/row-states.js';

const SETTLED = ['paid', 'failed', 'canceled', 'refunded'] as const;

/** Moves allowed from each state. A state absent from its own list cannot repeat. */
const TRANSITIONS: Readonly<Record<RowState, readonly RowState[]>> = {
  // Queued: a fixed copy of its file takes its orderId over (it never reached the gateway).
  invalid: ['queued'],
  // Unknown: a recovered journal looks a row up before its first send; queued again: a
  // fixed copy of its file takes its orderId over before it was sent.
  queued: ['sending', 'held', 'unknown', 'superseded', 'queued'],
  // Held again for another reason: a row held with its file's name that changes a paid row.
  held: ['queued', 'held', 'covered', 'superseded'],
  // Back to queued only on answers that prove nothing was created (429, refused connection).
  sending: ['queued', 'unknown', 'pending', 'rejected', 'conflict', ...SETTLED],
  // Found by lookup (adopted), or proven absent twice after the grace period (sent again);
  // unknown again: a lookup that did not settle it records what it saw.
  unknown: ['sending', 'unknown', 'pending', 'conflict', ...SETTLED],
  // Conflict: a poll finds the transaction is not this payout after all.
  pending: ['pending', 'conflict', ...SETTLED],
  // A Pix return, seen by a later lookup; paid again: a reconcile that found it unchanged.
  paid: ['paid', 'refunded'],
  // Sent again only by a person's `payouts retry`, as a new payout.
  failed: ['retried'],
  canceled: ['retried'],
  refunded: ['retried'],
  // Queued: a fixed copy of its file, with another payload, takes its orderId over (the
  // gateway refused it, so created nothing); the same payload again only by `payouts retry`.
  rejected: ['retried', 'queued'],
  conflict: [],
  // Held for a person when the payout that covers it fails, is refused, canceled, refunded
  // or ends in conflict.
  covered: ['held'],
  retried: [],
  // Rejecting the copy that superseded it gives it back, as it was.
  superseded: ['queued', 'held'],
};

export function canMove(from: RowState, to: RowState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** States that never change again on their own (a paid row only by a Pix return): a file whose rows are all final is archived. */
export const FINAL: readonly RowState[] = [
  'invalid',
  'rejected',
  'conflict',
  'covered',
  'superseded',
  'retried',
  ...SETTLED,
];

/**
 * Line outcomes that never change again: a final payout, a skipped line, an orderId of
 * another file (a held line, closed for good). A batch whose lines all have one, and no
 * held payout (counted under the same word: see holdsOfBatch), is done.
 */
export const FINAL_OUTCOMES: readonly LineOutcome[] = [...FINAL, 'skipped', 'held'];

export function isFinalOutcome(outcome: string): boolean {
  return FINAL_OUTCOMES.some((final) => final === outcome);
}

/** States a person must look at: exit code 2 (docs/row-states.md). */
export const NEEDS_A_PERSON: readonly RowState[] = [
  'invalid',
  'rejected',
  'failed',
  'canceled',
  'refunded',
  'conflict',
  'held',
];

/** States that may still change without a person: run again later (exit code 3). */
export const UNFINISHED: readonly RowState[] = ['queued', 'sending', 'unknown', 'pending'];

/**
 * States proving the gateway never created the payout, so a new file may reuse its
 * orderId with another payload.
 */
export const NEVER_REACHED_GATEWAY: readonly RowState[] = ['invalid', 'rejected', 'held'];

/**
 * States of a payout that has moved money or may still move it: such a payout covers a
 * later row of the same document and amount. A covered row counts too (the payout that
 * covers it moved the money), or a third copy would find its payout already covering the
 * second and be sent; failed, rejected, canceled, invalid and superseded ones never moved
 * any and never will.
 */
export const MAY_MOVE_MONEY: readonly RowState[] = [
  'paid',
  'pending',
  'unknown',
  'sending',
  'covered',
  'queued',
  'held',
];

/** States of a payout whose money has left, or may have: a copy of it is covered by it. */
export const SENT: readonly RowState[] = ['paid', 'pending', 'unknown', 'sending', 'covered'];

/**
 * Why a row is held, so that each release frees only its own: the file as a whole (a
 * control total, a person's refusal), the balance check, or a rule on who is paid.
 */
export const HOLD_REASONS = [
  'file',
  'balance',
  /** The same document and amount as a payout of another file within duplicateWindow. */
  'duplicate',
  /** Named as an earlier batch, whose rows it repeats. */
  'same-name',
  /** In a corrected copy, another amount or name for a document the batch it corrects paid. */
  'changes-paid',
  /**
   * In a corrected copy, another Pix key or name for a payout the batch it corrects made:
   * the money may have gone to the wrong person; `--new-batch` pays the right one.
   */
  'changes-payee',
  /**
   * Of a batch whose later file of the same name waits for a person (held whole): frozen,
   * whatever held it before, until the answer to that file says what this one is.
   */
  'copy-waiting',
  /** The same name, document, key and amount as an earlier row of its own file. */
  'identical',
  /**
   * In a copy of its file, unchanged from a row that failed at the gateway: sent again
   * only by `payouts retry`, never by dropping a file again.
   */
  'failed-before',
] as const;

/** A payout that definitely did not pay: a person may send it again (`payouts retry`). */
export const RETRYABLE: readonly RowState[] = ['failed', 'rejected', 'canceled', 'refunded'];
export type HoldReason = (typeof HOLD_REASONS)[number];
