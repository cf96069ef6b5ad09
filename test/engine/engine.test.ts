import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sayInEnglish } from '../../src/messages/say.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { requestBudget } from '../../src/engine/budget.js';
import { POLLING } from '../../src/engine/policy.js';
import { createGatewayPool } from '../../src/engine/pool.js';
import { systemClock } from '../../src/runtime/clock.js';
import {
  resolveUnknown,
  sendQueued,
  type EngineDeps,
  type EngineOptions,
} from '../../src/engine/engine.js';
import { type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { refuseAnswers } from '../support/refuse-answers.js';
import { TOKEN, cashOutRequest, clientFor, closedPort, ledgerCounts } from '../support/gateway.js';

const GRACE_MS = 60_000;

describe('engine against the sandbox over HTTP, checked against its ledger', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let clients: GatewayClient[];
  let offset: number;
  const now = () => Date.now() + offset;
  // Every request the sandbox answered, in order: what reached the gateway.
  let received: { method: string; status: number }[];

  beforeEach(async () => {
    offset = 0;
    clients = [];
    received = [];
    // Payouts stay pending for the whole test: this is about sending, not settling.
    sandbox = await startSandbox({
      token: TOKEN,
      settleDelayMs: 3_600_000,
      onRequest: ({ method, status }) => void received.push({ method, status }),
    });
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')), { now });
  });
  afterEach(async () => {
    await journal.close();
    await Promise.all(clients.map((c) => c.close()));
    await sandbox.close();
  });

  const client = (overrides: Parameters<typeof clientFor>[1] = {}) => {
    const made = clientFor(sandbox.url, { requestTimeoutMs: 1000, ...overrides });
    clients.push(made);
    return made;
  };

  const deps = (
    gateway: GatewayClient,
    pool: {
      concurrency?: number;
      stop?: AbortSignal;
      perSecond?: number;
      elapsed?: () => number;
    } = {},
  ): EngineDeps => {
    const clock = { ...systemClock, now };
    return {
      journal,
      gateway,
      clock,
      elapsed: pool.elapsed ?? (() => performance.now()),
      random: createRandom(3),
      pool: createGatewayPool({
        concurrency: pool.concurrency ?? 8,
        budget: requestBudget(pool.perSecond ?? null),
        maxPauseMs: 60_000,
        stop: pool.stop ?? new AbortController().signal,
        clock,
      }),
    };
  };

  const options = (overrides: Partial<EngineOptions> = {}): EngineOptions => ({
    owner: 'test',
    leaseMs: 30_000,
    graceMs: GRACE_MS,
    maxUnreachable: 4,
    pollPolicy: POLLING,
    ...overrides,
  });

  const admit = async (count: number) => {
    const batchId = await recordOpenBatch(journal, 'payroll.csv', count);
    const ids = Array.from({ length: count }, (_, i) => `p-${String(i).padStart(4, '0')}`);
    await journal.admitPayouts(
      batchId,
      ids.map((id, i) => ({ line: i + 2, request: cashOutRequest(id) })),
      { duplicateWindowMs: 0 },
    );
    return ids;
  };

  type Created = ReturnType<GatewayClient['createCashOut']>;

  /** Every orderId exactly once at the gateway: no duplicate, no miss. */
  const expectLedgerHoldsEachOnce = (ids: string[]) => {
    const counts = ledgerCounts(sandbox);
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
  };

  const states = () => journal.countsByState();

  /** Resolution passes, moving the clock past the grace period between them. */
  const resolveAll = async (gateway: GatewayClient) => {
    for (let pass = 0; pass < 4 && ((await states()).unknown?.count ?? 0) > 0; pass++) {
      await resolveUnknown(deps(gateway), options());
      offset += GRACE_MS;
    }
  };

  it('sends every queued payout once', async () => {
    const ids = await admit(60);
    const report = await sendQueued(deps(client()), options());
    expect(report).toEqual({ sent: 60, stopped: undefined, failed: false });
    expect(await states()).toEqual({ pending: { count: 60, cents: 60 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
    expect(await journal.payout('p-0000')).toMatchObject({
      transactionId: expect.any(Number),
      gatewayStatus: '0',
      fee: '0.50',
    });
  });

  it('drop-response-after-commit: unknown rows are found by lookup and adopted, never sent twice', async () => {
    const ids = await admit(60);
    sandbox.setFaults({ seed: 5, dropAfterCommitRate: 0.3, operations: ['createCashOut'] });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    const unknown = (await states()).unknown?.count ?? 0;
    expect(unknown).toBeGreaterThan(5);
    const report = await resolveUnknown(deps(gateway), options());
    expect(report).toMatchObject({ adopted: unknown, resent: 0, conflicts: 0, stillUnknown: 0 });
    expect(await states()).toEqual({ pending: { count: 60, cents: 60 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
  });

  it('5xx before and after the commit: adopted when created, sent again after the grace period when not', async () => {
    const ids = await admit(60);
    sandbox.setFaults({
      seed: 6,
      serverErrorRate: 0.2,
      serverErrorAfterCommitRate: 0.2,
      operations: ['createCashOut'],
    });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    sandbox.setFaults({ serverErrorRate: 0, serverErrorAfterCommitRate: 0 });
    const first = await resolveUnknown(deps(gateway), options());
    expect(first.adopted).toBeGreaterThan(0);
    expect(first.stillUnknown).toBeGreaterThan(0); // not found once: not yet sent again
    expect(first.resent).toBe(0);
    await resolveAll(gateway);
    expect(await states()).toEqual({ pending: { count: 60, cents: 60 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
  });

  it('hangs past the client time-out: nothing is sent twice', async () => {
    const ids = await admit(30);
    sandbox.setFaults({ seed: 7, hangRate: 0.3, operations: ['createCashOut'] });
    const gateway = client({ requestTimeoutMs: 200 });
    await sendQueued(deps(gateway), options());
    expect((await states()).unknown?.count ?? 0).toBeGreaterThan(3);
    sandbox.setFaults({ hangRate: 0 });
    await resolveAll(gateway);
    expect(await states()).toEqual({ pending: { count: 30, cents: 30 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
  });

  it('429 bursts: the pool backs off and every payout goes once', async () => {
    const ids = await admit(40);
    sandbox.setFaults({
      seed: 8,
      rateLimitRate: 0.4,
      retryAfterSeconds: 0,
      operations: ['createCashOut'],
    });
    const report = await sendQueued(deps(client()), options());
    expect(report.stopped).toBeUndefined();
    // Counted once each, as the gateway created them: a 429 sent nothing.
    expect(report.sent).toBe(40);
    expect(await states()).toEqual({ pending: { count: 40, cents: 40 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
  });

  it('connection refused: the run gives up with rows queued, and a later run sends them', async () => {
    const ids = await admit(10);
    const nowhere = clientFor(`http://127.0.0.1:${await closedPort()}`);
    clients.push(nowhere);
    const down = await sendQueued(deps(nowhere), options({ maxUnreachable: 3 }));
    expect(down.stopped).toMatch(/could not be reached 3 times in a row/);
    expect(down.sent).toBe(0);
    expect(await states()).toEqual({ queued: { count: 10, cents: 10 * 1234 } });
    expect(sandbox.ledger()).toHaveLength(0);
    await sendQueued(deps(client()), options());
    expectLedgerHoldsEachOnce(ids);
  });

  it('401 in the middle of a batch stops sending; a rerun with the right token finishes', async () => {
    const ids = await admit(40);
    let answered = 0;
    const gateway = client();
    const wrapped: GatewayClient = {
      ...gateway,
      createCashOut: async (request, callOptions) => {
        if (++answered === 15) sandbox.setToken('rotated');
        return gateway.createCashOut(request, callOptions);
      },
    };
    const report = await sendQueued(deps(wrapped, { concurrency: 1 }), options());
    expect(report.stopped).toMatch(/refused our credentials/);
    expect(sandbox.ledger()).toHaveLength(14);
    expect(report.sent).toBe(14);
    expect((await states()).queued?.count).toBe(26);
    const fixed = client({ token: 'rotated' });
    await sendQueued(deps(fixed), options());
    expectLedgerHoldsEachOnce(ids);
  });

  /** The gateway client, counting the creates sent for each orderId. */
  const countingCreates = (
    gateway: GatewayClient,
    onCreate: (calls: number) => void = () => {},
  ) => {
    const creates = new Map<string, number>();
    let calls = 0;
    const counted: GatewayClient = {
      ...gateway,
      createCashOut: (request, callOptions) => {
        creates.set(request.orderId, (creates.get(request.orderId) ?? 0) + 1);
        onCreate(++calls);
        return gateway.createCashOut(request, callOptions);
      },
    };
    return { counted, creates };
  };

  /** Each row's attempts, as the journal counts them, are the creates sent for it. */
  const expectAttemptsAreCreates = async (ids: string[], creates: Map<string, number>) => {
    const attempts = await Promise.all(ids.map(async (id) => (await journal.payout(id))?.attempts));
    expect(attempts).toEqual(ids.map((id) => creates.get(id) ?? 0));
  };

  const givenBack = async (ids: string[]) =>
    (await Promise.all(ids.map((id) => journal.history(id))))
      .flat()
      .map((entry) => ({ from: entry.from, reason: sayInEnglish(entry.reason) }))
      .filter((entry) => entry.from === 'sending' && entry.reason.startsWith('claimed ahead'))
      .map((entry) => entry.reason);

  it('rows claimed ahead of a free place are given back when the gateway asks us to wait, and go later, once each', async () => {
    const ids = await admit(12);
    const { counted, creates } = countingCreates(client(), (calls) => {
      // One 429 (and those in flight with it) asking for a second's wait, then no more.
      if (calls === 5) {
        sandbox.setFaults({
          rateLimitRate: 1,
          retryAfterSeconds: 1,
          operations: ['createCashOut'],
        });
      } else if (calls === 6) sandbox.setFaults({ rateLimitRate: 0 });
    });
    // The process's clock held still: rows are given back for the pause, never for age.
    const report = await sendQueued(deps(counted, { concurrency: 4, elapsed: () => 0 }), options());
    expect(report.stopped).toBeUndefined();
    expect(await states()).toEqual({ pending: { count: 12, cents: 12 * 1234 } });
    expectLedgerHoldsEachOnce(ids);
    await expectAttemptsAreCreates(ids, creates);
    expect(await givenBack(ids)).toContain(
      'claimed ahead of its request and not sent (sending paused): queued again',
    );
  });

  it('places that free while a top-up waits for its commit are filled from the rows claimed ahead', async () => {
    const ids = await admit(12);
    const gateway = client();
    // Each create's answer is held until the test lets it go, one at a time.
    const held: (() => void)[] = [];
    let creates = 0;
    let holding = true;
    const oneByOne: GatewayClient = {
      ...gateway,
      createCashOut: async (request, callOptions) => {
        creates++;
        if (holding) await new Promise<void>((resolve) => held.push(resolve));
        return gateway.createCashOut(request, callOptions);
      },
    };
    /** Waits, within a bound, for the run to have sent `count` creates. */
    const sentUpTo = async (count: number) => {
      for (let look = 0; look < 500 && creates < count; look++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(creates, `creates sent, waiting for ${count}`).toBe(count);
    };
    // The process's clock held still: on a busy machine the rows claimed ahead would
    // otherwise age past their wait and be given back, which is not what this is about.
    const running = sendQueued(deps(oneByOne, { concurrency: 4, elapsed: () => 0 }), options());
    // Four places and four rows claimed ahead of them, in the first commit.
    await sentUpTo(4);
    // Another process takes the journal's write lock: the next claim waits for it.
    const other = new Database(journal.path);
    try {
      other.exec('BEGIN IMMEDIATE');
      // Each answer frees a place, filled at once from the rows claimed ahead; the second
      // leaves two of them, and a top-up is claimed, waiting for the lock.
      for (let answer = 0; answer < 4; answer++) {
        held.shift()?.();
        await sentUpTo(5 + answer);
      }
      other.exec('COMMIT');
    } finally {
      other.close();
      holding = false;
      for (const release of held.splice(0)) release();
    }
    const report = await running;
    expect(report).toMatchObject({ sent: 12, stopped: undefined });
    expectLedgerHoldsEachOnce(ids);
  });

  /**
   * The gateway client, its creates `at` and `at + 1` answered together: the first (a
   * success) frees its place and the loop starts its turn for answers, and the second is
   * read within that turn. `next` makes the second's request, given the first's answer.
   */
  const answeredInOneTurn = (
    gateway: GatewayClient,
    at: number,
    next: (first: Created, ...call: Parameters<GatewayClient['createCashOut']>) => Created,
  ): GatewayClient => {
    let calls = 0;
    let first: Created | undefined;
    let answerFirst: (answer: Created) => void = () => {};
    return {
      ...gateway,
      createCashOut: (request, callOptions) => {
        calls++;
        if (calls === at) {
          first = gateway.createCashOut(request, callOptions);
          return new Promise<Created>((resolve) => (answerFirst = resolve)).then(
            (answer) => answer,
          );
        }
        if (calls !== at + 1) return gateway.createCashOut(request, callOptions);
        const second = next(first as Created, request, callOptions);
        const both = Promise.allSettled([first, second]);
        answerFirst(both.then(() => first as Created));
        return both
          .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
          .then(() => second);
      },
    };
  };

  it('a pause that starts while the loop takes its turn for answers still gives back the rows claimed ahead at once', async () => {
    const ids = await admit(12);
    // The sixth create finds no gateway listening: refused, which pauses the pool (a back-off).
    const nowhere = client({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
    const ordered = answeredInOneTurn(client(), 5, (_, ...call) => nowhere.createCashOut(...call));
    // The process's clock held still: rows are given back for the pause, never for age.
    await sendQueued(deps(ordered, { concurrency: 4, elapsed: () => 0 }), options());
    expectLedgerHoldsEachOnce(ids);
    const back = await givenBack(ids);
    expect(back.length).toBeGreaterThan(0);
    expect(new Set(back)).toEqual(
      new Set(['claimed ahead of its request and not sent (sending paused): queued again']),
    );
  });

  it('a 401 read while the loop takes its turn for answers starts no row claimed ahead: they go back to the queue', async () => {
    const ids = await admit(12);
    const gateway = client();
    // The credentials are refused from the second create on, once the first is paid.
    const ordered = answeredInOneTurn(gateway, 1, (first, ...call) =>
      first.then(() => {
        sandbox.setToken('rotated');
        return gateway.createCashOut(...call);
      }),
    );
    // Two places, and two rows claimed ahead of them; the process's clock held still, so
    // that no row is given back for its age.
    const report = await sendQueued(deps(ordered, { concurrency: 2, elapsed: () => 0 }), options());
    expect(report).toMatchObject({
      sent: 1,
      stopped: expect.stringMatching(/refused our credentials/),
    });
    // The two creates in flight when the 401 came, and none after it.
    expect(received.map(({ status }) => status)).toEqual([200, 401]);
    expect(sandbox.ledger()).toHaveLength(1);
    expect(await states()).toEqual({
      pending: { count: 1, cents: 1234 },
      queued: { count: 11, cents: 11 * 1234 },
    });
    expect(await givenBack(ids)).toEqual([
      `claimed ahead of its request and not sent (${report.stopped}): queued again`,
      `claimed ahead of its request and not sent (${report.stopped}): queued again`,
    ]);
  });

  /**
   * The journal, its second claim (for the place the first answer frees) committed, then
   * held until `letGo`: what is read meanwhile is read while that claim is on its way.
   */
  const secondClaimHeld = () => {
    let letGo: () => void = () => {};
    let claimCommitted: () => void = () => {};
    const committed = new Promise<void>((resolve) => (claimCommitted = resolve));
    let claims = 0;
    const held: Journal = {
      ...journal,
      claimToSend: async (...args) => {
        const claimed = await journal.claimToSend(...args);
        if (++claims === 2) {
          claimCommitted();
          await new Promise<void>((resolve) => (letGo = resolve));
        }
        return claimed;
      },
    };
    return { journal: held, committed, letGo: () => letGo() };
  };

  it('a 401 read while a claim for a free place commits sends none of its rows: they go back to the queue', async () => {
    const ids = await admit(6);
    const gateway = client();
    const { journal: slowClaim, committed, letGo } = secondClaimHeld();
    let calls = 0;
    const refusedSecond: GatewayClient = {
      ...gateway,
      createCashOut: (request, callOptions) => {
        if (++calls !== 2) return gateway.createCashOut(request, callOptions);
        // The credentials are refused from the second create on, answered once that claim is in.
        const second = committed.then(() => {
          sandbox.setToken('rotated');
          return gateway.createCashOut(request, callOptions);
        });
        void second.catch(() => undefined).then(() => setImmediate(letGo));
        return second;
      },
    };
    // Under a request budget nothing is claimed ahead: each place's row is claimed for it.
    const report = await sendQueued(
      {
        ...deps(refusedSecond, { concurrency: 2, perSecond: 1_000, elapsed: () => 0 }),
        journal: slowClaim,
      },
      options(),
    );
    expect(report).toMatchObject({
      sent: 1,
      stopped: expect.stringMatching(/refused our credentials/),
    });
    // The two creates sent before the 401 was read, and none after it.
    expect(received.map(({ status }) => status)).toEqual([200, 401]);
    expect(await states()).toEqual({
      pending: { count: 1, cents: 1234 },
      queued: { count: 5, cents: 5 * 1234 },
    });
    expect(await journal.payout('p-0002')).toMatchObject({ state: 'queued', attempts: 0 });
    expect(
      (await journal.history('p-0002')).map(({ from, to, reason }) => [
        from,
        to,
        sayInEnglish(reason),
      ]),
    ).toContainEqual([
      'sending',
      'queued',
      `claimed and not sent (${report.stopped}): queued again`,
    ]);
  });

  it('a journal write that fails while a claim for a free place commits sends none of its rows', async () => {
    await admit(6);
    const { journal: slowClaim, committed, letGo } = secondClaimHeld();
    let heardFailure: () => void = () => {};
    void new Promise<void>((resolve) => (heardFailure = resolve)).then(() => setImmediate(letGo));
    // The answers' writes watched for their failure, not changed.
    const watched: Journal = {
      ...slowClaim,
      moveMany: (...args) =>
        journal.moveMany(...args).catch((error: unknown) => {
          heardFailure();
          throw error;
        }),
    };
    const gateway = client();
    let allow = () => {};
    let calls = 0;
    const refusedAfterClaim: GatewayClient = {
      ...gateway,
      createCashOut: (request, callOptions) => {
        if (++calls !== 2) return gateway.createCashOut(request, callOptions);
        // The disk refuses answers once that claim is in; the second create is paid.
        return committed.then(() => {
          allow = refuseAnswers(journal.path);
          return gateway.createCashOut(request, callOptions);
        });
      },
    };
    try {
      await expect(
        sendQueued(
          {
            ...deps(refusedAfterClaim, { concurrency: 2, perSecond: 1_000, elapsed: () => 0 }),
            journal: watched,
          },
          options(),
        ),
      ).rejects.toThrow('the disk refused the write');
    } finally {
      allow();
    }
    // The two creates sent before the failure was heard, and none after it.
    expect(received.map(({ status }) => status)).toEqual([200, 200]);
    expect(await journal.payout('p-0002')).toMatchObject({ state: 'queued', attempts: 0 });
  });

  it('a marker write that fails after a claim made only ahead ends the run with its error, not the process', async () => {
    let commits = 0;
    const marked = await openJournal(sqliteJournalAt(join(folder(), 'marked.db')), {
      now,
      // The first sending commit's marker is written; every later one fails, as a full disk.
      onSending: () =>
        ++commits === 1 ? Promise.resolve() : Promise.reject(new Error('marker: no space left')),
    });
    try {
      const batchId = await marked.recordBatch(
        {
          fileName: 'payroll.csv',
          sha256: 'x',
          state: 'open',
          rows: 12,
          valid: 12,
          invalid: 0,
          totalCents: 12 * 1234,
          problems: [],
        },
        [],
      );
      await marked.admitPayouts(
        batchId,
        Array.from({ length: 12 }, (_, i) => ({ line: i + 2, request: cashOutRequest(`m-${i}`) })),
        { duplicateWindowMs: 0 },
      );
      await expect(
        sendQueued({ ...deps(client(), { concurrency: 4 }), journal: marked }, options()),
      ).rejects.toThrow('marker: no space left');
      // Nothing left the process after the failed write but what the first commit covered:
      // the four places and the four rows claimed ahead of them.
      expect(sandbox.ledger().length).toBeLessThanOrEqual(8);
    } finally {
      await marked.close();
    }
  });

  it("a row's request waits for the marker write of its own claim, not for those of claims after it", async () => {
    let commits = 0;
    let hang = true;
    const hanging: (() => void)[] = [];
    const marked = await openJournal(sqliteJournalAt(join(folder(), 'marked.db')), {
      now,
      // The first sending commit's marker is written at once; later ones until let go.
      onSending: () =>
        ++commits === 1 || !hang
          ? Promise.resolve()
          : new Promise<void>((resolve) => hanging.push(resolve)),
    });
    const gateway = client();
    // Each create's answer is held until the test lets it go, one at a time.
    const held: (() => void)[] = [];
    let creates = 0;
    const oneByOne: GatewayClient = {
      ...gateway,
      createCashOut: async (request, callOptions) => {
        creates++;
        if (hang) await new Promise<void>((resolve) => held.push(resolve));
        return gateway.createCashOut(request, callOptions);
      },
    };
    /** Waits, within a bound, for `reached` to hold. */
    const until = async (what: string, reached: () => boolean) => {
      for (let look = 0; look < 500 && !reached(); look++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(reached(), what).toBe(true);
    };
    let running: Promise<unknown> | undefined;
    try {
      const batchId = await recordOpenBatch(marked, 'payroll.csv', 12);
      const ids = Array.from({ length: 12 }, (_, i) => `m-${i}`);
      await marked.admitPayouts(
        batchId,
        ids.map((id, i) => ({ line: i + 2, request: cashOutRequest(id) })),
        { duplicateWindowMs: 0 },
      );
      running = sendQueued(
        { ...deps(oneByOne, { concurrency: 4, elapsed: () => 0 }), journal: marked },
        options(),
      );
      // Four places and four rows claimed ahead of them, in the first commit.
      await until('4 creates', () => creates === 4);
      // Two answers free two places, filled from the rows held: two are left, and a
      // top-up is claimed, whose marker write hangs.
      for (const sent of [5, 6]) {
        held.shift()?.();
        await until(`${sent} creates`, () => creates === sent);
      }
      await until('a second sending commit', () => commits === 2);
      // The first claim's last two rows go: their commit's marker write is done.
      for (const sent of [7, 8]) {
        held.shift()?.();
        await until(`${sent} creates, a row of the first claim`, () => creates === sent);
      }
      hang = false;
      for (const release of [...hanging.splice(0), ...held.splice(0)]) release();
      expect(await running).toMatchObject({ sent: 12, stopped: undefined });
      expectLedgerHoldsEachOnce(ids);
    } finally {
      hang = false;
      for (const release of [...hanging.splice(0), ...held.splice(0)]) release();
      await running?.catch(() => undefined);
      await marked.close();
    }
  });

  it('a row claimed ahead that waits too long for a place is given back, not sent on a lease run down; then none is claimed ahead', async () => {
    const ids = await admit(6);
    // Each answer takes longer than a claim made ahead may wait for a free place.
    sandbox.setFaults({ latencyMs: 1_200 });
    const { counted, creates } = countingCreates(client({ requestTimeoutMs: 5_000 }));
    await sendQueued(deps(counted, { concurrency: 2 }), options());
    expectLedgerHoldsEachOnce(ids);
    await expectAttemptsAreCreates(ids, creates);
    // The two rows claimed ahead of the two places, each once; none is claimed ahead after.
    expect(await givenBack(ids)).toEqual([
      'claimed ahead of its request and not sent (it waited too long for a free place): queued again',
      'claimed ahead of its request and not sent (it waited too long for a free place): queued again',
    ]);
  });

  it('maxRequestsPerSecond: creates and lookups together never start more than the cap in any second', async () => {
    const ids = await admit(24);
    sandbox.setFaults({ seed: 9, dropAfterCommitRate: 0.4, operations: ['createCashOut'] });
    const gateway = client();
    const starts: number[] = [];
    const counted: GatewayClient = {
      ...gateway,
      createCashOut: (request, callOptions) => {
        starts.push(Date.now());
        return gateway.createCashOut(request, callOptions);
      },
      getTransactionByOrderId: (orderId, callOptions) => {
        starts.push(Date.now());
        return gateway.getTransactionByOrderId(orderId, callOptions);
      },
    };
    const capped = deps(counted, { perSecond: 8 });
    await sendQueued(capped, options());
    const report = await resolveUnknown(capped, options());
    expect(report.adopted).toBeGreaterThan(3);
    expectLedgerHoldsEachOnce(ids);
    expect(starts.length).toBe(24 + report.adopted);
    // Nothing claimed ahead under a budget: a claim would wait for its start, not a place.
    expect(await givenBack(ids)).toEqual([]);
    // Any 9 starts in a row span about a second: a start let past the cap goes at once,
    // near 0 ms; the slack is our reading of the time lagging the budget's on a busy machine.
    const spans = starts.slice(8).map((at, i) => at - (starts[i] as number));
    expect(Math.min(...spans)).toBeGreaterThanOrEqual(800);
  });

  it('stops sending when asked, journaling what was in flight', async () => {
    await admit(50);
    sandbox.setFaults({ latencyMs: 30 });
    const controller = new AbortController();
    // The stop comes as the eighth request starts: requests are in flight when it lands.
    const gateway = client();
    let started = 0;
    const stopping: typeof gateway = {
      ...gateway,
      createCashOut: (request, call) => {
        if (++started === 8) controller.abort();
        return gateway.createCashOut(request, call);
      },
    };
    const report = await sendQueued(
      deps(stopping, { concurrency: 4, stop: controller.signal }),
      options(),
    );
    expect(started).toBeLessThan(50);
    expect(report.stopped).toBe('asked to stop');
    const counts = await states();
    expect(counts.sending).toBeUndefined(); // every request that left was answered and journaled
    expect(counts.pending?.count).toBe(sandbox.ledger().length);
    expect((counts.queued?.count ?? 0) + (counts.pending?.count ?? 0)).toBe(50);
  });

  it('never re-sends on old not-found answers: a request that landed late is found and adopted', async () => {
    const ids = await admit(1);
    sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    sandbox.setFaults({ serverErrorRate: 0 });
    await resolveUnknown(deps(gateway), options()); // not found (1)
    await resolveUnknown(deps(gateway), options()); // not found (2), still within the grace period
    expect(await journal.payout('p-0000')).toMatchObject({ state: 'unknown', notFound: 2 });
    // The first request lands at the gateway late, after both lookups missed it.
    await gateway.createCashOut(cashOutRequest('p-0000'));
    offset += GRACE_MS;
    const report = await resolveUnknown(deps(gateway), options());
    expect(report).toMatchObject({ adopted: 1, resent: 0 });
    expectLedgerHoldsEachOnce(ids);
  });

  it('looks at every unknown row in a pass, not only the first few', async () => {
    await admit(40);
    sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    sandbox.setFaults({ serverErrorRate: 0 });
    const report = await resolveUnknown(deps(gateway, { concurrency: 8 }), options());
    expect(report.stillUnknown).toBe(40);
    for (let i = 0; i < 40; i++) {
      expect((await journal.payout(`p-${String(i).padStart(4, '0')}`))?.notFound).toBe(1);
    }
  });

  it('a re-send answered 429 created nothing: not counted as re-sent, and queued for the next send', async () => {
    await admit(1);
    sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    sandbox.setFaults({ serverErrorRate: 0 });
    await resolveUnknown(deps(gateway), options()); // not found (1)
    offset += GRACE_MS;
    sandbox.setFaults({ rateLimitRate: 1, operations: ['createCashOut'] });
    const report = await resolveUnknown(deps(gateway), options()); // not found (2): sent again
    expect(
      received.filter(({ method, status }) => method === 'POST' && status === 429),
    ).toHaveLength(1);
    expect(sandbox.ledger()).toHaveLength(0);
    expect(report).toMatchObject({ adopted: 0, resent: 0, conflicts: 0 });
    expect(await journal.payout('p-0000')).toMatchObject({ state: 'queued' });
  });

  it('a lookup that finds another amount under our orderId makes a conflict for a person, never adopted', async () => {
    await admit(1);
    sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
    const gateway = client();
    await sendQueued(deps(gateway), options());
    sandbox.setFaults({ serverErrorRate: 0 });
    await gateway.createCashOut(cashOutRequest('p-0000', { value: 999 }));
    const report = await resolveUnknown(deps(gateway), options());
    expect(report).toMatchObject({ adopted: 0, resent: 0, conflicts: 1 });
    expect(await journal.payout('p-0000')).toMatchObject({
      state: 'conflict',
      message: expect.stringContaining('a person must look'),
    });
    offset += 10 * GRACE_MS;
    await resolveUnknown(deps(gateway), options());
    expect(sandbox.ledger()).toHaveLength(1); // and it is never sent
  });
});
