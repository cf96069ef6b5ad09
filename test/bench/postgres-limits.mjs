// What keeping the gateway's limits together costs one host on PostgreSQL (issue 31): its
// pool looks at the journal for the hosts' pause and parts at most every 250 ms while it
// sends. engine.mjs's scenario at concurrency 64 against the sandbox with 50 ms latency,
// on a fresh database of a throwaway cluster each time, without the look and with it, in
// turn, RUNS times each, each in a process of its own. Prints each run's line, then the
// ratio of the medians (with / without) and the load average.
import {
  freshDatabase,
  loadAverage,
  measureEngine as measure,
  median,
  startCluster,
} from './support/postgres.mjs';

const RUNS = Number(process.env.BENCH_PG_RUNS ?? 3);
const SCENARIO = { concurrency: 64, latencyMs: 50, seconds: 8 };

const { cluster, missing } = await startCluster();
if (missing) {
  console.log(JSON.stringify({ bench: 'postgres-limits', skipped: missing }));
} else {
  try {
    const runs = { alone: [], together: [] };
    for (let run = 0; run < RUNS; run++) {
      for (const kind of ['alone', 'together']) {
        const journalUrl = await freshDatabase(cluster, `limits_${kind}_${run}`);
        runs[kind].push(
          measure({
            ...SCENARIO,
            journalUrl,
            serverPid: cluster.pid,
            together: kind === 'together',
          }),
        );
      }
    }
    const of = (kind, field) => median(runs[kind].map((figures) => figures[field]));
    console.log(
      JSON.stringify({
        bench: 'postgres-limits',
        concurrency: SCENARIO.concurrency,
        latencyMs: SCENARIO.latencyMs,
        runs: RUNS,
        alonePayoutsPerSec: of('alone', 'payoutsPerSec'),
        togetherPayoutsPerSec: of('together', 'payoutsPerSec'),
        togetherOfAlone: Number(
          (of('together', 'payoutsPerSec') / of('alone', 'payoutsPerSec')).toFixed(3),
        ),
        aloneEngineCpuUsPerPayout: of('alone', 'engineCpuUsPerPayout'),
        togetherEngineCpuUsPerPayout: of('together', 'engineCpuUsPerPayout'),
        aloneServerCpuUsPerPayout: of('alone', 'serverCpuUsPerPayout'),
        togetherServerCpuUsPerPayout: of('together', 'serverCpuUsPerPayout'),
        loadAverage: loadAverage(),
      }),
    );
  } finally {
    cluster.stop();
  }
}
