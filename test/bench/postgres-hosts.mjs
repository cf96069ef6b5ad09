// Two and three hosts on one PostgreSQL journal against one host (issue 31): payouts/s of
// real `payouts watch` processes, each a host by its name (PAYOUTS_HOST_NAME) with
// concurrency 16, on one home folder and one fresh database of the tests' throwaway
// cluster, against `payouts sandbox` as its own process with 50 ms latency. A file of ROWS
// rows is dropped in the inbox; one host takes it in, then every host sends its rows. 1, 2
// and 3 hosts in turn, RUNS times (each a home, database and gateway of its own). The
// rate is the rows over the send phase, from the first claim to the last answer in the
// journal's audit (so the file's intake is not in it, and is given apart); the ideal is
// hosts × 16 / 0.05 s. Checked in the same run: no orderId created twice at the gateway,
// every row at the gateway, and, from the audit, no row claimed while another host held
// it and every row sent by exactly one host. The payouts stay pending at the gateway (it
// settles them after an hour), so following is a batch's few probes, not a poll a payout.
// CPU of each process from /proc over the send phase (hosts, the database's server, the
// gateway), against the two cores' time. Prints a line a run, then the medians' ratios.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { writePayoutFile } from './support/brazilian-excel.mjs';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import {
  cpuMicrosOf,
  freshDatabase,
  loadAverage,
  median,
  schedMicrosOf,
  serverChildren,
  serverCpuMicros,
  startCluster,
} from './support/postgres.mjs';
import { hostsEnv, startHost, waitFor } from './support/watch-hosts.mjs';

const ROWS = Number(process.env.BENCH_HOSTS_ROWS ?? 8_000);
const RUNS = Number(process.env.BENCH_HOSTS_RUNS ?? 1);
const HOST_COUNTS = [1, 2, 3];
const CONCURRENCY = 16;
const LATENCY_MS = 50;
/** The longest a run may take at any step: past it the benchmark fails. */
const BOUND_MS = 600_000;

/**
 * How many rows the hosts have sent, on one connection kept for the run: a connection a
 * look (every 50 ms) cost the server a session's start each time, counted as the hosts'.
 */
async function sentRows(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let looks = 0;
  return {
    async count() {
      looks++;
      const { rows } = await client.query(
        `SELECT COUNT(*) FILTER (WHERE state NOT IN ('queued', 'sending')) AS sent FROM payouts`,
      );
      return Number(rows[0].sent);
    },
    end: () => client.end(),
    get looks() {
      return looks;
    },
  };
}

/**
 * The statements the database at `url` ran since its counts were reset, from
 * pg_stat_statements (loaded by the cluster's start below): calls and execution ms.
 */
