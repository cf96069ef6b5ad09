// Gateway requests spent following 1,000 payouts that settle 30 s after creation, by
// polling alone and with the postback receiver on, against the ideal of one poll per
// payout; and by polling alone a batch whose every tenth payout settles at 60 s (the
// sandbox's `review@` key: an unknown word at 30 s, paid at 60 s). One after another,
// each against its own in-process sandbox and journal: run at once, the polls one mode
// makes together (a batch polled when it settles) would slow the others' in this one
// process. Each prints one JSON line: the polls, how long following took from the first
// send to the last payout seen settled, and how long after the last settlement that was;
// and the lookups by orderId asked before the batch's first send (checkFirstSends), with
// every request of following and checking a payout.
import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestBudget } from '../../dist/engine/budget.js';
import { sendQueued } from '../../dist/engine/engine.js';
import { checkFirstSends } from '../../dist/engine/first-send.js';
import { Doorbell, followPending, nudgeOnPostback } from '../../dist/engine/follow.js';
import { POLLING, POLLING_WITH_POSTBACKS } from '../../dist/engine/policy.js';
import { createGatewayPool } from '../../dist/engine/pool.js';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { startPostbackReceiver } from '../../dist/postback/receiver.js';
import { startSandbox } from '../../dist/sandbox/server.js';
import { systemClock } from '../../dist/runtime/clock.js';

const TOKEN = 'bench-token';
const PAYOUTS = 1_000;
const SETTLE_MS = 30_000;
const SECRET = 'bench-secret-bench-secret-bench-secret-0000';

/** The Pix key of payout `i`: in the mixed batch, every tenth settles twice as late. */
const pixKey = (mode, i) =>
  mode === 'mixed' && i % 10 === 5 ? `review+${i}@example.com` : `p${i}@example.com`;

async function follow(mode) {
  let polls = 0;
  let lookups = 0;
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: SETTLE_MS,
    initialBalanceCents: 1e12,
    onRequest: ({ path }) => {
      if (path.startsWith('/transaction/get/by/id/')) polls++;
      if (path.startsWith('/transaction/get/by/orderId/')) lookups++;
    },
  });
  const folder = mkdtempSync(join(tmpdir(), `payouts-bench-follow-${mode}-`));
  const journal = openJournal(sqliteJournalAt(join(folder, 'journal.db')));
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
          pixKey: pixKey(mode, i),
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
      elapsed: () => performance.now(),
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
    const check = await checkFirstSends(deps);
    if (check.kind !== 'clear') throw new Error(`first-send check: ${JSON.stringify(check)}`);
    await sendQueued(deps, options);
    const report = await followPending(deps, {
      ...options,
      doorbell,
      until: started + 10 * SETTLE_MS,
    });
    const ended = Date.now();
    const settled = (await journal.countsByState()).paid?.count ?? 0;
    // The sandbox writes its settlement times without a zone: UTC.
    const lastSettledAt = Math.max(
      ...sandbox.ledger().map((entry) => Date.parse(`${entry.processedAt}Z`)),
    );
    return {
      bench: 'follow',
      mode,
      payouts: PAYOUTS,
      settleAfterMs: SETTLE_MS,
      settled,
      pollRequests: polls,
      idealPollRequests: PAYOUTS,
      pollsPerPayout: Number((polls / PAYOUTS).toFixed(2)),
      firstSendLookups: lookups,
      lookupsPerPayout: Number(((polls + lookups) / PAYOUTS).toFixed(3)),
      // From the first send to the last settlement seen (the floor: just over 30 s, or 60).
      followMs: ended - started,
      // How long after the last settlement at the gateway it was seen.
      lastSeenLateMs: ended - lastSettledAt,
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

for (const mode of ['polling', 'postbacks', 'mixed'])
  console.log(JSON.stringify(await follow(mode)));
