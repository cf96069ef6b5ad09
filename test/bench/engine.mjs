// Payouts/s through the engine (journal with synchronous=FULL + client), against the
// sandbox running as its own process (`payouts sandbox`), as a real gateway would be
// elsewhere. Each scenario runs in its own process for a clean peak RSS (the engine's;
// the sandbox's is not counted). With latency, the figure is compared with the ideal
// concurrency / latency; with none, it is the cost of the journal and the client per
// payout. Each is also compared, just before, with bare undici (ofBareUndici: what the
// transport reaches against the same gateway process, the floor of the ideal's gap) and
// with our client alone (ofClientAlone). CPU time per payout is given for both processes
// (process.cpuUsage for the engine's, /proc for the gateway's): a figure that holds on a
// busy machine, and that says which of the two bounds the rate on two cores. Prints one
// JSON line per scenario. A scenario given `journalUrl` journals in that PostgreSQL
// database instead of SQLite, and with `serverPid` (its postmaster) also gives the
// server's CPU time per payout (test/bench/postgres-engine.mjs); given `together`, its pool
// keeps the gateway's limits with other hosts through the journal, as `payouts run`'s does
// (test/bench/postgres-limits.mjs). BENCH_GATEWAY=lean
// measures against a lean stand-in instead (support/lean-gateway.mjs, also its own
// process): what the engine does when the gateway does not share its two cores' CPU with
// it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { requestBudget } from '../../dist/engine/budget.js';
import { sendQueued } from '../../dist/engine/engine.js';
import { createGatewayPool } from '../../dist/engine/pool.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { POLLING } from '../../dist/engine/policy.js';
import { openJournalForWork } from '../../dist/journal/open-for-work.js';
import { sqliteJournalAt } from '../../dist/journal/open.js';
import { Pool } from 'undici';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import { serverCpuMicros } from './support/postgres.mjs';

const GATEWAY = process.env.BENCH_GATEWAY ?? 'sandbox';
const SCENARIOS = [
  { concurrency: 16, latencyMs: 50, seconds: 10 },
  { concurrency: 64, latencyMs: 50, seconds: 10 },
  { concurrency: 256, latencyMs: 50, seconds: 10 },
  { concurrency: 64, latencyMs: 0, rows: 30_000 },
];

