import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestBudget } from '../../src/engine/budget.js';
import { resolveUnknown, sendQueued, type EngineDeps } from '../../src/engine/engine.js';
import { followPending } from '../../src/engine/follow.js';
import { POLLING } from '../../src/engine/policy.js';
import { STOP_GRACE_MS, createGatewayPool } from '../../src/engine/pool.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import type { Operation } from '../../src/gateway/errors.js';
import { type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, cashOutRequest, clientFor } from '../support/gateway.js';

/** Time moves only when the pool sleeps: a sleep of `ms` is over at once, `ms` later. */
function steppedClock(start = 1_000_000): Clock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal.aborted) return;
      slept.push(ms);
      now += Math.max(0, ms);
    },
  };
}

/** A task that ends when told to. */
function heldTask(): { task: () => Promise<void>; end: () => void } {
  let end = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { task: () => ended, end };
}

const poolOf = (
  clock: Clock,
  { concurrency = 4, perSecond = null as number | null, stop = new AbortController().signal } = {},
) =>
  createGatewayPool({
    concurrency,
    budget: requestBudget(perSecond),
    maxPauseMs: 60_000,
    stop,
    clock,
  });

describe('the gateway pool', () => {
  it('a pause holds back every start until it ends, and a shorter one never shortens it', async () => {
    const clock = steppedClock();
    const pool = poolOf(clock);
    expect(pool.startable()).toBe(4);
    pool.pause(5_000, 'rate-limited');
    pool.pause(1_000, 'rate-limited');
    expect(pool.startable()).toBe(0);
    expect(await pool.grant()).toBe(4);
    expect(clock.slept).toEqual([5_000]);
  });

  it('a pause lasts at most maxPauseMs, whatever the gateway asks', async () => {
    const clock = steppedClock();
    const pool = poolOf(clock);
    pool.pause(3_600_000, 'rate-limited');
    expect(await pool.grant()).toBe(4);
    expect(clock.slept).toEqual([60_000]);
  });

  it('never runs more tasks than its concurrency, and says when one ends', async () => {
    const pool = poolOf(steppedClock(), { concurrency: 2 });
    const first = heldTask();
    const second = heldTask();
    void pool.run(first.task);
    void pool.run(second.task);
    expect(pool.running).toBe(2);
    expect(pool.startable()).toBe(0);
    const ended = pool.taskEnded();
    first.end();
    await ended;
    expect(pool.running).toBe(1);
    expect(pool.startable()).toBe(1);
    second.end();
    await pool.idle();
    expect(pool.running).toBe(0);
  });

  it('keeps to the request budget, re-sends included', async () => {
    const clock = steppedClock();
    const pool = poolOf(clock, { perSecond: 2 });
    expect(await pool.grant()).toBe(2);
    await pool.runAll([1, 2], async () => undefined);
    expect(pool.startable()).toBe(0);
    await pool.startAnother();
    expect(clock.slept).toEqual([1_000]);
    expect(pool.startable()).toBe(1);
  });

  it('a failing task fails runAll only once every task has ended', async () => {
    const pool = poolOf(steppedClock());
    const slow = heldTask();
    let slowEnded = false;
    const all = pool.runAll(['fails', 'slow'], async (name) => {
      if (name === 'fails') throw new Error('the journal failed');
      await slow.task();
      slowEnded = true;
    });
    let settled = false;
    void all.then(
      () => (settled = true),
      () => (settled = true),
    );
    // The failing task has failed by now; runAll still waits for the slow one.
    await new Promise(setImmediate);
    expect(settled).toBe(false);
    slow.end();
    await expect(all).rejects.toThrow('the journal failed');
    expect(slowEnded).toBe(true);
  });

  it('after a stop nothing new starts, but a task still finishes what it began', async () => {
    const clock = steppedClock();
    const stop = new AbortController();
    const pool = poolOf(clock, { perSecond: 1, stop: stop.signal });
    pool.pause(60_000, 'rate-limited');
    stop.abort();
    expect(pool.startable()).toBe(0);
    expect(await pool.grant()).toBe(0);
    await pool.startAnother();
    expect(clock.slept).toEqual([]);
  });

  it('refuses a concurrency below 1', () => {
    expect(() => poolOf(steppedClock(), { concurrency: 0 })).toThrow(
      'Expected concurrency to be a whole number from 1, got 0',
    );
  });
});

