// Takeover (issue 31): from a host's SIGKILL to its rows being sent by another host, at the
// default lease, lock staleness and resendGrace. Each sample is a home of its own with two
// `payouts watch` processes (the first working, the second waiting for its lock) against a
// sandbox of its own with 50 ms latency; a file of ROWS rows dropped in the inbox; the
// first killed once the gateway has KILL_AFTER of them, its next rows claimed and in
// flight. Measured, in seconds from the kill: the second's first line after the lock is
// its (it took the home), the gateway's first payout created after that (its first send),
// and every row of the file at the gateway (rows the first had marked `sending` whose
// request never left are looked up after their lease and sent again only after
// resendGrace: minutes), with how many rows had been looked up by then.
// On SQLite both processes are one host (its name, the machine's): a dead process is seen
// by its pid; on PostgreSQL they are two hosts by name, so only the lock's heartbeat going
// stale frees it. Every sample of both stores runs at once (the figures are the timers',
// not the CPU's); prints each, then the median and max of each store, and the load. Minutes
// long: `npm run bench:takeover`, apart from `npm run bench`.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Database } from '../../dist/journal/sqlite.js';
import { writePayoutFile } from './support/brazilian-excel.mjs';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import { freshDatabase, loadAverage, median, startCluster } from './support/postgres.mjs';
import { hostsEnv, startHost, waitFor as waitWithin } from './support/watch-hosts.mjs';

const SAMPLES = Number(process.env.BENCH_TAKEOVER_SAMPLES ?? 3);
const ROWS = 1_000;
const KILL_AFTER = 100;
/** The longest a sample may take at any step: past it the benchmark fails. */
const BOUND_MS = 300_000;

/** Waits for `condition` within BOUND_MS. */
const waitFor = (what, condition) => waitWithin(what, condition, BOUND_MS);

// Rows found `sending` past their lease and looked up by orderId (the audit says so).
const LOOKED_UP = `SELECT COUNT(DISTINCT payout_id) AS n FROM audit WHERE to_state = 'unknown'`;

/** How many rows the journal at `where` (a SQLite file or a database's URL) looked up. */
async function lookedUpRows(where) {
  if (!where.startsWith('postgres://')) {
    const db = new Database(where, { readonly: true });
    try {
      return db.prepare(LOOKED_UP).get().n;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where });
  await client.connect();
  try {
    return Number((await client.query(LOOKED_UP)).rows[0].n);
  } finally {
    await client.end();
  }
}

/** One sample; `journalUrl` undefined: SQLite, the two processes one host. */
async function sample(journalUrl) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-takeover-'));
  const home = join(folder, 'home');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  const gateway = await startGatewayProcess(50, { settleDelay: '1s' });
  const env = hostsEnv({
    gatewayUrl: gateway.url,
    token: TOKEN,
    home,
    ...(journalUrl !== undefined && { PAYOUTS_JOURNAL: journalUrl }),
  });
  const hosts = [];
  try {
    const postgres = journalUrl !== undefined;
    const first = startHost(env, postgres ? 'host-1' : undefined);
    hosts.push(first);
    await waitFor('the first working', () => first.lines.length > 0);
    const second = startHost(env, postgres ? 'host-2' : undefined);
    hosts.push(second);
    await waitFor('the second waiting', () =>
      second.lines.some((line) => line.includes('waiting for it')),
    );
    // Written beside the inbox and moved in whole, so it is never seen half written.
    await writePayoutFile(join(home, 'folha.csv'), ROWS);
    renameSync(join(home, 'folha.csv'), join(home, 'inbox', 'folha.csv'));
    await waitFor(`${KILL_AFTER} payouts sent by the first`, async () => {
      return (await gateway.ledgerSize()) >= KILL_AFTER;
    });
    const waitingLines = second.lines.length;
    first.child.kill('SIGKILL');
    const killed = performance.now();
    await once(first.child, 'exit');
    const since = () => Number(((performance.now() - killed) / 1000).toFixed(1));
    await waitFor('the second taking the home', () => second.lines.length > waitingLines);
    const lockTaken = since();
    // What the first had in flight has reached the gateway by now: growth is the second's.
    const atTakeover = await gateway.ledgerSize();
    await waitFor('the second sending', async () => (await gateway.ledgerSize()) > atTakeover);
    const firstSend = since();
    await waitFor('every row at the gateway', async () => (await gateway.ledgerSize()) >= ROWS);
    const allSent = since();
    const orderIds = (await gateway.transactions()).map((entry) => entry.orderId);
    const twice = orderIds.length - new Set(orderIds).size;
    if (twice !== 0) throw new Error(`${twice} payouts created twice`);
    const lookedUp = await lookedUpRows(journalUrl ?? join(home, 'journal.db'));
    return { lockTaken, firstSend, allSent, sentBeforeKill: atTakeover, lookedUp };
  } finally {
    for (const host of hosts) {
      if (host.child.exitCode === null && host.child.signalCode === null) {
        host.child.kill('SIGKILL');
        await once(host.child, 'exit');
      }
    }
    gateway.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** SAMPLES samples at once on one store, each line printed, then their median and max. */
async function samplesOf(journal, databaseOf) {
  const samples = await Promise.all(
    Array.from({ length: SAMPLES }, async (_, index) => {
      const measured = await sample(await databaseOf(index));
      console.log(JSON.stringify({ bench: 'takeover-sample', journal, ...measured }));
      return measured;
    }),
  );
  const figure = (field) => ({
    median: median(samples.map((s) => s[field])),
    max: Math.max(...samples.map((s) => s[field])),
  });
  return {
    lockTakenSec: figure('lockTaken'),
    firstSendSec: figure('firstSend'),
    allSentSec: figure('allSent'),
    lookedUpRows: figure('lookedUp'),
  };
}

const { cluster, missing } = await startCluster();
try {
  const [sqlite, postgres] = await Promise.all([
    samplesOf('sqlite', async () => undefined),
    missing === undefined
      ? samplesOf('postgres', (index) => freshDatabase(cluster, `takeover_${index}`))
      : { skipped: missing },
  ]);
  console.log(
    JSON.stringify({
      bench: 'takeover',
      samples: SAMPLES,
      rows: ROWS,
      sqlite,
      postgres,
      loadAverage: loadAverage(),
    }),
  );
} finally {
  cluster?.stop();
}
