/**
 * Crash points, for the crash tests: with `PAYOUTS_FAILPOINT=name` (or `name:n`) the
 * process kills itself with SIGKILL the first (or n-th) time it reaches the point `name`,
 * so a test can crash a real run at an exact step rather than at a lucky moment. With
 * `name:n:stop` it freezes there instead (SIGSTOP, as a VM pause would), after saying so
 * on stderr, until the test sends SIGCONT. With `name:n:throw` it throws an Error there,
 * as a store failing in a way none of its codes says would (a network database's
 * connection reset). Without the variable, reaching a point does nothing.
 */
import { writeSync } from 'node:fs';

export const FAILPOINT_VARIABLE = 'PAYOUTS_FAILPOINT';

/** The steps where the crash tests kill a run. */
export type Failpoint =
  /** Rows just committed `sending`; their requests have not left. */
  | 'after-sending-commit'
  /** The gateway has answered; the answers are not yet written to the journal. */
  | 'before-answer-commit'
  /** A file is journaled and the next one is not yet read. */
  | 'between-files'
  /** The journal is about to commit a chunk of what a file brings in. */
  | 'admitting-chunk'
  /** An unknown row just marked `sending` again for a re-send; the request has not left. */
  | 'after-resend-commit'
  /** A copy of the journal has written a chunk into PostgreSQL; nothing is committed. */
  | 'copying-chunk'
  /** Every row of a batch is final and its result written; its file is not yet archived. */
  | 'archiving-file'
  /** A file of approved/ is claimed and its batch read; it is not yet released nor moved. */
  | 'releasing-approved';

const [armedName, armedCount, armedAction] = (process.env[FAILPOINT_VARIABLE] ?? '').split(':');
let reached = 0;

export function failpoint(name: Failpoint): void {
  if (name !== armedName) return;
  reached++;
  if (reached !== Number(armedCount ?? 1)) return;
  if (armedAction === 'stop') {
    // Written at once: the test waits for this line before it takes the rows over.
    writeSync(2, `failpoint ${name}: stopped (SIGSTOP)\n`);
    process.kill(process.pid, 'SIGSTOP');
  } else if (armedAction === 'throw') throw new Error(`failpoint ${name}`);
  else process.kill(process.pid, 'SIGKILL');
}
