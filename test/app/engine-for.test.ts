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
