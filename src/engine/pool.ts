/**
 * The gateway pool of a run: every request the engine makes (a create, a lookup by
 * orderId, a poll, a reconcile read) starts through it, so that together, not each loop
 * on its own, they keep to
 *   - `concurrency` tasks at once (a task is one claimed row's work: a create, a poll, or
 *     a lookup and the re-send it may lead to);
 *   - the request budget (at most maxRequestsPerSecond starts in any second, budget.ts);
 *   - a pause: when the gateway asks for less (a 429 and its Retry-After) or cannot be
 *     reached, no new request starts anywhere until it ends;
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
import type { Clock } from '../runtime/clock.js';
import type { RequestBudget } from './budget.js';

/**
 * How long requests in flight may still finish after a stop before they are abandoned:
 * an abandoned create is ambiguous (`unknown`), and the next run looks it up. So a stop
 * takes effect within this, whatever the gateway does.
 */
export const STOP_GRACE_MS = 2_000;

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
  /** Nothing new starts for `ms` from now; a longer pause already set stands. */
  pause(ms: number): void;
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
  stop: AbortSignal;
  clock: Clock;
}): GatewayPool {
  const { concurrency, budget, stop, clock } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`Expected concurrency to be a whole number from 1, got ${concurrency}`);
  }
  const requestSignal = abandonedAfterStop(stop);
  const running = new Set<Promise<void>>();
  let pausedUntil = 0;
  // Woken by any task that ends: O(1) per end, where racing every task in flight is O(n).
  let waiters: (() => void)[] = [];
  const taskEnded = (): Promise<void> =>
    running.size === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));

  const startable = (): number => {
    const now = clock.now();
    if (stop.aborted || pausedUntil > now) return 0;
    return budget.available(now, concurrency - running.size);
  };

  const waitToStart = async (): Promise<void> => {
    const now = clock.now();
    if (pausedUntil > now) return clock.sleep(pausedUntil - now, stop);
    if (running.size >= concurrency) return taskEnded();
    return clock.sleep(budget.nextAt(now) - now, stop);
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
    pause(ms) {
      pausedUntil = Math.max(pausedUntil, clock.now() + ms);
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
        const wait = Math.max(pausedUntil, budget.nextAt(now)) - now;
        if (wait <= 0 || stop.aborted) break;
        await clock.sleep(wait, stop);
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