async function measure({ concurrency, latencyMs, seconds, rows, journalUrl, serverPid, together }) {
  const count = rows ?? Math.round((concurrency / latencyMs) * 1000 * seconds);
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-engine-'));
  const sandbox = await startGatewayProcess(latencyMs, { lean: GATEWAY === 'lean' });
  // As the CLI opens it: with its marker, written before each claim's requests leave.
  const location =
    journalUrl === undefined
      ? sqliteJournalAt(join(folder, 'journal.db'))
      : { kind: 'postgres', url: journalUrl };
  const journal = await openJournalForWork(location, {
    home: folder,
    historyFolders: [],
    now: Date.now,
    concurrency,
  });
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
    const batchId = await journal.recordBatch(
      {
        fileName: 'bench.csv',
        sha256: 'x',
        state: 'open',
        rows: count,
        valid: count,
        invalid: 0,
        totalCents: count,
        problems: [],
      },
      [],
    );
    const payouts = Array.from({ length: count }, (_, i) => ({
      line: i + 2,
      request: {
        value: 100,
        pixKeyType: 2,
        pixKey: `p${i}@example.com`,
        // A payee each, as in a payroll: one document repeated would make the cover rule
        // weigh every row against all the others.
        cpfCnpj: String(10_000_000_000 + i),
        person: { name: `Pessoa ${i}`, email: `p${i}@example.com`, phone: '+5511987654321' },
        orderId: `b-${i}`,
      },
    }));
    for (let at = 0; at < payouts.length; at += 1000)
      await journal.admitPayouts(batchId, payouts.slice(at, at + 1000), {
        duplicateWindowMs: 0,
      });
    // The baselines of the same run, each for half as many creates, at the same
    // concurrency against the same gateway process: bare undici (a Pool's request, the
    // body read, nothing checked), what the transport itself reaches here and now; then
    // our client alone, no journal. So the engine's own cost reads as a ratio on a busy
    // machine, and the ideal's gap as the transport's part and ours.
    const alone = Math.round(count / 2);
    const rate = async (create) => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < alone) await create(next++);
        }),
      );
      return alone / ((performance.now() - started) / 1000);
    };
    const bare = new Pool(sandbox.url, { connections: concurrency });
    const barePerSec = await rate(async (i) => {
      const response = await bare.request({
        path: '/transaction/cashout',
        method: 'POST',
        headers: { authorization: TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ ...payouts[i].request, orderId: `bare-${i}` }),
      });
      await response.body.json();
    });
    await bare.close();
    const alonePerSec = await rate((i) =>
      gateway.createCashOut({ ...payouts[i].request, orderId: `alone-${i}` }),
    );
    const gatewayCpuBefore = sandbox.cpuMicros();
    const serverCpuBefore = serverPid === undefined ? 0 : serverCpuMicros(serverPid);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const report = await sendQueued(
      {
        journal,
        gateway,
        clock: systemClock,
        elapsed: () => performance.now(),
        random: Math.random,
        pool: createGatewayPool({
          concurrency,
          budget: requestBudget(null),
          maxPauseMs: 60_000,
          stop: new AbortController().signal,
          clock: systemClock,
          // As engineFor wires it: the pool looks at the journal for the hosts' pause and parts.
          ...(together && {
            together: { journal, host: 'bench', perSecond: null, onPaused: () => undefined },
          }),
        }),
      },
      {
        owner: 'bench',
        leaseMs: 120_000,
        graceMs: 120_000,
        maxUnreachable: 8,
        pollPolicy: POLLING,
        // As `payouts run` claims: the cover rule checked again for each row (20 days).
        admission: { duplicateWindowMs: 20 * 86_400_000, hintFlags: '' },
      },
    );
    const seconds_ = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const gatewayCpu = sandbox.cpuMicros() - gatewayCpuBefore;
    const serverCpu = serverPid === undefined ? null : serverCpuMicros(serverPid) - serverCpuBefore;
    const ledger = await sandbox.ledgerSize();
    if (ledger !== count + 2 * alone || report.sent !== count)
      throw new Error(`sent ${report.sent}, ledger ${ledger}, expected ${count} and 2 × ${alone}`);
    const perSec = count / seconds_;
    const ideal = latencyMs > 0 ? (concurrency / latencyMs) * 1000 : undefined;
    return {
      bench: 'engine',
      journal: location.kind,
      together: Boolean(together),
      gateway: GATEWAY,
      concurrency,
      latencyMs,
      payouts: count,
      payoutsPerSec: Math.round(perSec),
      idealPerSec: ideal === undefined ? null : Math.round(ideal),
      ofIdeal: ideal === undefined ? null : Number((perSec / ideal).toFixed(3)),
      bareUndiciPerSec: Math.round(barePerSec),
      bareUndiciOfIdeal: ideal === undefined ? null : Number((barePerSec / ideal).toFixed(3)),
      ofBareUndici: Number((perSec / barePerSec).toFixed(3)),
      clientAlonePerSec: Math.round(alonePerSec),
      ofClientAlone: Number((perSec / alonePerSec).toFixed(3)),
      engineCpuUsPerPayout: Math.round((cpu.user + cpu.system) / count),
      gatewayCpuUsPerPayout: Math.round(gatewayCpu / count),
      ...(serverCpu !== null && { serverCpuUsPerPayout: Math.round(serverCpu / count) }),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    await gateway.close();
    await journal.close();
    sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'measure') {
  console.log(JSON.stringify(await measure(JSON.parse(process.argv[3]))));
} else {
  // `node engine.mjs 64/0 256/50` runs only those scenarios (concurrency/latency).
  const only = process.argv.slice(2);
  const chosen = SCENARIOS.filter(
    (s) => only.length === 0 || only.includes(`${s.concurrency}/${s.latencyMs}`),
  );
  for (const scenario of chosen) {
    const child = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), 'measure', JSON.stringify(scenario)],
      { encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(child.stderr);
    process.stdout.write(child.stdout);
  }
}
