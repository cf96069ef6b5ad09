import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { POLLING } from '../../src/engine/policy.js';
import { requestDeadlineMs } from '../../src/gateway/client.js';
import { engineFor } from '../../src/app/engine-for.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { useTempFolder } from '../support/files.js';
import { clientFor } from '../support/gateway.js';
import { systemClock } from '../../src/runtime/clock.js';
import { resolveUnknown } from '../../src/engine/engine.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { recordOpenBatch } from '../support/batch.js';
import { TOKEN, cashOutRequest } from '../support/gateway.js';
import { QUICK_TIMEOUTS } from '../support/home.js';
import type { Journal } from '../../src/journal/journal.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

describe('a claim outlives its request', () => {
  const folder = useTempFolder();

  it.each([
    [{}],
    [{ PAYOUTS_CONNECT_TIMEOUT: '1s', PAYOUTS_REQUEST_TIMEOUT: '3s', PAYOUTS_RESEND_GRACE: '1s' }],
    [{ PAYOUTS_CONNECT_TIMEOUT: '30s', PAYOUTS_REQUEST_TIMEOUT: '5m' }],
  ])('the lease and the grace period cover the request deadline (%j)', async (env) => {
    const { config } = loadConfig({ env });
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    const client = clientFor('http://127.0.0.1:9');
    try {
      const { engine } = engineFor(journal, client, config, {
        followMs: 0,
        signal: new AbortController().signal,
        pollPolicy: POLLING,
        clock: systemClock,
        note: () => undefined,
      });
      const deadline = requestDeadlineMs({
        connectTimeoutMs: config.connectTimeout,
        requestTimeoutMs: config.requestTimeout,
      });
      expect(engine.leaseMs).toBeGreaterThan(deadline);
      expect(engine.graceMs).toBeGreaterThanOrEqual(engine.leaseMs);
    } finally {
      await client.close();
      await journal.close();
    }
  });
});

describe('a row left sending by a process paused past its lease', () => {
  const folder = useTempFolder();

  it('is sent again only resendGrace after its lease ended, and then once', async () => {
    const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    // A clock that stands still but where the test moves it: each step is exactly where it is said.
    const start = Date.now();
    let offset = 0;
    const clock = { ...systemClock, now: () => start + offset };
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')), {
      now: clock.now,
    });
    const client = clientFor(sandbox.url);
    try {
      const { config } = loadConfig({ env: QUICK_TIMEOUTS });
      const wired = () =>
        engineFor(journal, client, config, {
          followMs: 0,
          signal: new AbortController().signal,
          pollPolicy: POLLING,
          clock,
          note: () => undefined,
        });
      const { engine } = wired();
      const batchId = await recordOpenBatch(journal, 'payroll.csv', 1);
      await journal.admitPayouts(batchId, [{ line: 2, request: cashOutRequest('p-1') }], {
        duplicateWindowMs: 0,
      });
      // Claimed by a process that then froze before its request left (or with it on its way).
      expect(await journal.claimToSend('frozen', 1, engine.leaseMs)).toHaveLength(1);
      const resolve = async (at: number) => {
        offset = at;
        const { deps } = wired();
        return resolveUnknown(deps, engine);
      };
      const leaseEnd = engine.leaseMs;
      expect(await resolve(leaseEnd)).toMatchObject({ stillUnknown: 1, resent: 0 });
      expect(await resolve(leaseEnd + 1)).toMatchObject({ stillUnknown: 1, resent: 0 });
      expect(await resolve(leaseEnd + config.resendGrace - 1)).toMatchObject({
        stillUnknown: 1,
        resent: 0,
      });
      expect(sandbox.ledger()).toHaveLength(0);
      expect(await resolve(leaseEnd + config.resendGrace)).toMatchObject({ resent: 1 });
      expect(sandbox.ledger().map((entry) => entry.orderId)).toEqual(['p-1']);
    } finally {
      await client.close();
      await journal.close();
      await sandbox.close();
    }
  });
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `the resend grace across hosts' clocks, on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();
    const opened: Journal[] = [];
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });
    /** The default maxClockSkew: how far each host's clock may be off the database's. */
    const BOUND_MS = 30_000;

    it('a row sent by a host behind, looked up by a host ahead, both within the bound: not sent again before resendGrace has truly passed', async () => {
      const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
      const url = await postgres.made('grace');
      const start = Date.now();
      let elapsed = 0;
      // The two hosts' clocks, each the bound off the true time, the other way.
      const behind = { ...systemClock, now: () => start + elapsed - BOUND_MS };
      const ahead = { ...systemClock, now: () => start + elapsed + BOUND_MS };
      const sender = await openPostgresJournal({ kind: 'postgres', url }, { now: behind.now });
      opened.push(sender);
      const resolver = await openPostgresJournal({ kind: 'postgres', url }, { now: ahead.now });
      opened.push(resolver);
      const client = clientFor(sandbox.url);
      try {
        const { config } = loadConfig({
          env: { ...QUICK_TIMEOUTS, PAYOUTS_MAX_CLOCK_SKEW: '30s', PAYOUTS_JOURNAL: url },
        });
        const wired = () =>
          engineFor(resolver, client, config, {
            followMs: 0,
            signal: new AbortController().signal,
            pollPolicy: POLLING,
            clock: ahead,
            note: () => undefined,
          });
        const { engine } = wired();
        // The grace as one clock measures it: from the lease's end, resendGrace.
        const graceMs = engine.leaseMs + config.resendGrace;
        const batchId = await recordOpenBatch(sender, 'payroll.csv', 1);
        await sender.admitPayouts(batchId, [{ line: 2, request: cashOutRequest('p-1') }], {
          duplicateWindowMs: 0,
        });
        // Claimed for a moment by a host that then froze, its request maybe on its way.
        expect(await sender.claimToSend('frozen', 1, 1)).toHaveLength(1);
        const resolve = async (at: number) => {
          elapsed = at;
          return resolveUnknown(wired().deps, engine);
        };
        // Its lease ends by the database's clock: the first not-found answer.
        await waitFor('the frozen claim to end', async () => (await resolve(0)).stillUnknown === 1);
        expect(await resolve(graceMs - 1)).toMatchObject({ stillUnknown: 1, resent: 0 });
        expect(sandbox.ledger()).toHaveLength(0);
        expect(await resolve(graceMs)).toMatchObject({ resent: 1 });
        expect(sandbox.ledger().map((entry) => entry.orderId)).toEqual(['p-1']);
        expect(config.maxClockSkew).toBe(BOUND_MS);
      } finally {
        await client.close();
        await sandbox.close();
      }
    });
  },
);
