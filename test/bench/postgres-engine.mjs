// One host's journaled payouts/s on PostgreSQL against the same engine on SQLite, in the
// same run (issue 31): engine.mjs's scenario at concurrency 64 against the sandbox with 50
// ms latency, journaled in SQLite, then in a fresh database of a throwaway cluster
// (test/support/postgres.ts's), in turn, RUNS times each, each in a process of its own.
// Prints each run's line (CPU µs a payout: the engine's, the gateway's, and on PostgreSQL
// the server's processes' from /proc), then the ratio of the medians and the load average.
import {
  freshDatabase,
  loadAverage,
  measureEngine as measure,
  median,
  startCluster,
} from './support/postgres.mjs';

const RUNS = Number(process.env.BENCH_PG_RUNS ?? 2);
const SCENARIO = { concurrency: 64, latencyMs: 50, seconds: 8 };

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'postgres-engine', skipped: missing }));
} else {
  try {
    const runs = { sqlite: [], postgres: [] };
    for (let run = 0; run < RUNS; run++) {
      runs.sqlite.push(measure(SCENARIO));
      const journalUrl = await freshDatabase(cluster, `engine_${run}`);
      runs.postgres.push(measure({ ...SCENARIO, journalUrl, serverPid: cluster.pid }));
    }
    const of = (kind, field) => median(runs[kind].map((figures) => figures[field]));
    console.log(
      JSON.stringify({
        bench: 'postgres-engine',
        concurrency: SCENARIO.concurrency,
        latencyMs: SCENARIO.latencyMs,
        runs: RUNS,
        sqlitePayoutsPerSec: of('sqlite', 'payoutsPerSec'),
        postgresPayoutsPerSec: of('postgres', 'payoutsPerSec'),
        postgresOfSqlite: Number(
          (of('postgres', 'payoutsPerSec') / of('sqlite', 'payoutsPerSec')).toFixed(3),
        ),
        sqliteEngineCpuUsPerPayout: of('sqlite', 'engineCpuUsPerPayout'),
        postgresEngineCpuUsPerPayout: of('postgres', 'engineCpuUsPerPayout'),
        postgresServerCpuUsPerPayout: of('postgres', 'serverCpuUsPerPayout'),
        loadAverage: loadAverage(),
      }),
    );
  } finally {
    cluster.stop();
  }
}
