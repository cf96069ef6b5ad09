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
  /**
   * From now on at most `share` starts in any second (0 to `perSecond`): this host's part
   * of a limit that hosts keep together. The starts already made still count.
   */
  keepTo(share: number): void;
}

/** The span in which the budget counts starts. */
export const BUDGET_WINDOW_MS = 1_000;

/** A budget of `perSecond` starts per second; `null` grants everything at once. */
export function requestBudget(perSecond: number | null): RequestBudget {
  if (perSecond === null) {
    return {
      capped: false,
      available: (_now, atMost) => atMost,
      take: (wanted) => wanted,
      nextAt: (now) => now,
      keepTo: () => undefined,
    };
  }
  // A ring of the last `perSecond` start times, `next` the slot the next start takes. Under
  // a share s, a start is free once the s-th latest start is a window old.
  const starts = new Array<number>(perSecond).fill(-Infinity);
  let next = 0;
  let share = perSecond;
  const latest = (back: number) => starts[(next - back + perSecond) % perSecond] as number;
  const isFree = (taken: number, now: number) =>
    share > taken && latest(share - taken) <= now - BUDGET_WINDOW_MS;
  return {
    capped: true,
    available(now, atMost) {
      let free = 0;
      while (free < atMost && isFree(free, now)) free++;
      return free;
    },
    take(wanted, now) {
      let granted = 0;
      while (granted < wanted && isFree(0, now)) {
        starts[next] = now;
        next = (next + 1) % perSecond;
        granted++;
      }
      return granted;
    },
    nextAt(now) {
      // With no share, nothing is granted until another share comes: look again in a window.
      return share === 0 ? now + BUDGET_WINDOW_MS : Math.max(now, latest(share) + BUDGET_WINDOW_MS);
    },
    keepTo(part) {
      share = Math.max(0, Math.min(perSecond, part));
    },
  };
}

/**
 * This host's part of `perSecond` shared among `hosts` (its own name among them): an equal
 * part each, the remainder one more for each of the first hosts by name, so the parts add
 * up to the limit; with more hosts than the limit, the last by name get none.
 */
export function shareOf(perSecond: number, hosts: readonly string[], me: string): number {
  const names = [...new Set([...hosts, me])].sort();
  const rank = names.indexOf(me);
  return Math.floor(perSecond / names.length) + (rank < perSecond % names.length ? 1 : 0);
}
