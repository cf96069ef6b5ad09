/**
 * Hosts sharing a journal date its entries by their own clocks (the rules on who is paid
 * compare those dates), so each host measures its clock against the journal's store and
 * one further off than the bound claims and sends nothing until its clock is set right.
 */
import type { Said } from '../messages/said.js';
import type { JournalLocks } from './journal.js';

/**
 * How far a host's clock reads from the store's at least: the store read its clock at some
 * moment between the request's sending and its answer, which a network that stalled holds
 * seconds apart, so its middle would be no measure.
 */
export function offsetOf(sentMs: number, storeMs: number, answeredMs: number): number {
  if (sentMs > storeMs) return Math.round(sentMs - storeMs);
  if (answeredMs < storeMs) return Math.round(answeredMs - storeMs);
  return 0;
}

/** Whether an offset is beyond the bound, and which way. */
export function clockOff(offsetMs: number, boundMs: number): 'ahead' | 'behind' | undefined {
  if (Math.abs(offsetMs) <= boundMs) return undefined;
  return offsetMs > 0 ? 'ahead' : 'behind';
}

/**
 * How far two hosts' dates of one moment may differ, each within `boundMs` of the store:
 * twice the bound (one ahead, one behind) on a shared journal, none on one host's own.
 */
export function clockAllowanceMs(shared: boolean, boundMs: number): number {
  return shared ? 2 * boundMs : 0;
}

/**
 * This host's clock measured against the store's and kept as its last sight: what to say
 * when it is beyond the bound, else undefined (always on a store that is one host's own).
 */
export async function hostClockOff(
  journal: JournalLocks,
  host: string,
  now: () => number,
  boundMs: number,
  watching: boolean,
): Promise<Said | undefined> {
  const offsetMs = await journal.clockOffset(host, now);
  const way = offsetMs === null ? undefined : clockOff(offsetMs, boundMs);
  if (offsetMs === null || way === undefined) return undefined;
  return { code: 'hostClockOff', host, offsetMs, way, boundMs, watching };
}