async function statementsOf(url) {
  const [row] = await rowsOf(
    url,
    `SELECT SUM(calls)::bigint AS calls, SUM(total_exec_time) AS ms FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return { calls: Number(row.calls), ms: Number(row.ms) };
}

/** The rows `sql` reads from the database at `url`. */
async function rowsOf(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/**
 * The send phase from the audit: each payout's moves in order, a claim (`auditClaimed`,
 * its owner `host:…`) held until the row leaves `sending` (queued again: given back; any
 * other state: sent by the holder). Counts claims made while another was held, and rows
 * not sent exactly once.
 */
function sendsOf(audit) {
  const hosts = {};
  let overlapping = 0;
  let first = Infinity;
  let last = -Infinity;
  const sends = new Map();
  const holders = new Map();
  for (const { payout_id: id, at, from_state: from, to_state: to, reason } of audit) {
    const when = Number(at);
    if (to === 'sending' && reason.startsWith('{"code":"auditClaimed"')) {
      if (holders.has(id)) overlapping++;
      const host = JSON.parse(reason).owner.split(':')[0];
      holders.set(id, host);
      first = Math.min(first, when);
      hosts[host] ??= { sent: 0, claims: new Set(), firstClaimMs: when, lastAnswerMs: when };
      // A claim stamps its rows with one time: its rows' count a claim, near enough.
      hosts[host].claims.add(when);
    } else if (from === 'sending') {
      const host = holders.get(id);
      holders.delete(id);
      if (to === 'queued' || host === undefined) continue;
      sends.set(id, (sends.get(id) ?? 0) + 1);
      hosts[host].sent++;
      hosts[host].lastAnswerMs = when;
      last = Math.max(last, when);
    }
  }
  const notOnce = [...sends.values()].filter((n) => n !== 1).length;
  return { hosts, overlapping, notOnce, sentRows: sends.size, first, last };
}

/** utime + stime of live processes `pids`, in µs. */
const cpuOf = (pids) => pids.reduce((sum, pid) => sum + cpuMicrosOf(pid), 0);

/**
 * Of the run's processes (hosts, gateway, the server's), how long they waited, runnable,
 * for a core against how long they ran, between two readings of schedMicrosOf: far above
 * 1, the cores are what they wait for, not each other.
 */
function waitedForACore(before, after) {
  let onCpu = 0;
  let waiting = 0;
  for (const [pid, now] of after) {
    const then = before.get(pid) ?? { onCpu: 0, waiting: 0 };
    onCpu += now.onCpu - then.onCpu;
    waiting += now.waiting - then.waiting;
  }
  return Number((waiting / onCpu).toFixed(2));
}

async function measure(cluster, hostCount, run) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-hosts-'));
  const home = join(folder, 'home');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  const gateway = await startGatewayProcess(LATENCY_MS);
  const journalUrl = await freshDatabase(cluster, `hosts_${hostCount}_${run}`);
  const env = hostsEnv({
    gatewayUrl: gateway.url,
    token: TOKEN,
    home,
    PAYOUTS_JOURNAL: journalUrl,
    PAYOUTS_CONCURRENCY: String(CONCURRENCY),
    // The generated rows average R$ 4,600: the file's total is past the default cap.
    PAYOUTS_MAX_FILE_CENTS: String(ROWS * 1_000_000),
  });
  const hosts = [];
  try {
    for (let i = 1; i <= hostCount; i++) hosts.push(startHost(env, `host-${i}`));
    await waitFor(
      'every host watching',
      () => hosts.every((host) => host.lines.some((line) => line.includes('watching '))),
      BOUND_MS,
    );
    // Written beside the inbox and moved in whole, so it is never seen half written.
    await writePayoutFile(join(home, 'folha.csv'), ROWS);
    await rowsOf(journalUrl, 'CREATE EXTENSION pg_stat_statements');
    await rowsOf(journalUrl, 'SELECT pg_stat_statements_reset()');
    const sent = await sentRows(journalUrl);
    const pids = hosts.map((host) => host.child.pid);
    const ours = () => [...pids, gateway.pid, cluster.pid, ...serverChildren(cluster.pid)];
    const schedBefore = schedMicrosOf(ours());
    const before = {
      hosts: cpuOf(pids),
      server: serverCpuMicros(cluster.pid),
      gateway: gateway.cpuMicros(),
    };
    const dropped = Date.now();
    renameSync(join(home, 'folha.csv'), join(home, 'inbox', 'folha.csv'));
    try {
      await waitFor(
        'every row sent',
        async () => {
          const ended = hosts.find(({ child }) => child.exitCode !== null || child.signalCode);
          if (ended) throw new Error(`a host ended:\n${ended.lines.slice(-5).join('\n')}`);
          return (await sent.count()) >= ROWS;
        },
        BOUND_MS,
      );
    } finally {
      await sent.end();
    }
    const schedAfter = schedMicrosOf(ours());
    const after = {
      hosts: cpuOf(pids),
      server: serverCpuMicros(cluster.pid),
      gateway: gateway.cpuMicros(),
    };
    const wallMs = Date.now() - dropped;
    const statements = await statementsOf(journalUrl);
    const audit = await rowsOf(
      journalUrl,
      'SELECT payout_id, at, from_state, to_state, reason FROM audit ORDER BY payout_id, id',
    );
    const [admitted] = await rowsOf(
      journalUrl,
      'SELECT MIN(admitted_at) AS first, MAX(admitted_at) AS last FROM payouts',
    );
    const orderIds = (await gateway.transactions()).map((entry) => entry.orderId);
    const sends = sendsOf(audit);
    const sendSec = (sends.last - sends.first) / 1000;
    const checks = {
      atGateway: orderIds.length,
      createdTwice: orderIds.length - new Set(orderIds).size,
      claimsOverlapping: sends.overlapping,
      rowsNotSentOnce: sends.notOnce + (ROWS - sends.sentRows),
    };
    const perPayout = (field) => Math.round((after[field] - before[field]) / ROWS);
    const figures = {
      bench: 'postgres-hosts-run',
      hosts: hostCount,
      rows: ROWS,
      payoutsPerSec: Math.round(ROWS / sendSec),
      idealPerSec: (hostCount * CONCURRENCY * 1000) / LATENCY_MS,
      sendSec,
      intakeSec: (Number(admitted.last) - dropped) / 1000,
      firstSendAfterIntakeSec: (sends.first - Number(admitted.last)) / 1000,
      sentByHost: Object.fromEntries(
        Object.entries(sends.hosts).map(([host, h]) => [
          host,
          {
            sent: h.sent,
            rowsAClaim: Number((h.sent / h.claims.size).toFixed(1)),
            startSec: (h.firstClaimMs - sends.first) / 1000,
            endSec: (h.lastAnswerMs - sends.first) / 1000,
          },
        ]),
      ),
      cpuUsPerPayout: {
        hosts: perPayout('hosts'),
        server: perPayout('server'),
        gateway: perPayout('gateway'),
      },
      // The hosts' round trips (BEGIN and COMMIT among them; intake's too), the bench's
      // own looks and reset left out, and the server's time executing them.
      statementsAPayout: Number(((statements.calls - sent.looks - 1) / ROWS).toFixed(2)),
      serverExecUsAPayout: Math.round((statements.ms * 1000) / ROWS),
      // CPU seconds of the three kinds of process over the wall time: 2 is both cores.
      coresBusy: Number(
        (
          (after.hosts - before.hosts + after.server - before.server) / 1000 / wallMs +
          (after.gateway - before.gateway) / 1000 / wallMs
        ).toFixed(2),
      ),
      waitedForACore: waitedForACore(schedBefore, schedAfter),
      ...checks,
      loadAverage: loadAverage(),
    };
    console.log(JSON.stringify(figures));
    if (checks.createdTwice !== 0 || checks.claimsOverlapping !== 0 || checks.rowsNotSentOnce) {
      throw new Error(`hosts ${hostCount}: ${JSON.stringify(checks)}`);
    }
    if (checks.atGateway !== ROWS) throw new Error(`${checks.atGateway} of ${ROWS} at the gateway`);
    return figures;
  } finally {
    for (const { child } of hosts) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    }
    gateway.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'postgres-hosts', skipped: missing }));
} else {
  try {
    // Statements counted by the server: its module is loaded at start only.
    await rowsOf(cluster.url(), 'ALTER SYSTEM SET shared_preload_libraries = pg_stat_statements');
    await cluster.restart();
    const runs = Object.fromEntries(HOST_COUNTS.map((n) => [n, []]));
    for (let run = 0; run < RUNS; run++) {
      for (const n of HOST_COUNTS) runs[n].push(await measure(cluster, n, run));
    }
    const rate = (n) => median(runs[n].map((figures) => figures.payoutsPerSec));
    console.log(
      JSON.stringify({
        bench: 'postgres-hosts',
        rows: ROWS,
        runs: RUNS,
        concurrency: CONCURRENCY,
        latencyMs: LATENCY_MS,
        payoutsPerSec: Object.fromEntries(HOST_COUNTS.map((n) => [n, rate(n)])),
        ideal: Object.fromEntries(
          HOST_COUNTS.map((n) => [n, (n * CONCURRENCY * 1000) / LATENCY_MS]),
        ),
        twoOfOne: Number((rate(2) / rate(1)).toFixed(2)),
        threeOfOne: Number((rate(3) / rate(1)).toFixed(2)),
        loadAverage: loadAverage(),
      }),
    );
  } finally {
    cluster.stop();
  }
}
