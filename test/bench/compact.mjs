// `payouts journal compact` on a journal of 1,000,000 finished payouts, each with the four
// audit entries a run writes (put straight in SQL, as periodic.mjs builds its journals):
// the journal's bytes before and after (the file, its WAL, the pages in use), the bytes a
// payout keeps for ever, the time it took, and the longest the write lock was held at once.
// Prints one JSON line. `BENCH_COMPACT_PAYOUTS=100000` for another size (`npm run build` first).
//
// `node test/bench/compact.mjs watch`: the same journal in a home a `payouts watch` child
// works on against the sandbox (a child process, real HTTP on 127.0.0.1). A file of
// BENCH_COMPACT_ROWS rows (default 1,000) is paid before the compaction, another while a
// `payouts journal compact` child runs: each file's payouts/s (dropped to archived), the
// health line's answer (GET /healthz, every 200 ms) in each phase, the compaction's
// longest hold of the write lock, its time, and the journal's bytes before and after.
// `watch postgres`: the same with the journal in a database of a throwaway PostgreSQL
// cluster (test/support/postgres.ts's, loopback only).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { withCheckDigits } from '../../dist/domain/check-digits.js';
import { compactJournal } from '../../dist/app/compact.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { sqliteBinding } from '../../dist/runtime/sqlite.js';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import pg from 'pg';
import { addPaidPayoutsPostgres, addPayouts } from './support/old-payouts.mjs';
import { freshDatabase, loadAverage, startCluster } from './support/postgres.mjs';
import { hostsEnv, startHost, waitFor } from './support/watch-hosts.mjs';

const PAYOUTS = Number(process.env.BENCH_COMPACT_PAYOUTS ?? 1_000_000);
const ROWS = Number(process.env.BENCH_COMPACT_ROWS ?? 1_000);
/** How long a file of ROWS rows, or the compaction, may take on a loaded machine. */
const PHASE_BOUND_MS = 30 * 60_000;
const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));