describe('the stop reaches lookups and polls in flight, over HTTP', () => {
  // Far beyond what the test waits: only the stop can end a request that hangs.
  const REQUEST_TIMEOUT_MS = 60_000;
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let gateway: GatewayClient;
  let hanging: Operation[];

  beforeEach(async () => {
    hanging = [];
    sandbox = await startSandbox({
      token: TOKEN,
      settleDelayMs: 3_600_000,
      onRequest: ({ fault, path }) => {
        if (fault === 'hang')
          hanging.push(path.includes('orderId') ? 'getTransactionByOrderId' : 'getTransactionById');
      },
    });
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    gateway = clientFor(sandbox.url, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  });
  afterEach(async () => {
    await journal.close();
    await gateway.close();
    await sandbox.close();
  });

  const deps = (stop: AbortSignal): EngineDeps => ({
    journal,
    gateway,
    clock: systemClock,
    elapsed: () => performance.now(),
    random: () => 0.5,
    pool: createGatewayPool({
      concurrency: 4,
      budget: requestBudget(null),
      maxPauseMs: 60_000,
      stop,
      clock: systemClock,
    }),
  });
  const options = {
    owner: 'test',
    leaseMs: 2 * REQUEST_TIMEOUT_MS,
    graceMs: 2 * REQUEST_TIMEOUT_MS,
    maxUnreachable: 4,
    pollPolicy: { firstMs: 0, growth: 1, capMs: 0 },
  };

  const admitOne = async () => {
    const batchId = await journal.recordBatch(
      {
        fileName: 'payroll.csv',
        sha256: 'x',
        state: 'open',
        rows: 1,
        valid: 1,
        invalid: 0,
        totalCents: 1234,
        problems: [],
      },
      [],
    );
    await journal.admitPayouts(batchId, [{ line: 2, request: cashOutRequest('s-1') }], {
      duplicateWindowMs: 0,
    });
  };

  /** Starts `work`, stops it once the gateway holds its request, and times the stop. */
  const stopWhileHanging = async (
    operation: Operation,
    work: (deps: EngineDeps) => Promise<{ stopped: string | undefined }>,
  ) => {
    sandbox.setFaults({ serverErrorRate: 0, hangRate: 1, operations: [operation] });
    const stop = new AbortController();
    const working = work(deps(stop.signal));
    for (let i = 0; i < 500 && !hanging.includes(operation); i++) await delay(10);
    expect(hanging).toContain(operation);
    const stoppedAt = Date.now();
    stop.abort();
    const report = await working;
    return { report, tookMs: Date.now() - stoppedAt };
  };

  /**
   * Not before the grace (a timer never fires early), and far from the request's 60 s
   * time-out: a busy machine may add seconds, never tens of them.
   */
  const expectEndedByTheGrace = (tookMs: number) => {
    expect(tookMs).toBeGreaterThanOrEqual(STOP_GRACE_MS - 50);
    expect(tookMs).toBeLessThan(REQUEST_TIMEOUT_MS / 3);
  };

  it('a poll that never gets its answer ends STOP_GRACE_MS after a stop, not at its time-out', async () => {
    await admitOne();
    await sendQueued(deps(new AbortController().signal), { ...options, pollPolicy: POLLING });
    await journal.pollNow({ orderId: 's-1' });
    const { report, tookMs } = await stopWhileHanging('getTransactionById', (d) =>
      followPending(d, { ...options, until: Date.now() + REQUEST_TIMEOUT_MS }),
    );
    expect(report.stopped).toBe('asked to stop');
    expectEndedByTheGrace(tookMs);
    expect((await journal.payout('s-1'))?.state).toBe('pending');
  });

  it('a lookup that never gets its answer ends STOP_GRACE_MS after a stop, not at its time-out', async () => {
    await admitOne();
    sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
    await sendQueued(deps(new AbortController().signal), options);
    expect((await journal.payout('s-1'))?.state).toBe('unknown');
    const { report, tookMs } = await stopWhileHanging('getTransactionByOrderId', (d) =>
      resolveUnknown(d, options),
    );
    expect(report.stopped).toBeUndefined(); // a resolve pass ends early and quietly
    expectEndedByTheGrace(tookMs);
    expect(await journal.payout('s-1')).toMatchObject({ state: 'unknown', notFound: 0 });
    expect(sandbox.ledger()).toHaveLength(0); // and nothing was sent again
  });
});
