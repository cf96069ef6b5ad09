/**
 * The gateway pool of a run: every request the engine makes (a create, a lookup by
 * orderId, a poll, a reconcile read) starts through it, so that together, not each loop
 * on its own, they keep to
 *   - `concurrency` tasks at once (a task is one claimed row's work: a create, a poll, or
 *     a lookup and the re-send it may lead to);
 *   - the request budget (at most maxRequestsPerSecond starts in any second, budget.ts);
 *   - a pause: when the gateway asks for less (a 429 and its Retry-After, at most
 *     `maxPauseMs`) or cannot be reached, no new request starts anywhere until it ends;
 *   - with hosts that keep the gateway's limits together (`together`, a PostgreSQL
 *     journal): a 429 one host was answered pauses them all, and each keeps to its part
 *     of the request budget. The pool grants no start on a look at the journal older than
 *     LOOK_STALE_MS;
 *   - the stop: nothing new starts after it, and requests in flight are abandoned
 *     STOP_GRACE_MS later.
 *
 * It lives in engine/, not gateway/: the client is the transport and stays usable alone
 * (balance, doctor, get); the pool is the run's policy over it.
 *
 * Hand-written rather than p-limit or p-queue: those queue a task until a place is free,
 * and a queued task here would be a claimed row, durably `sending` with its lease running
 * down, waiting for a place. Here rows are claimed only once the pool says how many may
 * start now (`startable`, `grant`), and a task starts the moment it is given (`run`).
 */
import { GatewayError } from '../gateway/errors.js';
import type { JournalLimits } from '../journal/journal.js';
import type { Clock } from '../runtime/clock.js';
import { BUDGET_WINDOW_MS, shareOf, type RequestBudget } from './budget.js';

/**
 * How long requests in flight may still finish after a stop before they are abandoned:
 * an abandoned create is ambiguous (`unknown`), and the next run looks it up. So a stop
 * takes effect within this, whatever the gateway does.
 */
export const STOP_GRACE_MS = 2_000;

/** How often a host sending looks at the journal, beside its requests, not before them. */
export const LOOK_EVERY_MS = 250;
/** How old a host's look may be when the pool grants a start: past it, the pool waits for one. */
export const LOOK_STALE_MS = 2 * LOOK_EVERY_MS;
/**
 * A host that starts sending beside others waits this long from its first look, so that
 * every other host has looked since (with a look's margin) and keeps to its smaller part,
 * and a window of the budget has passed.
 */
export const JOIN_AFTER_MS = LOOK_STALE_MS + LOOK_EVERY_MS + BUDGET_WINDOW_MS;
/**
 * A host that has not looked for this long is no longer sending: its part goes to the
 * others. Longer than JOIN_AFTER_MS, so none of its starts is left in their window; a host
 * waiting on answers in every place does not look meanwhile, and is counted this long.
 */
export const SENDING_WITHIN_MS = 5_000;

/** The hosts keeping the gateway's limits together, through their journal. */
export interface Together {
  journal: JournalLimits;
  /** This host's name, as the others see it. */
  host: string;
  /** The cluster's maxRequestsPerSecond, shared by the hosts sending; null: no cap. */
  perSecond: number | null;
  /**
   * Told once per pause of the hosts sending together, with how long it runs: `here` when
   * this host was answered the 429, else when it learns of another's.
   */
  onPaused: (ms: number, here: boolean) => void;
}

