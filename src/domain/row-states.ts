/**
 * The states of a payout row, the closed list both the journal and what people read
 * name. The moves between them are the journal's (src/journal/states.ts).
 */
export const ROW_STATES = [
  /** Refused by local validation; never sent. */
  'invalid',
  /** Valid and waiting to be sent. */
  'queued',
  /**
   * Stopped by a safety limit, the balance check or a rule on who is paid (a possible
   * duplicate, a file named as an earlier batch); its reason is kept, and sent only once
   * that reason is released.
   */
  'held',
  /**
   * Claimed, and its request committed as about to leave (within a second, or given back
   * to the queue unsent): the answer is not known yet.
   */
  'sending',
  /** Sent without a definite answer: resolved by lookup, never re-sent blindly. */
  'unknown',
  /** The gateway has it and has not settled it. */
  'pending',
  'paid',
  'failed',
  'canceled',
  'refunded',
  /** The gateway refused it (a 4xx with a message); never sent again. */
  'rejected',
  /** Never sent: an earlier payout of another file is this one (it is shown instead). */
  'covered',
  /** Never sent: a corrected copy of its file changed or left it out. */
  'superseded',
  /**
   * Never sent (again), for a person to look at: its orderId is journaled with another
   * payload, or the gateway holds another transaction under it, or it was refused on a
   * re-send after an attempt that may have been paid.
   */
  'conflict',
  /**
   * Failed, refused, canceled or refunded, and sent again on a person's request
   * (`payouts retry`) as a new payout under its orderId with an attempt suffix (`-r2`).
   */
  'retried',
] as const;
export type RowState = (typeof ROW_STATES)[number];
