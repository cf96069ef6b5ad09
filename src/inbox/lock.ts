/**
 * One worker per home folder at a time on each host: `payouts run` and `payouts watch`
 * hold a lock in the journal while they work, renewed by a heartbeat. A second one on the
 * host waits or steps back with a clear message. On a journal hosts share (PostgreSQL)
 * each host has a lock of its own, and what is one host's at a time (an inbox file taken
 * and read, a batch finished) it takes by a claim that lives as long as its lock. The lock
 * is a courtesy on top of the row claims, which alone keep every payout to one sender: a
 * lock taken over from a stalled holder pays nobody twice, and the stalled holder, when it
 * wakes and finds its lock gone, stops.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { formatElapsed } from '../config/duration.js';
import type { JournalLocks, LockHolder, WorkClaim } from '../journal/journal.js';
import { JournalError } from '../journal/journal-error.js';
import type { Clock } from '../runtime/clock.js';
import { workerName } from '../runtime/worker-name.js';
import { sha256Of } from './folders.js';

/** The lock a process of `host` takes: the home's, or on a journal hosts share, the host's. */
export function homeLockName(host: string, perHost: boolean): string {
  return perHost ? `home@${host}` : 'home';
}
/** A holder silent this long is gone (it renews every HEARTBEAT_MS). */
const STALE_MS = 30_000;
export const HEARTBEAT_MS = 5_000;
const RETRY_MS = 1_000;
/** A daemon holding the home this long is there to stay: a cron run beside it is a setup to mend. */
const DAEMON_SETTLED_MS = 60 * 60 * 1000;

/** The commands that work on a home folder, one at a time. */
export type HomeCommand = 'run' | 'watch' | 'journal copy';

export interface HomeLock {
  release(): Promise<void>;
  /** What this worker takes for itself beside other hosts; none where it works alone. */
  claims: WorkerClaims | undefined;
}

/** What a worker takes for itself while it holds the home's lock: see JournalLocks.takeClaim. */
export interface WorkerClaims {
  take(claim: WorkClaim): Promise<{ taken: true } | { taken: false; host: string }>;
  release(claim: WorkClaim): Promise<void>;
}

/** Whether a process of this host is still running. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the home folder's lock, waiting up to `waitMs` (0: not at all) for its holder to
 * finish; `onWait` is told once who holds it. The holder, when it could not be taken.
 */
export async function lockHome(
  journal: JournalLocks,
  options: {
    command: HomeCommand;
    /** This host's name: a holder of this host is judged by its pid, another's by its heartbeat. */
    host: string;
    /** The journal is shared by hosts (PostgreSQL): the lock is this host's, not the home's. */
    perHost: boolean;
    waitMs: number;
    signal: AbortSignal;
    /** The process's clock, for the wait; the lock's own times are the journal's. */
    clock: Clock;
    onWait?: (holder: LockHolder) => void;
    /** The lock was taken over (this process stalled past STALE_MS) or cannot be renewed. */
    onLost: (why: string) => void;
    /**
     * The journal cannot be reached for now: the lock is tried again a heartbeat later.
     * Without it, that is the lock lost.
     */
    onAway?: (why: string) => void;
  },
): Promise<HomeLock | { heldBy: LockHolder }> {
  const me = {
    holder: workerName(options.host),
    host: options.host,
    pid: process.pid,
    command: options.command,
  };
  const { clock } = options;
  const name = homeLockName(options.host, options.perHost);
  const until = clock.now() + options.waitMs;
  let told = false;
  for (;;) {
    let attempt;
    try {
      attempt = await journal.takeLock(name, me, STALE_MS, isRunning);
    } catch (error) {
      if (!isAway(error) || !options.onAway) throw error;
      // A database restarting or cut off: the wait goes on, as for a holder.
      options.onAway(`the home folder lock could not be taken (${error.message})`);
      if (clock.now() >= until || options.signal.aborted) throw error;
      await clock.sleep(Math.min(RETRY_MS, until - clock.now()), options.signal);
      continue;
    }
    if (attempt.taken) break;
    if (clock.now() >= until || options.signal.aborted) return { heldBy: attempt.heldBy };
    if (!told) options.onWait?.(attempt.heldBy);
    told = true;
    await clock.sleep(Math.min(RETRY_MS, until - clock.now()), options.signal);
  }
  let released = false;
  const renew = async (): Promise<void> => {
    try {
      // A renewal answered after the release (the database slow or stalled) says nothing.
      if ((await journal.renewLock(name, me.holder)) || released) return;
      options.onLost(
        'the home folder lock was taken over by another process while this one stalled',
      );
    } catch (error) {
      if (released) return;
      // Still ours until it is stale: a heartbeat that finds it taken, once the journal is
      // back, stops this process; the row claims keep each payout to one sender meanwhile.
      if (isAway(error) && options.onAway) {
        options.onAway(`the home folder lock could not be renewed (${error.message})`);
        return;
      }
      options.onLost(`the home folder lock could not be renewed (${(error as Error).message})`);
    }
    clearInterval(heartbeat);
  };
  // Not awaited by the timer: renew catches what fails and says it through onLost.
  const heartbeat = setInterval(() => void renew(), HEARTBEAT_MS);
  heartbeat.unref();
  return {
    claims: options.perHost
      ? {
          take: (claim) => journal.takeClaim(claim, me, STALE_MS),
          release: (claim) => journal.releaseClaim(claim, me.holder),
        }
      : undefined,
    async release() {
      released = true;
      clearInterval(heartbeat);
      try {
        await journal.releaseLock(name, me.holder);
      } catch {
        // It ends with its heartbeat anyway, STALE_MS from now.
      }
    },
  };
}

/** A payout file as a claim, by its bytes; undefined when it is gone (another host moved it). */
export async function fileClaimOf(path: string): Promise<WorkClaim | undefined> {
  try {
    const { size } = statSync(path);
    return { kind: 'file', name: basename(path), size, sha256: await sha256Of(path) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** "the daemon, payouts watch, pid 123 on host, since 2026-11-23T07:00:00.000Z" */
export function describeHolder(holder: LockHolder): string {
  const command =
    holder.command === 'watch'
      ? 'the daemon, payouts watch, '
      : holder.command
        ? `payouts ${holder.command}, `
        : '';
  return `${command}pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}`;
}

/**
 * Why a run may not wait for the holder: the daemon has held the home for over an hour,
 * so cron's run would step back for ever (one of the two, not both). Undefined otherwise.
 */
export function daemonInTheWay(holder: LockHolder, now: number): string | undefined {
  const heldMs = now - holder.since;
  if (holder.command !== 'watch' || heldMs < DAEMON_SETTLED_MS) return undefined;
  return `another payouts process (${describeHolder(holder)}) has worked on this home folder for ${formatElapsed(heldMs)}: a cron payouts run never works beside the daemon. Use one of the two: remove the cron line, or stop the daemon. Nothing done.`;
}

/** The journal cannot be reached for now (its database restarting, the network cut). */
function isAway(error: unknown): error is JournalError {
  return error instanceof JournalError && error.kind === 'unavailable';
}
