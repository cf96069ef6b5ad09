// Taking a generated payout file into the journal (issue 19): `ingestFile` of the
// Brazilian-Excel file of csv-validate into a fresh journal, as `payouts run` with
// requireApproval does (the batch awaits approval: nothing is sent), against bare
// csv-parse (`columns: true`) reading the same file, each in a child process of its own,
// run in turn (bare, ingest, bare, ingest) so both see the same machine. Prints rows/s,
// the ratio of the best ingest to the best bare reading, the ingest's peak RSS (GNU
// time's %M where it is installed) and the journal's bytes per payout. `node ingest.mjs
// ingest FILE JOURNAL` is one ingest alone, into a SQLite file or a PostgreSQL URL.
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { writePayoutFile } from './support/brazilian-excel.mjs';

const ROWS = Number(process.env.BENCH_INGEST_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_INGEST_RUNS ?? 2);
const TIME = '/usr/bin/time';
const self = fileURLToPath(import.meta.url);

/** `where`: a SQLite file's path, or a PostgreSQL database's URL (postgres-admission.mjs). */
async function ingest(file, where) {
  const { loadConfig } = await import('../../dist/config/load.js');
  const { ingestFile } = await import('../../dist/engine/ingest.js');
  const { openJournal, sqliteJournalAt } = await import('../../dist/journal/open.js');
  const { config } = loadConfig({ env: { PAYOUTS_HOME: dirname(file) } });
  const options = {
    ...config,
    maxFileBytes: 4 * 1024 ** 3,
    maxPayoutCents: 1e12,
    maxFileCents: Number.MAX_SAFE_INTEGER,
  };
  const journal = await openJournal(
    where.startsWith('postgres://') ? { kind: 'postgres', url: where } : sqliteJournalAt(where),
  );
  try {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await ingestFile(file, journal, options, 'awaiting-approval');
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const totals = await journal.rowTotalsOfBatch(result.batchId);
    return {
      ms,
      cpuMs: (user + system) / 1000,
      kind: result.kind,
      rows: totals.rows,
      problems: result.report?.problems,
    };
  } finally {
    await journal.close();
  }
}

async function bare(file) {
  const started = performance.now();
  let records = 0;
  for await (const _record of createReadStream(file).pipe(parse({ delimiter: ';', columns: true })))
    records++;
  return { ms: performance.now() - started, records };
}

/** One side in a child of its own: its time, and its peak RSS. */
function inChild(...args) {
  const timed = existsSync(TIME);
  const command = timed
    ? [TIME, ['-f', 'MAXRSS %M', process.execPath, self, ...args]]
    : [process.execPath, [self, ...args]];
  const child = spawnSync(command[0], command[1], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(child.stderr);
  const maxRss = Number(/MAXRSS (\d+)/.exec(child.stderr)?.[1] ?? Number.NaN);
  const measured = JSON.parse(child.stdout);
  return { ...measured, peakRssMb: Math.round((timed ? maxRss : measured.maxRssKb) / 1024) };
}

const [mode, file, journalPath] = process.argv.slice(2);
if (mode === 'ingest' || mode === 'bare') {
  const measured = mode === 'ingest' ? await ingest(file, journalPath) : await bare(file);
  console.log(JSON.stringify({ ...measured, maxRssKb: process.resourceUsage().maxRSS }));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-ingest-'));
  try {
    const file = join(folder, 'folha.csv');
    await writePayoutFile(file, ROWS);
    const bares = [];
    const ingests = [];
    for (let run = 0; run < RUNS; run++) {
      bares.push(inChild('bare', file));
      const journalPath = join(folder, `journal-${run}.db`);
      const measured = inChild('ingest', file, journalPath);
      const journaled = Object.values(measured.rows).reduce((sum, n) => sum + n, 0);
      if (measured.kind !== 'awaiting-approval' || journaled !== ROWS)
        throw new Error(`expected ${ROWS} rows awaiting approval: ${JSON.stringify(measured)}`);
      ingests.push({ ...measured, journalBytes: statSync(journalPath).size });
      rmSync(journalPath, { force: true });
    }
    const best = (list) => list.reduce((a, b) => (b.ms < a.ms ? b : a));
    const [ingestBest, bareBest] = [best(ingests), best(bares)];
    console.log(
      JSON.stringify({
        bench: 'ingest',
        rows: ROWS,
        fileMb: Math.round(statSync(file).size / 1024 / 1024),
        ingestRowsPerSec: ingests.map((m) => Math.round(ROWS / (m.ms / 1000))),
        // Waiting for the disk (a commit's fsync) is left out: the figure a busy disk moves least.
        ingestRowsPerCpuSec: ingests.map((m) => Math.round(ROWS / (m.cpuMs / 1000))),
        bareCsvParseRowsPerSec: bares.map((m) => Math.round(m.records / (m.ms / 1000))),
        ingestToBareRatio: Number((ingestBest.ms / bareBest.ms).toFixed(2)),
        ingestPeakRssMb: ingests.map((m) => m.peakRssMb),
        barePeakRssMb: bares.map((m) => m.peakRssMb),
        journalBytesPerPayout: Math.round(ingestBest.journalBytes / ROWS),
      }),
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
