import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestBudget } from '../../src/engine/budget.js';
import { sendQueued, type EngineDeps, type EngineOptions } from '../../src/engine/engine.js';
import {
  Doorbell,
  followPending,
  nudgeOnPostback,
  wakeOnPollNow,
  type FollowOptions,
} from '../../src/engine/follow.js';
import { startPostbackReceiver } from '../../src/postback/receiver.js';
import { createGatewayPool } from '../../src/engine/pool.js';
import { systemClock } from '../../src/runtime/clock.js';
import {
  POLLING_WITH_POSTBACKS,
  PROBES_PER_BATCH,
  type PollPolicy,
} from '../../src/engine/policy.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, cashOutRequest, clientFor } from '../support/gateway.js';

/** Fast polls for tests: 100 ms, growing by half, at most 400 ms. */
const QUICK: PollPolicy = { firstMs: 100, growth: 1.5, capMs: 400 };

describe('following pending payouts against the sandbox over HTTP', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let gateway: GatewayClient;
  let polls: number;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 300 });
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    const client = clientFor(sandbox.url, { requestTimeoutMs: 1000 });
    polls = 0;
    gateway = {
      ...client,
      getTransactionById: (id, options) => {
        polls++;
        return client.getTransactionById(id, options);
      },
    };
  });
  afterEach(async () => {
    await journal.close();
    await gateway.close();
    await sandbox.close();
  });

  const deps = (stop = new AbortController().signal): EngineDeps => ({
    journal,
    gateway,
    clock: systemClock,
    elapsed: () => performance.now(),
    random: createRandom(4),
    pool: createGatewayPool({
      concurrency: 8,
      budget: requestBudget(null),
      maxPauseMs: 60_000,
      stop,
      clock: systemClock,
    }),
  });
  const options = (overrides: Partial<FollowOptions> = {}): FollowOptions => ({
    owner: 'test',
    leaseMs: 30_000,
    graceMs: 60_000,
    maxUnreachable: 4,
    pollPolicy: QUICK,
    until: Date.now() + 10_000,
    ...overrides,
  });

  /** Admits one payout per Pix key (an e-mail key: `fail@…` fails, `review@…` shows an unknown word). */
  const admitKeys = async (keys: string[], prefix = 'f') => {
    const batchId = await journal.recordBatch(
      {
        fileName: 'payroll.csv',
        sha256: 'x',
        state: 'open',
        rows: keys.length,
        valid: keys.length,
        invalid: 0,
        totalCents: keys.length * 1234,
        problems: [],
      },
      [],
    );
    await journal.admitPayouts(
      batchId,
      keys.map((pixKey, i) => ({
        line: i + 2,
        request: cashOutRequest(`${prefix}-${i}`, { pixKeyType: 2, pixKey }),
      })),
      { duplicateWindowMs: 0 },
    );
  };

  const send = (overrides: Partial<EngineOptions> = {}) =>
    sendQueued(deps(), { ...options(), ...overrides });

  it('says a payout moved only once its move is in the journal', async () => {
    await admitKeys(['a@example.com', 'b@example.com', 'fail@example.com']);
    await send();
    // What a daemon's next pass reads when told: the journal as it stands at the call.
    const seen: Promise<number>[] = [];
    const settled = async () => {
      const counts = await journal.countsByState();
      return (counts.paid?.count ?? 0) + (counts.failed?.count ?? 0);
    };
    const report = await followPending(deps(), {
      ...options(),
      onMoved: () => seen.push(settled()),
    });
    expect(report.moved).toBe(3);
    const read = await Promise.all(seen);
    expect(read.length).toBeGreaterThan(0);
    // Each call sees at least one more payout settled than the one before it did.
    read.forEach((count, i) => expect(count).toBeGreaterThan(i === 0 ? 0 : (read[i - 1] ?? 0)));
  });

  it('follows each payout to paid or failed, polling by transactionId', async () => {
    await admitKeys(['a@example.com', 'b@example.com', 'fail@example.com']);
    await send();
    expect((await journal.countsByState()).pending?.count).toBe(3);
    const report = await followPending(deps(), options());
    expect(report).toMatchObject({ moved: 3, stopped: undefined, failed: false });
    expect(await journal.payout('f-0')).toMatchObject({
      state: 'paid',
      gatewayStatus: 'paid',
      endToEndId: expect.stringMatching(/^E/),
      processedAt: expect.any(String),
    });
    expect(await journal.payout('f-2')).toMatchObject({ state: 'failed', gatewayStatus: 'failed' });
    expect((await journal.history('f-0')).map((entry) => entry.to)).toEqual([
      'queued',
      'sending',
      'pending',
      'paid',
    ]);
    // Each polled at least once, and not on every loop turn: the schedule spaces them.
    expect(polls).toBeGreaterThanOrEqual(3);
    expect(polls).toBeLessThan(3 * 8);
  });

  it('an unknown status word is kept verbatim, not final, told once, and the row settles later', async () => {
    await admitKeys(['review@example.com', 'review+2@example.com']);
    await send();
    const told: string[] = [];
    const report = await followPending(
      deps(),
      options({ onUnknownStatus: (word) => told.push(word) }),
    );
    // Seen on both rows (the sandbox shows it for 300 ms), told once.
    expect(told).toEqual(['in_review']);
    expect(report.moved).toBe(2);
    expect(await journal.payout('f-0')).toMatchObject({ state: 'paid' });
  });

  it('stops at the end of its window with rows still pending; a later pass settles them', async () => {
    await admitKeys(['a@example.com', 'b@example.com']);
    // Held pending at the gateway, not by the clock: a slow window still sees nothing move.
    sandbox.settleAs('pending');
    await send();
    const first = await followPending(deps(), options({ until: Date.now() + 150 }));
    expect(first.moved).toBe(0);
    expect((await journal.countsByState()).pending?.count).toBe(2);
    sandbox.settleAs('by-key');
    const second = await followPending(deps(), options());
    expect(second.moved).toBe(2);
    expect(await journal.countsByState()).toEqual({ paid: { count: 2, cents: 2 * 1234 } });
  });

  it('claims due payouts many at a commit, not one a freed place', async () => {
    const count = 64;
    await admitKeys(Array.from({ length: count }, (_, i) => `k${i}@example.com`));
    // Every payout due at once, and polled again at once while pending.
    const now: PollPolicy = { firstMs: 1, growth: 1, capMs: 1 };
    await send({ pollPolicy: now });
    const claims: number[] = [];
    const counted = Object.assign(Object.create(journal) as Journal, {
      claimDue: async (owner: string, limit: number, leaseMs: number) => {
        const claimed = await journal.claimDue(owner, limit, leaseMs);
        if (claimed.length > 0) claims.push(claimed.length);
        return claimed;
      },
    });
    const report = await followPending(
      { ...deps(), journal: counted },
      options({ pollPolicy: now }),
    );
    expect(report).toMatchObject({ moved: count, failed: false });
    const claimed = claims.reduce((sum, n) => sum + n, 0);
    expect(claimed).toBeGreaterThanOrEqual(count);
    // Eight places: one a claim when each freed place claimed its own row.
    expect(claimed / claims.length).toBeGreaterThanOrEqual(4);
  });

  it('a slow answer holds only its own slot: the other payouts are polled on to paid meanwhile', async () => {
    await admitKeys(['slow@example.com', 'a@example.com', 'b@example.com']);
    await send();
    const slowId = (await journal.payout('f-0'))?.transactionId as number;
    const fast = gateway;
    let slowPolls = 0;
    // The first poll of one transaction gets no answer until the run stops (a gateway
    // that trickles it, say): only the request deadline or a stop would end it.
    gateway = {
      ...fast,
      getTransactionById: (id, callOptions) => {
        if (id !== slowId || slowPolls++ > 0) return fast.getTransactionById(id, callOptions);
        return new Promise((_, reject) =>
          callOptions?.signal?.addEventListener('abort', () => reject(new Error('stopped')), {
            once: true,
          }),
        );
      },
    };
    const stop = new AbortController();
    const following = followPending(deps(stop.signal), options());
    for (let i = 0; i < 500 && (await journal.countsByState()).paid?.count !== 2; i++)
      await delay(10);
    expect((await journal.payout('f-1'))?.state).toBe('paid');
    expect((await journal.payout('f-2'))?.state).toBe('paid');
    expect(slowPolls).toBe(1); // still in flight
    stop.abort();
    await following.catch(() => undefined);
  });

  it('a doorbell brings a sleeping loop back at once to a poll made due', async () => {
    await admitKeys(['a@example.com']);
    await send({ pollPolicy: { firstMs: 60_000, growth: 1, capMs: 60_000 } });
    // Settled at the gateway; our next poll is a minute away.
    for (let i = 0; i < 500 && sandbox.ledger()[0]?.status !== 'paid'; i++) await delay(10);
    expect(sandbox.ledger()[0]?.status).toBe('paid');
    const doorbell = new Doorbell();
    // The state, not a time: the loop has gone to sleep until that poll.
    let asleep: () => void = () => undefined;
    const sleeping = new Promise<void>((resolve) => (asleep = resolve));
    const following = followPending(
      {
        ...deps(),
        clock: {
          now: () => systemClock.now(),
          sleep: (ms, signal) => {
            asleep();
            return systemClock.sleep(ms, signal);
          },
        },
      },
      options({ doorbell, pollPolicy: { firstMs: 60_000, growth: 1, capMs: 60_000 } }),
    );
    await sleeping;
    const transactionId = (await journal.payout('f-0'))?.transactionId as number;
    expect(await journal.pollNow({ transactionId })).toBe(true);
    doorbell.ring();
    const report = await following;
    expect(report).toMatchObject({ polls: 1, moved: 1 });
    expect(await journal.pollNow({ transactionId: 999_999 })).toBe(false); // a transaction we do not follow
  });

  it('a doorbell full of names forgets the oldest, not the ones still waiting to be polled', () => {
    const doorbell = new Doorbell();
    for (let i = 0; i <= 10_000; i++) doorbell.ring({ orderId: `p-${i}` });
    expect(doorbell.takeNamed({ transactionId: null, orderId: 'p-0' })).toBe(false);
    expect(doorbell.takeNamed({ transactionId: null, orderId: 'p-1' })).toBe(true);
    expect(doorbell.takeNamed({ transactionId: null, orderId: 'p-10000' })).toBe(true);
  });

  describe("learning a batch's settle time from its first payouts", () => {
    /** Polls of each transaction, and a sandbox that settles `ms` after each create. */
    const pollsOf = new Map<number, number>();
    const settleAfter = async (ms: number) => {
      await sandbox.close();
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: ms });
      const client = clientFor(sandbox.url, { requestTimeoutMs: 1000 });
      pollsOf.clear();
      gateway = {
        ...client,
        getTransactionById: (id, options) => {
          polls++;
          pollsOf.set(id, (pollsOf.get(id) ?? 0) + 1);
          return client.getTransactionById(id, options);
        },
      };
    };
    /** Slower than QUICK, so that the growing schedule alone polls each payout 4 to 6 times. */
    const GROWING: PollPolicy = { firstMs: 100, growth: 1.5, capMs: 2_000 };
    const keys = (count: number, straggler = (_: number) => false) =>
      Array.from({ length: count }, (_, i) =>
        straggler(i) ? `review+${i}@example.com` : `k${i}@example.com`,
      );

    it('a batch settling together costs its probes their schedule and the others one poll each', async () => {
      await settleAfter(600);
      await admitKeys(keys(40));
      await send({ pollPolicy: GROWING });
      const report = await followPending(deps(), options({ pollPolicy: GROWING }));
      expect(report.moved).toBe(40);
      expect(await journal.countsByState()).toEqual({ paid: { count: 40, cents: 40 * 1234 } });
      // The growing schedule alone: 100, 250, 475, 812 ms... about five polls each.
      expect(polls).toBeLessThanOrEqual(2 * 40);
      const polledAgain = [...pollsOf.values()].filter((n) => n > 1).length;
      // The probes, and a few polled when their batch said, a little before they settled.
      expect(polledAgain).toBeLessThanOrEqual(2 * PROBES_PER_BATCH);
    });

    it('a later run, which learned nothing, resumes a batch an earlier one was following', async () => {
      await settleAfter(600);
      await admitKeys(keys(40));
      // Held pending at the gateway while the first run looks: its probes are polled, and
      // see nothing, however slow the machine.
      sandbox.settleAs('pending');
      await send({ pollPolicy: GROWING });
      const first = await followPending(
        deps(),
        options({ pollPolicy: GROWING, until: Date.now() + 400 }),
      );
      expect(first.moved).toBe(0);
      sandbox.settleAs('by-key');
      // The later run's polls alone: the first's, while held, grow with the machine's slowness.
      polls = 0;
      const second = await followPending(deps(), options({ pollPolicy: GROWING }));
      expect(second.moved).toBe(40);
      expect(await journal.countsByState()).toEqual({ paid: { count: 40, cents: 40 * 1234 } });
      expect(polls).toBeLessThanOrEqual(2 * 40);
    });

    it('a straggler, still pending when its batch says it should not be, is followed on to settlement', async () => {
      // Every tenth payout (the sandbox's review@ key) settles twice as late as the rest:
      // polled when its batch says, still pending (the unknown word), then followed on.
      await settleAfter(400);
      await admitKeys(keys(30, (i) => i % 10 === 9));
      await send({ pollPolicy: GROWING });
      const report = await followPending(deps(), options({ pollPolicy: GROWING }));
      expect(report.moved).toBe(30);
      expect(await journal.countsByState()).toEqual({ paid: { count: 30, cents: 30 * 1234 } });
    });

    it("no payout is left unpolled while its batch shows nothing: each is polled by its schedule's cap", async () => {
      await settleAfter(3_600_000);
      await admitKeys(keys(20));
      const policy: PollPolicy = { firstMs: 100, growth: 1.5, capMs: 300 };
      await send({ pollPolicy: policy });
      // Stopped once each has been polled; the window, far beyond the cap, only bounds it.
      const stop = new AbortController();
      const counting = gateway;
      gateway = {
        ...counting,
        getTransactionById: (id, callOptions) => {
          const answer = counting.getTransactionById(id, callOptions);
          if (pollsOf.size === 20) stop.abort();
          return answer;
        },
      };
      const report = await followPending(
        deps(stop.signal),
        options({ pollPolicy: policy, until: Date.now() + 20_000 }),
      );
      expect(report).toMatchObject({ moved: 0, stopped: 'asked to stop' });
      expect(pollsOf.size).toBe(20);
    });
  });

  describe('with the postback receiver', () => {
    const SECRET = 'a-test-secret-of-enough-length-0123456789';
    const settleAfter = async (ms: number) => {
      await sandbox.close();
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: ms });
      const client = clientFor(sandbox.url, { requestTimeoutMs: 1000 });
      gateway = {
        ...client,
        getTransactionById: (id, options) => {
          polls++;
          return client.getTransactionById(id, options);
        },
      };
    };

    it('postbacks bring each poll forward: fewer polls than polling alone', async () => {
      await settleAfter(1_500);
      const keys = Array.from({ length: 6 }, (_, i) => `k${i}@example.com`);
      await admitKeys(keys);
      await send();
      await followPending(deps(), options());
      const pollingAlone = polls;
      expect(await journal.countsByState()).toEqual({ paid: { count: 6, cents: 6 * 1234 } });

      // The same payouts under new orderIds (the sandbox is shared), with the receiver on.
      await journal.close();
      journal = await openJournal(sqliteJournalAt(join(folder(), 'journal-2.db')));
      await admitKeys(keys, 'g');
      polls = 0;
      const doorbell = new Doorbell();
      const stopWaking = await wakeOnPollNow(journal, doorbell);
      const receiver = await startPostbackReceiver({
        host: '127.0.0.1',
        port: 0,
        secret: SECRET,
        onPostback: nudgeOnPostback(journal),
      });
      try {
        const withPostbacks = {
          pollPolicy: POLLING_WITH_POSTBACKS,
          postbackUrl: `${receiver.url}/postback/${SECRET}`,
        };
        await send(withPostbacks);
        const report = await followPending(
          deps(),
          options({ ...withPostbacks, doorbell, until: Date.now() + 15_000 }),
        );
        expect(report.moved).toBe(6);
        expect(polls).toBe(6); // one poll each, made when its postback came
        expect(polls).toBeLessThan(pollingAlone);
      } finally {
        await receiver.close();
        await stopWaking();
      }
    });

    it("a forged postback changes nothing: the gateway's answer is the only truth", async () => {
      await settleAfter(3_600_000);
      await admitKeys(['a@example.com']);
      await send({ pollPolicy: POLLING_WITH_POSTBACKS });
      const doorbell = new Doorbell();
      const stopWaking = await wakeOnPollNow(journal, doorbell);
      const receiver = await startPostbackReceiver({
        host: '127.0.0.1',
        port: 0,
        secret: SECRET,
        onPostback: nudgeOnPostback(journal),
      });
      try {
        const transactionId = (await journal.payout('f-0'))?.transactionId as number;
        const forged = await fetch(`${receiver.url}/postback/${SECRET}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ transactionId, status: 'paid', orderId: 'f-0' }),
        });
        expect(forged.status).toBe(204);
        const report = await followPending(
          deps(),
          options({ pollPolicy: POLLING_WITH_POSTBACKS, doorbell, until: Date.now() + 500 }),
        );
        expect(report).toMatchObject({ polls: 1, moved: 0 }); // looked, and believed the gateway
        expect(await journal.payout('f-0')).toMatchObject({
          state: 'pending',
          gatewayStatus: 'pending',
        });
      } finally {
        await receiver.close();
        await stopWaking();
      }
    });
  });
});
