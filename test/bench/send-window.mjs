// The residual window of several hosts (issue 31, docs/several-hosts.md "The limit of the
// promise"): for each create the real engine sends, the time from its last check (its claim
// younger than half its lease, on the monotonic clock the engine is given) to the request's
// bytes handed to the socket (undici's `undici:request:bodySent`, published just after its
// `socket.write`). A pause inside that window is the one a host cannot see before its request
// leaves. Measured from outside the engine: `elapsed` notes each reading, and the real client,
// called in the same synchronous stretch as the check, ties it to the orderId; the bytes are
// tied back by the orderId in the request's body. Against the sandbox as its own process
// with 50 ms latency, journaled in PostgreSQL (a throwaway cluster) at concurrency 64 and 256,
// a busy machine's figures; the baseline of the same run: our client alone, from its call to
// the same event; beside them, the event loop's delay in the engine's run (a busy machine's
// part). Prints one JSON line a scenario: median, p99, p99.9 and max in ms.
import { channel } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { requestBudget } from '../../dist/engine/budget.js';
import { sendQueued } from '../../dist/engine/engine.js';
import { createGatewayPool } from '../../dist/engine/pool.js';
import { POLLING } from '../../dist/engine/policy.js';
import { openJournalForWork } from '../../dist/journal/open-for-work.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import { freshDatabase, loadAverage, startCluster } from './support/postgres.mjs';

const ROWS = Number(process.env.BENCH_WINDOW_ROWS ?? 8_000);
const SCENARIOS = [
  { concurrency: 64, latencyMs: 50 },
  { concurrency: 256, latencyMs: 50 },
];

/** When each orderId's create was checked, and when its bytes went to the socket. */
const checkedAt = new Map();
const windows = [];
let unmatched = 0;
const bodySent = channel('undici:request:bodySent');
bodySent.subscribe(({ request }) => {
  const at = performance.now();
  if (request.method !== 'POST' || request.body === null) return;
  const { orderId } = JSON.parse(request.body.toString('utf8'));
  const from = checkedAt.get(orderId);
  if (from === undefined) unmatched++;
  else windows.push(at - from);
  checkedAt.delete(orderId);
});

async function measure(cluster, { concurrency, latencyMs }, run) {
  const sandbox = await startGatewayProcess(latencyMs);
  const home = mkdtempSync(join(tmpdir(), 'payouts-bench-window-'));
  const journal = await openJournalForWork(
    { kind: 'postgres', url: await freshDatabase(cluster, `window_${run}`) },
    { home, historyFolders: [], now: Date.now, concurrency },
  );
  const gateway = createGatewayClient({
    baseUrl: sandbox.url,
    token: TOKEN,
    authScheme: '',
    getTransactionMethod: 'GET',
    connectTimeoutMs: 5000,
    requestTimeoutMs: 30_000,
    connections: concurrency,
  });
  try {
    const payouts = Array.from({ length: ROWS }, (_, i) => ({
      line: i + 2,
      request: {
        value: 100,
        pixKeyType: 2,
        pixKey: `p${i}@example.com`,
        cpfCnpj: String(10_000_000_000 + i),
        person: { name: `Pessoa ${i}`, email: `p${i}@example.com`, phone: '+5511987654321' },
        orderId: `w${run}-${i}`,
      },
    }));
    const batchId = await journal.recordBatch(
      {
        fileName: 'window.csv',
        sha256: 'x',
        state: 'open',
        rows: ROWS,
        valid: ROWS,
        invalid: 0,
        totalCents: ROWS * 100,
        problems: [],
      },
      [],
    );
    for (let at = 0; at < ROWS; at += 1000)
      await journal.admitPayouts(batchId, payouts.slice(at, at + 1000), { duplicateWindowMs: 0 });

    // The baseline: our client alone, from its call to the bytes at the socket.
    windows.length = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < ROWS / 4) {
          const request = { ...payouts[next++].request };
          request.orderId = `alone-${request.orderId}`;
          checkedAt.set(request.orderId, performance.now());
          await gateway.createCashOut(request);
        }
      }),
    );
    const alone = spread(windows);

    windows.length = 0;
    unmatched = 0;
    // The engine's last reading of its clock before a request is its check: the client is
    // called in the same synchronous stretch, so a reading older than this turn is none.
    let reading;
    const elapsed = () => {
      const now = performance.now();
      reading = now;
      queueMicrotask(() => (reading = undefined));
      return now;
    };
    const timed = {
      ...gateway,
      createCashOut: (request, options) => {
        if (reading === undefined) unmatched++;
        else checkedAt.set(request.orderId, reading);
        mostAtOnce = Math.max(mostAtOnce, checkedAt.size);
        return gateway.createCashOut(request, options);
      },
    };
    // Beside it, how late the process's event loop ran: what a busy machine adds to any wait.
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    let mostAtOnce = 0;
    const started = performance.now();
    const report = await sendQueued(
      {
        journal,
        gateway: timed,
        clock: systemClock,
        elapsed,
        random: Math.random,
        pool: createGatewayPool({
          concurrency,
          budget: requestBudget(null),
          maxPauseMs: 60_000,
          stop: new AbortController().signal,
          clock: systemClock,
          together: { journal, host: 'window', perSecond: null, onPaused: () => undefined },
        }),
      },
      {
        owner: 'window:1:a',
        leaseMs: 67_000,
        graceMs: 120_000,
        maxUnreachable: 8,
        pollPolicy: POLLING,
        admission: { duplicateWindowMs: 20 * 86_400_000, hintFlags: '' },
      },
    );
    lag.disable();
    const runMs = performance.now() - started;
    if (report.sent !== ROWS || windows.length !== ROWS)
      throw new Error(`sent ${report.sent}, measured ${windows.length} of ${ROWS} creates`);
    return {
      bench: 'send-window',
      journal: 'postgres',
      concurrency,
      latencyMs,
      creates: windows.length,
      unmatched,
      payoutsPerSec: Math.round(ROWS / (runMs / 1000)),
      engineMs: spread(windows),
      // Requests between their check and the socket: on average over the run (the windows'
      // sum over its length), and the most at one check.
      inWindow: {
        mean: Number((windows.reduce((sum, ms) => sum + ms, 0) / runMs).toFixed(2)),
        most: mostAtOnce,
      },
      clientAloneMs: alone,
      eventLoopDelayMs: {
        median: late(lag.percentile(50)),
        p99: late(lag.percentile(99)),
        max: late(lag.max),
      },
      loadAverage: loadAverage(),
    };
  } finally {
    await gateway.close();
    await journal.close();
    sandbox.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** A sample of the event loop's delay, in ns, as ms beyond the sampling's own 10 ms. */
const late = (ns) => Number(Math.max(0, ns / 1e6 - 10).toFixed(3));

/** Median, p99, p99.9 and max of `values`, in ms to the microsecond. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const ms = (value) => Number(value.toFixed(3));
  return {
    median: ms(at(0.5)),
    p99: ms(at(0.99)),
    p999: ms(at(0.999)),
    max: ms(sorted[sorted.length - 1]),
  };
}

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'send-window', skipped: missing }));
} else {
  try {
    let run = 0;
    for (const scenario of SCENARIOS)
      console.log(JSON.stringify(await measure(cluster, scenario, run++)));
  } finally {
    cluster.stop();
  }
}
