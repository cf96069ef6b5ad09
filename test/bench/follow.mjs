// Gateway requests spent following 1,000 payouts that settle 30 s after creation, by
// polling alone and with the postback receiver on, against the ideal of one poll per
// payout. Both run at once, each against its own in-process sandbox and journal, so
// they see the same clock. Prints one JSON line per mode.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestBudget } from '../../dist/engine/budget.js';
import { sendQueued } from '../../dist/engine/engine.js';
import { Doorbell, followPending, nudgeOnPostback } from '../../dist/engine/follow.js';
import { POLLING, POLLING_WITH_POSTBACKS } from '../../dist/engine/policy.js';
import { createGatewayPool } from '../../dist/engine/pool.js';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { openJournal } from '../../dist/journal/journal.js';
import { startPostbackReceiver } from '../../dist/postback/receiver.js';
import { startSandbox } from '../../dist/sandbox/server.js';
import { systemClock } from '../../dist/runtime/clock.js';

const TOKEN = 'bench-token';
const PAYOUTS = 1_000;
const SETTLE_MS = 30_000;
const SECRET = 'bench-secret-bench-secret-bench-secret-0000';

async function follow(mode) {
  let polls = 0;
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: SETTLE_MS,
    initialBalanceCents: 1e12,
    onRequest: ({ path }) => {
      if (path.startsWith('/transaction/get/by/id/')) polls++;
    },
  });
  const folder = mkdtempSync(join(tmpdir(), `payouts-bench-follow-${mode}-`));
  const journal = openJournal(join(folder, 'journal.db'));
  const gateway = createGatewayClient({
    baseUrl: sandbox.url,
    token: TOKEN,
    authScheme: '',
    getTransactionMethod: 'GET',
    connectTimeoutMs: 5000,
    requestTimeoutMs: 30_000,
    connections: 16,
  });
  const doorbell = new Doorbell();
  const receiver =
    mode === 'postbacks'
      ? await startPostbackReceiver({
          host: '127.0.0.1',
          port: 0,
          secret: SECRET,
          onPostback: nudgeOnPostback(journal, doorbell),
        })
      : undefined;
  try {
    const batchId = await journal.recordBatch(
      {
        fileName: 'bench.csv',
        sha256: mode,
        state: 'open',
        rows: PAYOUTS,
        valid: PAYOUTS,
        invalid: 0,
        totalCents: PAYOUTS * 100,
        problems: [],
      },
      [],
    );
    await journal.admitPayouts(
      batchId,
      Array.from({ length: PAYOUTS }, (_, i) => ({
        line: i + 2,
        request: {
          value: 100,
          pixKeyType: 2,
          pixKey: `p${i}@example.com`,
          cpfCnpj: '52998224725',
          person: { name: `Pessoa ${i}`, email: `p${i}@example.com`, phone: '+5511987654321' },
          orderId: `${mode}-${i}`,
        },
      })),
      { duplicateWindowMs: 0 },
    );
    const deps = {
      journal,
      gateway,
      clock: systemClock,
      random: Math.random,
      pool: createGatewayPool({
        concurrency: 16,
        budget: requestBudget(null),
        stop: new AbortController().signal,
        clock: systemClock,
      }),
    };
    const options = {
      owner: 'bench',
      leaseMs: 120_000,
      graceMs: 120_000,
      maxUnreachable: 8,
      pollPolicy: receiver ? POLLING_WITH_POSTBACKS : POLLING,
      postbackUrl: receiver ? `${receiver.url}/postback/${SECRET}` : undefined,
    };
    const started = Date.now();
    await sendQueued(deps, options);
    const report = await followPending(deps, {
      ...options,
      doorbell,
      until: started + 10 * SETTLE_MS,
    });
    const settled = (await journal.countsByState()).paid?.count ?? 0;
    return {
      bench: 'follow',
      mode,
      payouts: PAYOUTS,
      settleAfterMs: SETTLE_MS,
      settled,
      pollRequests: polls,
      idealPollRequests: PAYOUTS,
      pollsPerPayout: Number((polls / PAYOUTS).toFixed(2)),
      // How long after the last settlement it was seen.
      lastSeenLateMs: Date.now() - started - SETTLE_MS,
      followerPolls: report.polls,
    };
  } finally {
    await receiver?.close();
    await journal.close();
    await gateway.close();
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

const results = await Promise.all([follow('polling'), follow('postbacks')]);
for (const result of results) console.log(JSON.stringify(result));
