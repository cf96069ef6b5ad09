/**
 * Crash points, for the crash tests: with `PAYOUTS_FAILPOINT=name` (or `name:n`) the
 * process kills itself with SIGKILL the first (or n-th) time it reaches the point `name`,
 * so a test can crash a real run at an exact step rather than at a lucky moment. Without
 * the variable, reaching a point does nothing.
 */

export const FAILPOINT_VARIABLE = 'PAYOUTS_FAILPOINT';

/** The steps where the crash tests kill a run. */
export type Failpoint =
  /** Rows just committed `sending`; their requests have not left. */
  | 'after-sending-commit'
  /** The gateway has answered; the answers are not yet written to the journal. */
  | 'before-answer-commit'
  /** A file is journaled and the next one is not yet read. */
  | 'between-files'
  /** An unknown row just marked `sending` again for a re-send; the request has not left. */
  | 'after-resend-commit';

const [armedName, armedCount] = (process.env[FAILPOINT_VARIABLE] ?? '').split(':');
let reached = 0;

export function failpoint(name: Failpoint): void {
  if (name !== armedName) return;
  reached++;
  if (reached >= Number(armedCount ?? 1)) process.kill(process.pid, 'SIGKILL');
}
