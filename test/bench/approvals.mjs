// `payouts status --approvals --since DAY` on a journal with years of history: 25,000 old
// batches, each with the four events a file dropped under four eyes and released has
// (dropped, approved twice, replaced), 100,000 in all (BENCH_APPROVALS_EVENTS), two years
// before DAY, put straight in SQL; and 10 batches approved on DAY, which the command shows.
// The command runs in this process (dist/cli/main.js, its output kept), five times, beside
// the same command for a day with no approval (what opening the journal and the command
// cost) and the bare `SELECT count(*) FROM batch_events` of the same journal, five times
// each, in turn: the medians in ms, and the command's over the count's. Prints one JSON
// line a store: SQLite, then PostgreSQL in a database of the tests' throwaway cluster
// (said and skipped without PostgreSQL). `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { main } from '../../dist/cli/main.js';
import { ensureFolders, homeFolders } from '../../dist/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { sqliteBinding } from '../../dist/runtime/sqlite.js';
import { freshDatabase, loadAverage, median, startCluster } from './support/postgres.mjs';

const EVENTS = Number(process.env.BENCH_APPROVALS_EVENTS ?? 100_000);
const OLD_BATCHES = Math.ceil(EVENTS / 4);
const RECENT = 10;
const RUNS = 5;
const DAY = '2026-11-02';
const RECENT_AT = Date.parse(`${DAY}T15:00:00Z`);
const OLD_AT = RECENT_AT - 2 * 365 * 24 * 3_600_000;

const approved = (uid) =>
  JSON.stringify({
    code: 'eventFourEyesApproved',
    approvalCode: 'K7QD-M2XA-P9RT',
    count: 2,
    cents: 600_000,
    needed: 2,
    via: 'folha.csv.aprovado',
    uid,
  });
/** A batch's four events: step, event, by, detail. */
const STEPS = [
  [0, 'dropped', 'maria', JSON.stringify({ code: 'eventDropped', uid: 1000 })],
  [1, 'approved', 'ana', approved(1001)],
  [2, 'approved', 'bruno', approved(1002)],
  [3, 'replaced', 'payouts', JSON.stringify({ code: 'eventReplacedBy', batchId: 1 })],
];

const GATEWAY = { PAYOUTS_BASE_URL: 'http://127.0.0.1:9', PAYOUTS_TOKEN: 'bench-token' };

/** Runs `payouts ARGS` in this process: its exit code and what it printed. */
async function payouts(args, env) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (chunk) => (stdout += chunk) },
    stderr: { write: (chunk) => (stderr += chunk) },
    // A gateway named, never reached: status reads only the journal.
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...GATEWAY, ...env },
    clock: systemClock,
  });
  if (code !== 0) throw new Error(`payouts ${args.join(' ')}: exit ${code}: ${stderr}`);
  return stdout;
}

/** The medians of the command and of the count, RUNS of each in turn. */
async function measure(env, count) {
  const args = ['status', '--approvals', '--since', DAY];
  const shown = (await payouts(args, env)).trimEnd().split('\n').length;
  const statusMs = [];
  const noneMs = [];
  const countMs = [];
  let counted = 0;
  for (let i = 0; i < RUNS; i++) {
    const began = performance.now();
    await payouts(args, env);
    statusMs.push(performance.now() - began);
    const none = performance.now();
    await payouts(['status', '--approvals', '--since', '2999-01-01'], env);
    noneMs.push(performance.now() - none);
    const counting = performance.now();
    counted = await count();
    countMs.push(performance.now() - counting);
  }
  const status = median(statusMs);
  const bare = median(countMs);
  return {
    events: counted,
    shown,
    statusMs: Number(status.toFixed(2)),
    noneMs: Number(median(noneMs).toFixed(2)),
    countMs: Number(bare.toFixed(2)),
    ratio: Number((status / bare).toFixed(2)),
    load: loadAverage(),
  };
}

async function onSqlite() {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-approvals-'));
  try {
    const folders = homeFolders(join(folder, 'home'));
    ensureFolders(folders);
    await (await openJournal(sqliteJournalAt(folders.journal))).close();
    const db = new (sqliteBinding())(folders.journal);
    try {
      db.transaction(() => {
        const batch = db.prepare(
          `INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid,
             total_cents, problems) VALUES (?, ?, ?, 'done', 0, 0, 0, 0, '[]')`,
        );
        const event = db.prepare(
          'INSERT INTO batch_events (batch_id, at, event, by, detail) VALUES (?, ?, ?, ?, ?)',
        );
        for (let i = 0; i < OLD_BATCHES + RECENT; i++) {
          const old = i < OLD_BATCHES;
          const at = old ? OLD_AT + i * 60_000 : RECENT_AT + i;
          const id = Number(
            batch.run(`folha-${i}.csv`, String(i).padStart(64, '0'), at).lastInsertRowid,
          );
          for (const [step, name, by, detail] of STEPS)
            if (old || name !== 'replaced') event.run(id, at + step, name, by, detail);
        }
      })();
      const count = db.prepare('SELECT count(*) AS n FROM batch_events');
      const figures = await measure({ PAYOUTS_HOME: folders.home }, async () => count.get().n);
      console.log(JSON.stringify({ bench: 'approvals', store: 'SQLite', ...figures }));
    } finally {
      db.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function onPostgres() {
  const { cluster, missing } = await startCluster();
  if (!cluster) {
    console.log(JSON.stringify({ bench: 'approvals', store: 'PostgreSQL', skipped: missing }));
    return;
  }
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-approvals-'));
  let connected;
  try {
    const url = await freshDatabase(cluster, 'approvals');
    const folders = homeFolders(join(folder, 'home'));
    ensureFolders(folders);
    await (await openJournal({ kind: 'postgres', url })).close();
    connected = new pg.Client({ connectionString: url });
    await connected.connect();
    const total = OLD_BATCHES + RECENT;
    await connected.query(
      `INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid,
         total_cents, problems)
       SELECT 'folha-' || i || '.csv', lpad(i::text, 64, '0'),
         CASE WHEN i < $2 THEN $3::bigint + i * 60000 ELSE $4::bigint + i END, 'done', 0, 0, 0, 0, '[]'
       FROM generate_series(0, $1 - 1) i ORDER BY i`,
      [total, OLD_BATCHES, OLD_AT, RECENT_AT],
    );
    await connected.query(
      `INSERT INTO batch_events (batch_id, at, event, by, detail)
       SELECT b.id, b.received_at + s.step, s.event, s.by, s.detail
       FROM batches b, json_to_recordset($1::json) AS s (step int, event text, by text, detail text)
       WHERE b.received_at < $2::bigint OR s.event <> 'replaced'
       ORDER BY b.id, s.step`,
      [
        JSON.stringify(STEPS.map(([step, event, by, detail]) => ({ step, event, by, detail }))),
        RECENT_AT,
      ],
    );
    await connected.query('ANALYZE');
    const env = { PAYOUTS_HOME: folders.home, PAYOUTS_JOURNAL: url };
    const figures = await measure(env, async () => {
      const { rows } = await connected.query('SELECT count(*)::int AS n FROM batch_events');
      return rows[0].n;
    });
    console.log(JSON.stringify({ bench: 'approvals', store: 'PostgreSQL', ...figures }));
  } finally {
    await connected?.end();
    await cluster.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

await onSqlite();
await onPostgres();
