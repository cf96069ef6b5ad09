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

/**
 * One reading of a host's clock: its offset when the round trip settles which side of the
 * bound it is on, else only the round trip (the offset lies anywhere in a range that wide).
 */
export type ClockReading = { offsetMs: number } | { roundTripMs: number };

export function clockReading(
  sentMs: number,
  storeMs: number,
  answeredMs: number,
  boundMs: number,
): ClockReading {
  const [least, most] = [sentMs - storeMs, answeredMs - storeMs];
  const settled = least > boundMs || most < -boundMs || (least >= -boundMs && most <= boundMs);
  return settled
    ? { offsetMs: offsetOf(sentMs, storeMs, answeredMs) }
    : { roundTripMs: Math.round(answeredMs - sentMs) };
}

/** Readings taken, one after another, before a host's clock is said to be unknown. */
const CLOCK_READINGS = 3;

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
 * when it is beyond the bound, or when no reading could tell (never taken as right), else
 * undefined (always on a store that is one host's own).
 */
export async function hostClockOff(
  journal: JournalLocks,
  host: string,
  now: () => number,
  boundMs: number,
  watching: boolean,
): Promise<Said | undefined> {
  for (let read = 1; ; read++) {
    const reading = await journal.clockOffset(host, now, boundMs);
    if (reading === null) return undefined;
    if ('offsetMs' in reading) {
      const way = clockOff(reading.offsetMs, boundMs);
      if (way === undefined) return undefined;
      return { code: 'hostClockOff', host, offsetMs: reading.offsetMs, way, boundMs, watching };
    }
    if (read === CLOCK_READINGS)
      return {
        code: 'hostClockUnknown',
        host,
        roundTripMs: reading.roundTripMs,
        boundMs,
        watching,
      };
  }
}
