/**
 * The states of a batch (one file in the journal), and which moves between them are
 * allowed: like a row's, every change of a batch's state is checked against this table,
 * so a bug elsewhere cannot, say, open a file a person refused.
 *
 * `admitting`: its rows are being journaled as the file streams in, and none may be sent
 * until the whole file has been read and found usable. `awaiting-approval`: read and
 * usable, its rows queued, and nothing sent until a person approves it (`refused` when a
 * person turns it down: its rows held). `open`: its queued rows are sent.
 * `underfunded`: the balance did not cover it (balanceCheck: block); its rows stay queued
 * and it is checked again on every run. `held`: nothing of it is sent until a new copy
 * of its file takes its rows over. `unusable`: the file could
 * not be read as payouts. `done`: every row is final.
 */
export const BATCH_STATES = [
  'admitting',
  'awaiting-approval',
  'open',
  'underfunded',
  'held',
  'refused',
  'unusable',
  'done',
] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** Moves allowed from each state. A state absent from its own list cannot repeat. */
const BATCH_TRANSITIONS: Readonly<Record<BatchState, readonly BatchState[]>> = {
  // Once the whole file has been read: what reading it found.
  admitting: ['awaiting-approval', 'open', 'held', 'unusable'],
  // Done: every row final, whatever the batch waited for (nothing of it is sent then).
  'awaiting-approval': ['open', 'refused', 'done'],
  open: ['underfunded', 'done'],
  // Checked again on every run: still short, with the balance of this run.
  underfunded: ['open', 'underfunded', 'done'],
  held: ['done'],
  refused: ['done'],
  unusable: ['done'],
  // `payouts retry` opens it again to send the new payout.
  done: ['open'],
};

export function canMoveBatch(from: BatchState, to: BatchState): boolean {
  return BATCH_TRANSITIONS[from].includes(to);
}