export interface GatewayPool {
  readonly concurrency: number;
  /** True when a request budget caps how many requests start each second. */
  readonly paced: boolean;
  /** The run's stop: nothing new starts after it. */
  readonly stop: AbortSignal;
  /** Tasks running now. */
  readonly running: number;
  /** Until when nothing new may start (ms since the epoch; in the past: no pause). */
  readonly pausedUntil: number;
  /**
   * Nothing new starts for `ms` (at most `maxPauseMs`) from now; a longer pause already set
   * stands. The gateway's 429 (`rate-limited`) pauses the hosts `together` as well; a
   * gateway this host could not reach may be its own network's fault, and pauses it alone.
   */
  pause(ms: number, cause: 'rate-limited' | 'unreachable'): void;
  /** How many tasks may start now: none while paused or stopped. */
  startable(): number;
  /**
   * Waits until at least one task may start, and says how many may; 0 once stopped.
   * Claim no more rows than this: a claim must not wait out its lease.
   */
  grant(): Promise<number>;
  /** Waits for what keeps the next task from starting: the pause, a place, the budget. */
  waitToStart(): Promise<void>;
  /** Starts `task` now, in a place and with one request start of the budget. */
  run(task: () => Promise<void>): Promise<void>;
  /**
   * Runs one task per item, all at once, and waits for every one before it throws the
   * first failure: no task is left writing to the journal after its caller has moved on
   * (and, say, closed it). Give no more items than `grant` allowed.
   */
  runAll<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void>;
  /**
   * Makes a request with a signal that aborts STOP_GRACE_MS after the stop, so that what
   * is in flight may end. The gateway's answer, or the GatewayError it failed with: both
   * are answers to the engine.
   */
  ask<T>(call: (options: { signal: AbortSignal }) => Promise<T>): Promise<T | GatewayError>;
  /**
   * One more request for a running task (the re-send after its lookup), in that task's
   * place: waits out the pause and the budget, but not a stop, since a task finishes what
   * it began.
   */
  startAnother(): Promise<void>;
  /** Resolves when a running task ends (at once when none runs). */
  taskEnded(): Promise<void>;
  /** Resolves when no task runs. */
  idle(): Promise<void>;
}

