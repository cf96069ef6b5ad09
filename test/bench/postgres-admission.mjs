// Admission of a 100,000-row file into PostgreSQL against SQLite, in the same run (issue
// 31): ingest.mjs's ingest (`ingestFile` of csv-validate's Brazilian-Excel file, as
// `payouts run` with requireApproval takes it: the batch awaits approval, nothing is
// sent) into a SQLite file, then into a fresh database of a throwaway cluster
// (test/support/postgres.ts's), in turn, RUNS times each, each in a process of its own.
// Prints each ingest (rows/s, CPU µs a row of our process and, on PostgreSQL, of the
// server's processes from /proc), then the ratio of the medians and the load average.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writePayoutFile } from './support/brazilian-excel.mjs';
import {
  freshDatabase,
  loadAverage,
  median,
  serverCpuMicros,
  startCluster,
} from './support/postgres.mjs';

const ROWS = Number(process.env.BENCH_PG_ADMIT_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_PG_RUNS ?? 2);
const ingest = fileURLToPath(new URL('./ingest.mjs', import.meta.url));

/** ingest.mjs's ingest of `file` into `journal` in a child process, with the server's CPU. */
function admit(file, journal, postmaster) {
  const serverBefore = postmaster === undefined ? 0 : serverCpuMicros(postmaster);
  const child = spawnSync(process.execPath, [ingest, 'ingest', file, journal], {
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(child.stderr);
  const measured = JSON.parse(child.stdout);
  const journaled = Object.values(measured.rows).reduce((sum, n) => sum + n, 0);
  if (measured.kind !== 'awaiting-approval' || journaled !== ROWS)
    throw new Error(`expected ${ROWS} rows awaiting approval: ${child.stdout}`);
  const figures = {
    bench: 'admission',
    journal: postmaster === undefined ? 'sqlite' : 'postgres',
    rows: ROWS,
    rowsPerSec: Math.round(ROWS / (measured.ms / 1000)),
    cpuUsPerRow: Number(((measured.cpuMs * 1000) / ROWS).toFixed(1)),
    ...(postmaster !== undefined && {
      serverCpuUsPerRow: Number(((serverCpuMicros(postmaster) - serverBefore) / ROWS).toFixed(1)),
    }),
  };
  console.log(JSON.stringify(figures));
  return figures;
}

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'postgres-admission', skipped: missing }));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-pg-admit-'));
  try {
    const file = join(folder, 'folha.csv');
    await writePayoutFile(file, ROWS);
    const runs = { sqlite: [], postgres: [] };
    for (let run = 0; run < RUNS; run++) {
      runs.sqlite.push(admit(file, join(folder, `journal-${run}.db`)));
      const url = await freshDatabase(cluster, `admission_${run}`);
      runs.postgres.push(admit(file, url, cluster.pid));
    }
    const of = (kind, field) => median(runs[kind].map((figures) => figures[field]));
    console.log(
      JSON.stringify({
        bench: 'postgres-admission',
        rows: ROWS,
        runs: RUNS,
        sqliteRowsPerSec: of('sqlite', 'rowsPerSec'),
        postgresRowsPerSec: of('postgres', 'rowsPerSec'),
        postgresOfSqlite: Number(
          (of('postgres', 'rowsPerSec') / of('sqlite', 'rowsPerSec')).toFixed(3),
        ),
        sqliteCpuUsPerRow: of('sqlite', 'cpuUsPerRow'),
        postgresCpuUsPerRow: of('postgres', 'cpuUsPerRow'),
        postgresServerCpuUsPerRow: of('postgres', 'serverCpuUsPerRow'),
        loadAverage: loadAverage(),
      }),
    );
  } finally {
    cluster.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}
