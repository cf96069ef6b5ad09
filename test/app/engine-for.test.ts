import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