/** Bytes of the pages that hold data (not free), as the journal's file has them. */
function inUse(path) {
  const db = new (sqliteBinding())(path, { readonly: true });
  try {
    const pages =
      db.pragma('page_count', { simple: true }) - db.pragma('freelist_count', { simple: true });
    return pages * db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
}

/** PAYOUTS paid payouts with their history put in the journal at `journal`: the ms it took. */
function fill(journal) {
  const db = new (sqliteBinding())(journal);
  const built = performance.now();
  for (let added = 0; added < PAYOUTS; added += 1_000_000) {
    addPayouts(db, { count: Math.min(1_000_000, PAYOUTS - added), state: 'paid', history: true });
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return performance.now() - built;
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-compact-'));
const journal = join(folder, 'journal.db');
try {
  if (process.argv[2] === 'watch') await besideDaemon();
  else await alone();
} finally {
  rmSync(folder, { recursive: true, force: true });
}

async function alone() {
  await (await openJournal(sqliteJournalAt(journal))).close();
  const buildMs = fill(journal);
  const usedBefore = inUse(journal);
  mkdirSync(join(folder, 'archive'));
  const began = performance.now();
  const done = await compactJournal(
    sqliteJournalAt(journal),
    join(folder, 'archive'),
    '2026-01-01',
    {
      format: { dialect: 'excel', timeZone: 'America/Sao_Paulo', language: 'pt-BR' },
      now: Date.now(),
    },
  );
  const seconds = (performance.now() - began) / 1000;
  const usedAfter = inUse(journal);
  console.log(
    JSON.stringify({
      bench: 'compact',
      payouts: PAYOUTS,
      entries: done.entries,
      fileBytesBefore: done.bytesBefore.file,
      walBytesBefore: done.bytesBefore.wal,
      fileBytesAfter: done.bytesAfter.file,
      walBytesAfter: done.bytesAfter.wal,
      usedBytesBefore: usedBefore,
      usedBytesAfter: usedAfter,
      bytesPerPayoutBefore: Math.round(usedBefore / PAYOUTS),
      bytesPerPayoutKept: Math.round(usedAfter / PAYOUTS),
      archiveBytes: statSync(done.archive).size,
      seconds: Number(seconds.toFixed(1)),
      entriesPerSecond: Math.round(done.entries / seconds),
      longestHoldMs: Number(done.longestHoldMs.toFixed(1)),
      buildSeconds: Number((buildMs / 1000).toFixed(1)),
    }),
  );
}

/** A payroll file of ROWS rows, a payee each (none the rules hold), named `name`. */
function payroll(name, first) {
  const lines = ['orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount'];
  for (let row = 0; row < ROWS; row++) {
    const n = first + row;
    const key = `q${n}@example.com`;
    const document = withCheckDigits(String(200_000_000 + n));
    lines.push(`${name}-${row},Pessoa ${n},${key},11987654321,${document},EMAIL,${key},"12,34"`);
  }
  return `${lines.join('\n')}\n`;
}

/** Median, p90 and max of `values`. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { samples: sorted.length, median: at(0.5), p90: at(0.9), max: sorted.at(-1) };
}

/** The journal's store for `watch`: its setting, how it is filled, and its end. */
async function storeOf(kind) {
  if (kind !== 'postgres') {
    return { settings: {}, fill: async (home) => fill(join(home, 'journal.db')), stop: () => {} };
  }
  const { cluster, missing } = await startCluster();
  if (missing) throw new Error(missing);
  const url = await freshDatabase(cluster, 'bench_compact');
  return {
    settings: { PAYOUTS_JOURNAL: url },
    fill: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const built = performance.now();
        await addPaidPayoutsPostgres(client, { count: PAYOUTS });
        await client.query('VACUUM ANALYZE');
        return performance.now() - built;
      } finally {
        await client.end();
      }
    },
    stop: () => cluster.stop(),
  };
}

async function besideDaemon() {
  const store = await storeOf(process.argv[3]);
  try {
    await payBeside(store);
  } finally {
    store.stop();
  }
}

async function payBeside(store) {
  const home = join(folder, 'home');
  const staging = join(folder, 'staging');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  mkdirSync(staging);
  const archive = join(home, 'archive');
  const gateway = await startGatewayProcess(20, { settleDelay: '1s' });
  const env = hostsEnv({
    gatewayUrl: gateway.url,
    token: TOKEN,
    home,
    PAYOUTS_POSTBACK_LISTEN: '127.0.0.1:0',
    PAYOUTS_INBOX_SETTLE: '200ms',
    ...store.settings,
  });
  let daemon;
  try {
    /** The daemon started, and its receiver's address once it listens. */
    const start = async () => {
      daemon = startHost(env);
      const listening = (line) => line.includes('postback receiver listening on');
      await waitFor('the postback receiver', () => daemon.lines.some(listening), 60_000);
      return /listening on (http:\/\/\S+)/.exec(daemon.lines.find(listening))[1];
    };
    const stop = async () => {
      daemon.child.kill('SIGTERM');
      if (daemon.child.exitCode === null) await once(daemon.child, 'exit');
    };
    // The daemon makes the home's journal; stopped, the years of payouts go in.
    await start();
    await stop();
    const buildMs = await store.fill(home);
    const receiver = await start();

    /** GET /healthz every 200 ms until `done` resolves: each answer's ms. */
    const healthWhile = async (done) => {
      const answers = [];
      let finished = false;
      void done.finally(() => (finished = true));
      while (!finished) {
        const began = performance.now();
        const response = await request(`${receiver}/healthz`);
        await response.body.json();
        if (response.statusCode !== 200) throw new Error(`healthz: ${response.statusCode}`);
        answers.push(Number((performance.now() - began).toFixed(1)));
        await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 200))]);
      }
      return answers;
    };
    /** A file dropped whole into the inbox, and the seconds until it is archived. */
    let files = 0;
    const pay = async (name) => {
      writeFileSync(join(staging, `${name}.csv`), payroll(name, files++ * ROWS));
      const began = performance.now();
      renameSync(join(staging, `${name}.csv`), join(home, 'inbox', `${name}.csv`));
      await waitFor(
        `${name}.csv archived`,
        () => readdirSync(archive).some((file) => file.startsWith(`${name}.`)),
        PHASE_BOUND_MS,
      );
      return (performance.now() - began) / 1000;
    };
    const phase = async (name) => {
      const paid = pay(name);
      const [seconds, health] = await Promise.all([paid, healthWhile(paid)]);
      return {
        payoutsPerSecond: Math.round(ROWS / seconds),
        seconds: Number(seconds.toFixed(1)),
        health: spread(health),
      };
    };

    const before = await phase('antes');
    const compaction = spawn(
      process.execPath,
      [BIN, 'journal', 'compact', '--before', '2026-01-01', '--json'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    let errors = '';
    compaction.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    compaction.stderr.setEncoding('utf8').on('data', (chunk) => (errors += chunk));
    const compactBegan = performance.now();
    const exited = once(compaction, 'exit');
    const history = join(archive, 'journal-history');
    // Paying while it moves entries, not while it counts them.
    await waitFor(
      'the compaction to export',
      () =>
        existsSync(history) &&
        readdirSync(history).some((f) => statSync(join(history, f)).size > 0),
      PHASE_BOUND_MS,
    );
    const during = await phase('durante');
    const stillCompacting = compaction.exitCode === null;
    const [code] = await Promise.race([
      exited,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('compaction past its bound')), PHASE_BOUND_MS).unref(),
      ),
    ]);
    const compactSeconds = (performance.now() - compactBegan) / 1000;
    if (code !== 0) throw new Error(`journal compact exited ${code}: ${errors}`);
    const done = JSON.parse(output);
    await stop();
    const ledger = (await gateway.transactions()).filter((entry) => entry.object === 'cashout');
    const byOrderId = new Map();
    for (const entry of ledger)
      byOrderId.set(entry.orderId, (byOrderId.get(entry.orderId) ?? 0) + 1);
    console.log(
      JSON.stringify({
        bench: 'compact-beside-watch',
        store: process.argv[3] === 'postgres' ? 'postgres' : 'sqlite',
        payouts: PAYOUTS,
        rowsPerFile: ROWS,
        before,
        during,
        duringOfBefore: Number((during.payoutsPerSecond / before.payoutsPerSecond).toFixed(2)),
        stillCompactingWhenPaid: stillCompacting,
        entries: done.entries,
        compactSeconds: Number(compactSeconds.toFixed(1)),
        longestHoldMs: done.longestHoldMs,
        bytesBefore: done.bytesBefore,
        bytesAfter: done.bytesAfter,
        paidOnce:
          [...byOrderId.values()].every((count) => count === 1) && byOrderId.size === 2 * ROWS,
        buildSeconds: Number((buildMs / 1000).toFixed(1)),
        load: loadAverage(),
      }),
    );
  } finally {
    if (daemon && daemon.child.exitCode === null) daemon.child.kill('SIGTERM');
    gateway.close();
  }
}
