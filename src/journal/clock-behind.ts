/**
 * The rules on who is paid compare times (a payout journaled after a row does not cover
 * it), so a command whose clock reads well before the journal's newest entry (an NTP step,
 * a virtual machine restored) writes nothing until the host's clock is set right.
 */
import { PayoutsError } from '../errors.js';
import { CATALOGS } from '../messages/catalog.js';
import type { Language } from '../messages/language.js';
import { say } from '../messages/say.js';
import { clockAllowanceMs } from './clock-skew.js';
import type { JournalStore } from './journal.js';

/** How far behind the journal a clock may read: the drift of an ordinary clock. */
export const CLOCK_DRIFT_ALLOWED_MS = 60_000;

/** `allowanceMs`: how far other hosts sharing the journal may have dated it ahead (clockAllowanceMs). */
export function clockBehind(nowMs: number, latestMs: number, allowanceMs = 0): boolean {
  return latestMs - nowMs > CLOCK_DRIFT_ALLOWED_MS + allowanceMs;
}

export class ClockBehindError extends PayoutsError {
  override readonly name = 'ClockBehindError';
}

/** Throws a ClockBehindError, in the home's language and time zone, when the clock is behind. */
export async function refuseClockBehind(
  journal: JournalStore,
  nowMs: number,
  home: {
    language: Language | null;
    timeZone: string;
    journal: string | null;
    maxClockSkew: number;
  },
): Promise<void> {
  const latestMs = await journal.latestAt();
  const allowanceMs = clockAllowanceMs(home.journal !== null, home.maxClockSkew);
  if (latestMs === undefined || !clockBehind(nowMs, latestMs, allowanceMs)) return;
  const words = CATALOGS[home.language ?? 'en'];
  throw new ClockBehindError(
    'journal',
    say(words, { code: 'clockBehindJournal', nowMs, latestMs, timeZone: home.timeZone }),
  );
}
