/**
 * Nothing waits unseen (`pendingAlertAfter`): Pix settles in seconds, so a payout still
 * pending at the gateway longer than `pendingAlertAfter` is a question for a person, not
 * another "run again later". Said in the run's summary, on stderr even with --quiet, and
 * in `payouts status`.
 */
import { formatElapsed } from '../config/duration.js';
import type { JournalReports } from '../journal/journal.js';
import type { Said } from '../messages/said.js';

/** A batch's payouts pending longer than the alert age. */
export interface PendingTooLong {
  rows: number;
  /** How long the oldest of them has waited since it was sent (ms). */
  oldestAgeMs: number;
  /** The oldest one, to look up at the gateway. */
  orderId: string;
}

/** The batch's payouts pending for `alertAfterMs` or longer at `now`, if any. */
export async function pendingTooLong(
  journal: JournalReports,
  batchId: number,
  alertAfterMs: number,
  now: number,
): Promise<PendingTooLong | undefined> {
  const found = await journal.pendingSentBefore(batchId, now - alertAfterMs);
  return (
    found && {
      rows: found.rows,
      oldestAgeMs: now - found.oldestSentAt,
      orderId: found.oldestOrderId,
    }
  );
}

/** "1 pending for 2h 05m since it was sent: look it up at the gateway (payouts get --order-id X)" */
export function describePendingTooLong(pending: PendingTooLong, hintFlags = ''): Said {
  const { rows, orderId } = pending;
  return {
    code: 'pendingTooLong',
    rows,
    age: formatElapsed(pending.oldestAgeMs),
    orderId,
    hintFlags,
  };
}

/**
 * The line said on stderr even with --quiet: cron's log may keep stderr alone, and exit 2
 * by itself does not say what waits.
 */
export function warnPendingTooLong(file: string, pending: PendingTooLong, hintFlags = ''): Said {
  const { rows, orderId } = pending;
  const age = formatElapsed(pending.oldestAgeMs);
  return { code: 'pendingTooLongIn', file, rows, age, orderId, hintFlags };
}
