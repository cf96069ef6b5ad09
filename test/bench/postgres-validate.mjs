// `payouts validate` and `run --dry-run` weigh a file against the journal (planRun): on
// PostgreSQL each read is a round trip. A payroll of ROWS rows (csv-validate's file) is
// journaled (ingest.mjs's ingest, awaiting approval) into a SQLite file and a fresh
// database of a throwaway cluster (test/support/postgres.ts's); next month's file (the
// same rows and one more, under another name: every row held as a possible duplicate) is
// then weighed against each, RUNS times, in this process. Prints each weighing (ms, rows/s
// and, on PostgreSQL, the queries sent, counted on pg's Client), then the ratio of the
// medians (the SQLite figure is the same run's baseline) and the load average.
// `npm run build && node test/bench/postgres-validate.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { writePayoutFile } from './support/brazilian-excel.mjs';
import { freshDatabase, loadAverage, median, startCluster } from './support/postgres.mjs';
import { loadConfig } from '../../dist/config/load.js';
import { planRun } from '../../dist/engine/dry-run.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';

const ROWS = Number(process.env.BENCH_PG_VALIDATE_ROWS ?? 20_000);
const RUNS = Number(process.env.BENCH_PG_RUNS ?? 2);
const ingest = fileURLToPath(new URL('./ingest.mjs', import.meta.url));

// Every query node-postgres sends, whoever sends it: the round trips of a weighing.
let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  queries++;
  return query.apply(this, args);
};

function journalFile(file, where) {
  const child = spawnSync(process.execPath, [ingest, 'ingest', file, where], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(child.stderr);
}

async function weigh(file, where) {
  const { config } = loadConfig({ env: { PAYOUTS_HOME: tmpdir() } });
  const journal = await openJournal(
    where.startsWith('postgres://') ? { kind: 'postgres', url: where } : sqliteJournalAt(where),
  );
  try {
    const sentBefore = queries;
    const started = performance.now();
    const [plan] = await planRun([file], journal, {
      ...config,
      maxFileBytes: 4 * 1024 ** 3,
      maxPayoutCents: 1e12,
      maxFileCents: Number.MAX_SAFE_INTEGER,
      hintFlags: '',
      now: Date.now(),
    });
    const ms = performance.now() - started;
    // Every row but the new last one repeats last month's payout of its person.
    if (plan.held !== ROWS) throw new Error(`expected ${ROWS} held: ${JSON.stringify(plan)}`);
    const figures = {
      bench: 'validate-weighing',
      journal: where.startsWith('postgres://') ? 'postgres' : 'sqlite',
      rows: ROWS + 1,
      ms: Math.round(ms),
      rowsPerSec: Math.round((ROWS + 1) / (ms / 1000)),
      queries: queries - sentBefore,
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await journal.close();
  }
}

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'postgres-validate', skipped: missing }));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-pg-validate-'));
  try {
    const journaled = join(folder, 'folha-novembro.csv');
    const next = join(folder, 'folha-dezembro.csv');
    await writePayoutFile(journaled, ROWS);
    await writePayoutFile(next, ROWS + 1);
    const sqlite = join(folder, 'journal.db');
    journalFile(journaled, sqlite);
    const url = await freshDatabase(cluster, 'validate_weighing');
    journalFile(journaled, url);
    const runs = { sqlite: [], postgres: [] };
    for (let run = 0; run < RUNS; run++) {
      runs.sqlite.push(await weigh(next, sqlite));
      runs.postgres.push(await weigh(next, url));
    }
    const of = (kind, field) => median(runs[kind].map((figures) => figures[field]));
    console.log(
      JSON.stringify({
        bench: 'postgres-validate',
        rows: ROWS + 1,
        runs: RUNS,
        sqliteRowsPerSec: of('sqlite', 'rowsPerSec'),
        postgresRowsPerSec: of('postgres', 'rowsPerSec'),
        postgresOfSqlite: Number(
          (of('postgres', 'rowsPerSec') / of('sqlite', 'rowsPerSec')).toFixed(3),
        ),
        postgresQueriesPerRow: Number((of('postgres', 'queries') / (ROWS + 1)).toFixed(3)),
        loadAverage: loadAverage(),
      }),
    );
  } finally {
    cluster.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}
