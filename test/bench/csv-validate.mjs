// Validate speed and memory on a generated payout file (Brazilian Excel style, no orderId
// column, so every orderId is derived), against bare csv-parse on the same file in the same
// process: as objects by heading (`columns: true`, the yardstick of issue 19) and as arrays.
// Each size is read as two files: `plain`, without a quote (validate splits its lines at the
// delimiter), and `quoted`, every name in quotes (validate reads it with csv-parse).
// Prints one JSON line per size and kind. The ratios are the figures to watch, by time and by
// CPU (process.cpuUsage, which counts the process's other threads too); rows/s follows the
// machine. Peak RSS is the child's own maximum after its first, cold validate.
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { readPayoutFile } from '../../dist/csv/reader.js';
import { writePayoutFile } from './support/brazilian-excel.mjs';

const SIZES = (process.env.BENCH_CSV_ROWS ?? '100000,1000000').split(',').map(Number);
const KINDS = (process.env.BENCH_CSV_KINDS ?? 'plain,quoted').split(',');

/** Wall and CPU milliseconds of `work`, with what it answers. */
async function timed(work) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const result = await work();
  const { user, system } = process.cpuUsage(cpu);
  return { ...result, ms: performance.now() - started, cpuMs: (user + system) / 1000 };
}

async function validate(path) {
  let valid = 0;
  let invalid = 0;
  await readPayoutFile(
    path,
    {
      encoding: 'auto',
      maxFileBytes: 4 * 1024 ** 3,
      maxPayoutCents: 1e12,
      maxFileCents: Number.MAX_SAFE_INTEGER,
    },
    (row) => {
      if (row.kind === 'valid') valid++;
      else if (row.kind === 'invalid') invalid++;
    },
  );
  return { valid, invalid };
}

/** Bare csv-parse on the same file: records as objects by heading (`columns: true`), or as arrays. */
async function bareParse(path, columns) {
  let records = 0;
  for await (const _record of createReadStream(path).pipe(parse({ delimiter: ';', columns })))
    records++;
  return { records: columns ? records : records - 1 };
}

// The first validate runs cold, and its peak RSS is read before anything else runs.
// Then each side runs once more, alternating, and the best time of each is compared,
// so neither gains from the other having warmed up the parser.
async function measure(path) {
  const first = await timed(() => validate(path));
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const objects = [await timed(() => bareParse(path, true))];
  const arrays = [await timed(() => bareParse(path, false))];
  const runs = [first, await timed(() => validate(path))];
  objects.push(await timed(() => bareParse(path, true)));
  arrays.push(await timed(() => bareParse(path, false)));
  const best = (list, key = 'ms') => Math.min(...list.map((r) => r[key]));
  return {
    valid: first.valid,
    invalid: first.invalid,
    records: objects[0].records,
    validateMs: best(runs),
    objectsMs: best(objects),
    arraysMs: best(arrays),
    validateCpuMs: best(runs, 'cpuMs'),
    objectsCpuMs: best(objects, 'cpuMs'),
    peakRssMb,
  };
}

if (process.argv[2] === 'measure') {
  console.log(JSON.stringify(await measure(process.argv[3])));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-'));
  try {
    for (const [rows, kind] of SIZES.flatMap((rows) => KINDS.map((kind) => [rows, kind]))) {
      const path = join(folder, `bench-${rows}-${kind}.csv`);
      await writePayoutFile(path, rows, { quoted: kind === 'quoted' });
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'measure', path], {
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(child.stderr);
      const m = JSON.parse(child.stdout);
      if (m.valid !== rows || m.invalid !== 0)
        throw new Error(`expected ${rows} valid rows, got ${m.valid} valid, ${m.invalid} invalid`);
      console.log(
        JSON.stringify({
          bench: 'csv-validate',
          rows,
          kind,
          fileMb: Math.round(statSync(path).size / 1024 / 1024),
          validateRowsPerSec: Math.round(rows / (m.validateMs / 1000)),
          bareCsvParseRowsPerSec: Math.round(m.records / (m.objectsMs / 1000)),
          // The yardstick: csv-parse with `columns: true`; then as arrays.
          validateToBareRatio: Number((m.validateMs / m.objectsMs).toFixed(2)),
          validateToBareArraysRatio: Number((m.validateMs / m.arraysMs).toFixed(2)),
          // The same yardstick by CPU time, the best of the two runs each.
          validateToBareCpuRatio: Number((m.validateCpuMs / m.objectsCpuMs).toFixed(2)),
          validatePeakRssMb: m.peakRssMb,
        }),
      );
      rmSync(path);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
