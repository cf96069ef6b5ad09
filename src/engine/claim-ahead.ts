/**
 * Rows claimed ahead of a free place in the pool, so that a place that frees sends one at
 * once rather than waiting for a claim's commit: `ahead` rows, topped up once half of them
 * are sent (docs/benchmarks.md). A top-up is claimed while the places go on sending (the
 * SQLite journal commits it off the event loop) and its rows join the others when it
 * returns. Places that had to wait for a top-up mean the answers outran the commits: it
 * then holds twice as many, up to `maxAhead`, so each commit claims more rows (back to
 * `ahead` if they wait too long for places). What it still holds when the run stops or
 * pauses is given back to the queue.
 */
import type { Said } from '../messages/said.js';
import type { Claim } from '../journal/journal.js';

/**
 * How long a row claimed ahead of a free place may wait for one before it is given back:
 * well inside its lease's margin beyond the longest request (2 s and a request time-out),
 * so its lease still covers its request, and its last-sent time (the re-send rule's
 * grace period starts there) is at most this early.
 */
export const AHEAD_MAX_WAIT_MS = 1_000;

/**
 * A claimed row, when it was asked for on the monotonic clock, and the marker's write of
 * its claim's commit, which its request waits for.
 */
export interface Claimed {
  claim: Claim;
  at: number;
  sendable: Promise<void>;
}

/**
 * What `fill` did: rows started (`filled`), the queue gave none for the places left
 * (`empty`), or a top-up on its way was awaited, so the places must be counted again
 * (`waited`).
 */
export type Filled = 'filled' | 'empty' | 'waited';

export interface ClaimAhead {
  /**
   * Starts a row in each of `free` places: those held first, then rows claimed for the
   * rest, with those to hold ahead in the same commit; or tops up what it holds.
   */
  fill(free: number, start: (row: Claimed) => void): Promise<Filled>;
  /** Gives back every row it holds, once a top-up on its way has come; says how many. */
  giveBack(why: Said): Promise<number>;
  /** Rows held now. */
  readonly held: number;
}

export function createClaimAhead(options: {
  /** How many rows to hold ahead of the places at first (0: none, as under a request budget). */
  ahead: number;
  /** The most it may come to hold, when its commits cannot keep up with the places. */
  maxAhead: number;
  /** Claims up to `limit` queued rows, `sending` durably before it returns. */
  claim: (limit: number) => Promise<Claim[]>;
  unclaim: (claims: readonly Claim[], reason: Said) => Promise<number>;
  /** The journal's `sendable`: asked as each claim returns, it covers that claim's rows. */
  sendable: () => Promise<void>;
  /** The process's monotonic clock, in ms: how long a row has been held. */
  elapsed: () => number;
  /** A top-up failed: the run ends with its error. */
  fail: (error: unknown) => void;
}): ClaimAhead {
  const { claim, unclaim, elapsed, fail } = options;
  let ahead = options.ahead;
  const ready: Claimed[] = [];
  // The last claim found fewer rows than it asked for: none is claimed ahead until a claim
  // for a free place finds the queue full again.
  let queueDry = false;
  let toppingUp: Promise<void> | undefined;

  /**
   * Claims `limit` rows; `at`, when they were asked for: the journal times their lease
   * from then, however long the commit then waits (for the disk, for another process's
   * write lock), so a row's age before its request leaves counts from then too.
   */
  const claimRows = async (limit: number): Promise<Claimed[]> => {
    const at = elapsed();
    const claims = await claim(limit);
    // Not the marker's latest write when the row leaves: that may be a later claim's.
    const sendable = options.sendable();
    // Each row's request awaits it as it leaves: a failed write is that request's error, not
    // the process's unhandled rejection while every row of the claim still waits ahead.
    sendable.catch(() => undefined);
    queueDry = claims.length < limit;
    return claims.map((claimed) => ({ claim: claimed, at, sendable }));
  };

  const topUp = (limit: number): void => {
    const claiming = claimRows(limit).then((rows) => void ready.push(...rows), fail);
    toppingUp = claiming;
    void claiming.finally(() => {
      if (toppingUp === claiming) toppingUp = undefined;
    });
  };

  /** Gives back the rows held from before `olderThan`; says how many. */
  const giveBackOlder = async (why: Said, olderThan: number): Promise<number> => {
    const count = ready.findIndex(({ at }) => at >= olderThan);
    const back = ready.splice(0, count < 0 ? ready.length : count).map((row) => row.claim);
    if (back.length > 0) {
      await unclaim(back, { code: 'auditClaimedAheadNotSent', why });
    }
    return back.length;
  };

  return {
    async fill(free, start) {
      const tooOld = elapsed() - AHEAD_MAX_WAIT_MS;
      // A grown hold outran the places: back to its first size. At that size, requests take
      // longer than a row may wait: holding rows ahead would only give back.
      if ((await giveBackOlder({ code: 'claimWaitedTooLong' }, tooOld)) > 0) {
        ahead = ahead > options.ahead ? options.ahead : 0;
      }
      const taken = ready.splice(0, free);
      for (const row of taken) start(row);
      const places = free - taken.length;
      const more =
        !queueDry && toppingUp === undefined && ready.length <= ahead / 2
          ? ahead - ready.length
          : 0;
      if (places === 0) {
        if (more > 0) topUp(more);
        return 'filled';
      }
      if (toppingUp !== undefined) {
        // The top-up on its way brings rows for these places; later ones claim more.
        ahead = Math.min(options.maxAhead, ahead * 2);
        await toppingUp;
        return 'waited';
      }
      const rows = await claimRows(places + more);
      for (const row of rows.slice(0, places)) start(row);
      ready.push(...rows.slice(places));
      return rows.length === 0 ? 'empty' : 'filled';
    },
    async giveBack(why) {
      await toppingUp;
      return giveBackOlder(why, Infinity);
    },
    get held() {
      return ready.length;
    },
  };
}
