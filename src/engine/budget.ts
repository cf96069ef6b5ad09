/**
 * The request budget of a run: at most `perSecond` gateway requests start in any window
 * of one second, whatever they are (creates, lookups, polls), so following payouts never
 * pushes submission past a gateway's rate limit, nor the other way round.
 *
 * A sliding window of the last `perSecond` start times, rather than a token bucket: a
 * bucket lets a full burst follow a full second, twice the cap within one second.
 */

export interface RequestBudget {
  /** False when it grants everything at once (no cap on requests per second). */
  readonly capped: boolean;
  /** How many requests, up to `atMost`, may start at `now`. */
  available(now: number, atMost: number): number;
  /** Takes up to `wanted` request starts at `now`; returns how many were granted. */
  take(wanted: number, now: number): number;
  /** The earliest time at which one more start will be granted (`now` when one is free). */
  nextAt(now: number): number;
}

const WINDOW_MS = 1_000;

/** A budget of `perSecond` starts per second; `null` grants everything at once. */
export function requestBudget(perSecond: number | null): RequestBudget {
  if (perSecond === null) {
    return {
      capped: false,
      available: (_now, atMost) => atMost,
      take: (wanted) => wanted,
      nextAt: (now) => now,
    };
  }
  // A ring of the last `perSecond` start times; a slot is free once its time is a window old.
  const starts = new Array<number>(perSecond).fill(-Infinity);
  let oldest = 0;
  const isFree = (index: number, now: number) => (starts[index] as number) <= now - WINDOW_MS;
  return {
    capped: true,
    available(now, atMost) {
      let free = 0;
      while (free < Math.min(atMost, perSecond) && isFree((oldest + free) % perSecond, now)) free++;
      return free;
    },
    take(wanted, now) {
      let granted = 0;
      while (granted < wanted && isFree(oldest, now)) {
        starts[oldest] = now;
        oldest = (oldest + 1) % perSecond;
        granted++;
      }
      return granted;
    },
    nextAt(now) {
      return Math.max(now, (starts[oldest] as number) + WINDOW_MS);
    },
  };
}