export function createGatewayPool(options: {
  concurrency: number;
  budget: RequestBudget;
  /** The longest a pause the gateway asks for is kept. */
  maxPauseMs: number;
  stop: AbortSignal;
  clock: Clock;
  together?: Together;
}): GatewayPool {
  const { concurrency, budget, maxPauseMs, stop, clock, together } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`Expected concurrency to be a whole number from 1, got ${concurrency}`);
  }
  const requestSignal = abandonedAfterStop(stop);
  const running = new Set<Promise<void>>();
  let pausedUntil = 0;
  let lookedAt = -Infinity;
  let looking: Promise<void> | undefined;
  // A host that has just begun sends only after one more look (see look).
  let mustLook = false;
  let othersSending = false;
  let joinedAt = -Infinity;
  // The end of the pause the hosts together keep, as far as this host knows: written once
  // per pause, however many answers of a burst were 429s.
  let sharedUntil = 0;
  // A pause this host shared, not yet written: the next look waits for it (and its failure).
  let sharing: Promise<void> = Promise.resolve();
  // Woken by any task that ends: O(1) per end, where racing every task in flight is O(n).
  let waiters: (() => void)[] = [];
  const taskEnded = (): Promise<void> =>
    running.size === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));

  /** Whether the pool must wait for a look before it grants a start. */
  const mustLookNow = (now: number): boolean =>
    together !== undefined && (now - lookedAt >= LOOK_STALE_MS || (mustLook && pausedUntil <= now));

  const lookNow = (hosts: Together): Promise<void> =>
    (looking ??= look(hosts).finally(() => (looking = undefined)));

  /** A look in the background while the requests go on, once the last is LOOK_EVERY_MS old. */
  const lookAhead = (now: number): void => {
    if (together === undefined || now - lookedAt < LOOK_EVERY_MS) return;
    // Its failure is met by the look the pool waits for once this one is stale.
    lookNow(together).catch(() => undefined);
  };

  const look = async (hosts: Together): Promise<void> => {
    await sharing;
    const sight = await hosts.journal.lookAtGateway(hosts.host, SENDING_WITHIN_MS);
    const now = clock.now();
    lookedAt = now;
    othersSending = sight.others.length > 0;
    const until = now + sight.pausedForMs;
    if (sight.pausedForMs > 0 && until > sharedUntil + LOOK_EVERY_MS) {
      hosts.onPaused(sight.pausedForMs, false);
    }
    sharedUntil = Math.max(sharedUntil, until);
    pausedUntil = Math.max(pausedUntil, until);
    if (hosts.perSecond === null) return;
    budget.keepTo(shareOf(hosts.perSecond, sight.others, hosts.host));
    // A host that has just begun looks once more before it sends, and so finds a host that
    // began at the same moment (their first looks could not see each other); beside others,
    // it waits for them to keep to smaller parts.
    mustLook = sight.joined;
    if (sight.joined) joinedAt = now;
    const waitUntil = sight.joined
      ? now + LOOK_EVERY_MS
      : othersSending
        ? joinedAt + JOIN_AFTER_MS
        : -Infinity;
    pausedUntil = Math.max(pausedUntil, waitUntil);
  };

  // Hosts together look again as they wait: a pause or their parts may change meanwhile,
  // and the others count a host that waits to send as sending.
  const nap = (ms: number): Promise<void> =>
    clock.sleep(together ? Math.min(ms, LOOK_EVERY_MS) : ms, stop);

  const startable = (): number => {
    const now = clock.now();
    if (stop.aborted || pausedUntil > now || mustLookNow(now)) return 0;
    lookAhead(now);
    return budget.available(now, concurrency - running.size);
  };

  const waitToStart = async (): Promise<void> => {
    const now = clock.now();
    if (together && mustLookNow(now)) return lookNow(together);
    lookAhead(now);
    if (pausedUntil > now) return nap(pausedUntil - now);
    if (running.size >= concurrency) return taskEnded();
    return nap(budget.nextAt(now) - now);
  };

  const run = (task: () => Promise<void>): Promise<void> => {
    budget.take(1, clock.now());
    const flight = task();
    // Counted until it ends, however it ends; the caller handles its failure.
    const place: Promise<void> = flight
      .catch(() => undefined)
      .finally(() => {
        running.delete(place);
        const woken = waiters;
        waiters = [];
        for (const wake of woken) wake();
      });
    running.add(place);
    return flight;
  };

  return {
    concurrency,
    paced: budget.capped,
    stop,
    get running() {
      return running.size;
    },
    get pausedUntil() {
      return pausedUntil;
    },
    pause(ms, cause) {
      const kept = Math.min(ms, maxPauseMs);
      const until = clock.now() + kept;
      pausedUntil = Math.max(pausedUntil, until);
      if (together && cause === 'rate-limited' && until > sharedUntil + LOOK_EVERY_MS) {
        sharedUntil = until;
        if (othersSending) together.onPaused(kept, true);
        sharing = Promise.all([sharing, together.journal.pauseGateway(Math.ceil(kept))]).then(
          () => undefined,
        );
        // Waited for by the next look, which fails the run with it.
        sharing.catch(() => undefined);
      }
    },
    startable,
    async grant() {
      for (;;) {
        const free = startable();
        if (free > 0 || stop.aborted) return free;
        await waitToStart();
      }
    },
    waitToStart,
    run,
    async runAll(items, task) {
      const outcomes = await Promise.allSettled(items.map((item) => run(() => task(item))));
      const failure = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failure) throw failure.reason;
    },
    async ask(call) {
      try {
        return await call({ signal: requestSignal });
      } catch (error) {
        if (error instanceof GatewayError) return error;
        throw error;
      }
    },
    async startAnother() {
      for (;;) {
        const now = clock.now();
        if (together && mustLookNow(now) && !stop.aborted) {
          await lookNow(together);
          continue;
        }
        const wait = Math.max(pausedUntil, budget.nextAt(now)) - now;
        if (wait <= 0 || stop.aborted) break;
        await nap(wait);
      }
      budget.take(1, clock.now());
    },
    taskEnded,
    async idle() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}

// One per stop signal: a daemon makes a pool each pass, all under the process's one stop,
// which must not gather a listener a pass.
const abandonSignals = new WeakMap<AbortSignal, AbortSignal>();

/** Aborts STOP_GRACE_MS after `stop` does. */
function abandonedAfterStop(stop: AbortSignal): AbortSignal {
  let signal = abandonSignals.get(stop);
  if (!signal) {
    const controller = new AbortController();
    // unref: a finished run must not wait for this timer to exit.
    const abandon = () => setTimeout(() => controller.abort(), STOP_GRACE_MS).unref();
    if (stop.aborted) abandon();
    else stop.addEventListener('abort', abandon, { once: true });
    signal = controller.signal;
    abandonSignals.set(stop, signal);
  }
  return signal;
}
