// The whole command (issue 34): `payouts run` as a child process under GNU time on a
// generated file (brazilian-excel.mjs, BENCH_COMMAND_ROWS rows: 100,000 by default,
// 1000000 for the size), in two modes: `requireApproval` on (the file is journaled
// and waits, nothing sent) and off against the lean gateway stand-in at zero latency (every
// row sent). Beside it in the same run and in turn, each in a child of its own: `ingestFile`
// alone (ingest.mjs's child), bare csv-parse of the file, and a bare SQLite insert of its
// rows (each record's JSON under an orderId, a commit a thousand, the same pragmas as the
// journal; only the inserts timed). Prints one JSON line: seconds, peak RSS, rows/s of each,
// and the ratios run/ingest, ingest/bare insert and payouts/s of the sending run, whole and
// of its sending phase alone (the stand-in's first create to its last: before it, node's
// start and the file's intake; after it, the file's result and the summary).
// `node test/bench/command.mjs send` runs the sending run alone, `approval` all but it (a
// million rows are sent in most of an hour); BENCH_COMMAND_CONCURRENCY sets the run's
// `concurrency` (the config's default otherwise). Each part's CPU seconds (user and system,
// GNU time's) are printed beside its wall seconds: the load moves them less.
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { once } from 'node:events';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { writePayoutFile } from './support/brazilian-excel.mjs';
import { cpuMicrosOf } from './support/postgres.mjs';

const ROWS = Number(process.env.BENCH_COMMAND_ROWS ?? 100_000);
const TIME = '/usr/bin/time';
const TOKEN = 'bench-token';
const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));
const INGEST = fileURLToPath(new URL('./ingest.mjs', import.meta.url));
const LEAN = fileURLToPath(new URL('./support/lean-gateway.mjs', import.meta.url));
const self = fileURLToPath(import.meta.url);
/** Rows inserted a transaction by the bare insert, as ingest.ts commits its chunks. */
const CHUNK = 1_000;
/** How often the sending run's CPU is sampled. */
const SAMPLE_MS = 100;

/** The floor of journaling: the file's records inserted bare, only the inserts timed. */
async function bareInsert(file, path) {
  const { Database } = await import('../../dist/journal/sqlite.js');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE payouts (order_id TEXT PRIMARY KEY, request TEXT NOT NULL) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO payouts (order_id, request) VALUES (?, ?)');
  const chunk = db.transaction((rows) => {
    for (const [orderId, record] of rows) insert.run(orderId, JSON.stringify(record));
  });
  let ms = 0;
  let cpuMs = 0;
  let records = 0;
  const timed = (rows) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    chunk(rows);
    ms += performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    cpuMs += (user + system) / 1000;
  };
  let rows = [];
  for await (const record of createReadStream(file).pipe(
    parse({ delimiter: ';', columns: true }),
  )) {
    rows.push([`bench-${++records}`, record]);
    if (rows.length >= CHUNK) {
      timed(rows);
      rows = [];
    }
  }
  timed(rows);
  db.close();
  return { ms, cpuMs, records };
}

/** CPU ms a process has used (user and system), or undefined once it is gone. */
function cpuMsOf(pid) {
  if (!(pid > 0)) return undefined;
  try {
    return cpuMicrosOf(pid) / 1000;
  } catch {
    return undefined;
  }
}

/** GNU time's one child, the command's node: 0 before it starts and once it is gone. */
function childOf(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim());
  } catch {
    return 0;
  }
}

/**
 * A command line under GNU time: its wall seconds, peak RSS in MB, and stdout; `part`
 * printed. With `gatewayPid`, the CPU of the command's node and of that process sampled
 * every SAMPLE_MS while it runs, each sample dated (epoch ms).
 */
async function timed(part, args, env = process.env, gatewayPid = undefined) {
  const child = spawn(TIME, ['-f', 'TIMED %e %M %U %S', process.execPath, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60 * 60_000);
  const samples = [];
  const sampler =
    gatewayPid === undefined
      ? undefined
      : setInterval(() => {
          const run = cpuMsOf(childOf(child.pid));
          if (run !== undefined) {
            samples.push({ at: Date.now(), run, gateway: cpuMsOf(gatewayPid) });
          }
        }, SAMPLE_MS);
  const [status, signal] = await once(child, 'close');
  clearInterval(sampler);
  clearTimeout(killer);
  const found = /TIMED ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(stderr);
  if (!found) throw new Error(`${args.join(' ')}: ${status ?? signal} ${stderr}`);
  // Each part as it ends: a million rows take most of an hour on a busy machine.
  const cpuSeconds = Number((Number(found[3]) + Number(found[4])).toFixed(2));
  console.log(
    JSON.stringify({ bench: 'command', rows: ROWS, part, seconds: Number(found[1]), cpuSeconds }),
  );
  return {
    status,
    stdout,
    stderr,
    seconds: Number(found[1]),
    cpuSeconds,
    peakRssMb: Math.round(Number(found[2]) / 1024),
    samples,
  };
}

/** The lean stand-in as a process of its own, answering at once; bounded by its own timer too. */
async function startLean() {
  // A minute for every 1,000 rows: a million took over 15 minutes at load 20.
  const minutes = String(Math.max(15, ROWS / 1_000));
  const child = spawn(process.execPath, [LEAN, '0', TOKEN, minutes], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  while (!/listening on (\S+)/.test(output)) {
    const [chunk] = await Promise.race([
      once(child.stdout, 'data'),
      once(child, 'exit').then(() => {
        throw new Error('the lean gateway exited');
      }),
    ]);
    output += chunk;
  }
  return {
    url: /listening on (\S+)/.exec(output)[1],
    pid: child.pid,
    close: () => child.kill('SIGTERM'),
  };
}

/** `payouts run --json` on a fresh home whose inbox holds `file`, against `lean`. */
async function run(folder, file, lean, approval) {
  const home = join(folder, approval ? 'home-approval' : 'home-send');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  copyFileSync(file, join(home, 'inbox', 'folha.csv'));
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUTS_'))),
    PAYOUTS_HOME: home,
    PAYOUTS_BASE_URL: lean.url,
    PAYOUTS_TOKEN: TOKEN,
    PAYOUTS_LOG_LEVEL: 'silent',
    PAYOUTS_INBOX_SETTLE: '1ms',
    PAYOUTS_FOLLOW_TIMEOUT: '0',
    PAYOUTS_REQUIRE_APPROVAL: String(approval),
    PAYOUTS_BALANCE_CHECK: 'off',
    PAYOUTS_MAX_FILE_BYTES: String(4 * 1024 ** 3),
    PAYOUTS_MAX_PAYOUT_CENTS: String(1e12),
    PAYOUTS_MAX_FILE_CENTS: String(Number.MAX_SAFE_INTEGER),
    // The engine benchmark's zero-latency figure is at 64: its ceiling beside the default's.
    ...(process.env.BENCH_COMMAND_CONCURRENCY
      ? { PAYOUTS_CONCURRENCY: process.env.BENCH_COMMAND_CONCURRENCY }
      : {}),
  };
  const startedAt = Date.now();
  const measured = approval
    ? await timed('runApproval', [BIN, 'run', '--json'], env)
    : await timed('runSend', [BIN, 'run', '--json'], env, lean.pid);
  const endedAt = Date.now();
  rmSync(home, { recursive: true, force: true });
  return { ...measured, startedAt, endedAt };
}

/** What the stand-in created, and when it was asked for the first and the last (epoch ms). */
async function ledgerOf(lean) {
  const answer = await fetch(`${lean.url}/sandbox/ledger`, { headers: { authorization: TOKEN } });
  const { created, firstAt, lastAt } = await answer.json();
  return { sent: Number(created), firstAt, lastAt };
}

/**
 * The sending run's phases in seconds (to the first create, first to last, after the last),
 * and the CPU a payout of its sending phase, of the command (both its threads) and of the
 * stand-in, from the samples around the first and the last create; with what that CPU
 * allows on this machine's cores, were nothing else running.
 */
function phasesOf(send, { firstAt, lastAt }) {
  const seconds = (ms) => Number((ms / 1000).toFixed(2));
  const before = send.samples.findLast((sample) => sample.at <= firstAt);
  const after = send.samples.find((sample) => sample.at >= lastAt);
  const perPayout = (key) =>
    before?.[key] === undefined || after?.[key] === undefined
      ? null
      : Math.round(((after[key] - before[key]) * 1000) / ROWS);
  const cpuUs = { run: perPayout('run'), gateway: perPayout('gateway') };
  return {
    seconds: {
      beforeFirstSend: seconds(firstAt - send.startedAt),
      sending: seconds(lastAt - firstAt),
      afterLastSend: seconds(send.endedAt - lastAt),
    },
    cpuUs,
    cpuBound:
      cpuUs.run === null || cpuUs.gateway === null
        ? null
        : Math.round((availableParallelism() * 1e6) / (cpuUs.run + cpuUs.gateway)),
  };
}

const rate = (seconds) => Math.round(ROWS / seconds);

/** The sending run alone, against a fresh stand-in: its seconds, phases, peak RSS and rates. */
async function sendAlone(folder) {
  const file = join(folder, 'folha.csv');
  await writePayoutFile(file, ROWS);
  const lean = await startLean();
  try {
    const send = await run(folder, file, lean, false);
    const ledger = await ledgerOf(lean);
    if (ledger.sent !== ROWS || send.status !== 3)
      throw new Error(`sent ${ledger.sent} of ${ROWS}, run exits ${send.status}: ${send.stderr}`);
    const phases = phasesOf(send, ledger);
    return {
      bench: 'command',
      rows: ROWS,
      seconds: { runSend: send.seconds, ...phases.seconds },
      peakRssMb: { runSend: send.peakRssMb },
      payoutsPerSecAtZeroLatency: rate(send.seconds),
      sendingPhasePayoutsPerSec: rate(phases.seconds.sending),
      sendingPhaseCpuUsPerPayout: phases.cpuUs,
      sendingPhaseCpuBoundPerSec: phases.cpuBound,
      load: loadavg()[0],
    };
  } finally {
    lean.close();
  }
}

const [mode, file, where] = process.argv.slice(2);
if (mode === 'insert') {
  console.log(JSON.stringify(await bareInsert(file, where)));
} else if (mode === 'send' && existsSync(TIME)) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-command-'));
  try {
    console.log(JSON.stringify(await sendAlone(folder)));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
} else if (!existsSync(TIME)) {
  console.log(JSON.stringify({ bench: 'command', skipped: `${TIME} is not installed` }));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-command-'));
  let lean;
  try {
    const file = join(folder, 'folha.csv');
    await writePayoutFile(file, ROWS);
    const bare = await timed('bareCsvParse', [INGEST, 'bare', file]);
    const bareRecords = JSON.parse(bare.stdout).records;
    const insert = await timed('bareInsert', [self, 'insert', file, join(folder, 'bare.db')]);
    const inserted = JSON.parse(insert.stdout);
    rmSync(join(folder, 'bare.db'), { force: true });
    const ingest = await timed('ingest', [INGEST, 'ingest', file, join(folder, 'ingest.db')]);
    const ingested = JSON.parse(ingest.stdout);
    const queued = ingested.rows.queued ?? 0;
    rmSync(join(folder, 'ingest.db'), { force: true });
    // Started now, so its bounded life is the runs'.
    lean = await startLean();
    const approval = await run(folder, file, lean, true);
    const sending = mode !== 'approval';
    const send = sending ? await run(folder, file, lean, false) : undefined;
    const ledger = await ledgerOf(lean);
    const sent = sending ? ledger.sent : ROWS;
    const phases = send && phasesOf(send, ledger);
    if (bareRecords !== ROWS || inserted.records !== ROWS || queued !== ROWS || sent !== ROWS)
      throw new Error(
        `expected ${ROWS} rows each: bare ${bareRecords}, inserted ${inserted.records}, ingested ${JSON.stringify(ingested.rows)}, sent ${sent}`,
      );
    const waiting = JSON.parse(approval.stdout).files[0];
    // Exit 2: a file waits for a person; 3: payouts sent, left pending (not followed).
    if (
      waiting?.state !== 'awaiting-approval' ||
      approval.status !== 2 ||
      (send && send.status !== 3)
    )
      throw new Error(`run exits ${approval.status} and ${send?.status}: ${approval.stdout}`);
    const ratio = (a, b) => Number((a / b).toFixed(2));
    console.log(
      JSON.stringify({
        bench: 'command',
        rows: ROWS,
        seconds: {
          runApproval: approval.seconds,
          runSend: send?.seconds,
          runSendPhases: phases?.seconds,
          ingest: Number((ingested.ms / 1000).toFixed(2)),
          ingestProcess: ingest.seconds,
          bareCsvParse: bare.seconds,
          bareInsert: Number((inserted.ms / 1000).toFixed(2)),
        },
        // Each process whole (node's start and the journal's opening too), and each part timed inside.
        cpuSeconds: {
          runApproval: approval.cpuSeconds,
          runSend: send?.cpuSeconds,
          ingest: Number((ingested.cpuMs / 1000).toFixed(2)),
          ingestProcess: ingest.cpuSeconds,
          bareCsvParse: bare.cpuSeconds,
          bareInsert: Number((inserted.cpuMs / 1000).toFixed(2)),
        },
        peakRssMb: {
          runApproval: approval.peakRssMb,
          runSend: send?.peakRssMb,
          ingest: ingest.peakRssMb,
          bareCsvParse: bare.peakRssMb,
          bareInsert: insert.peakRssMb,
        },
        rowsPerSec: {
          runApproval: rate(approval.seconds),
          runSend: send && rate(send.seconds),
          ingest: rate(ingested.ms / 1000),
          bareCsvParse: rate(bare.seconds),
          bareInsert: rate(inserted.ms / 1000),
        },
        // Process against process: both count node's start and the journal's opening.
        runApprovalToIngest: ratio(approval.seconds, ingest.seconds),
        ingestToBareInsert: ratio(ingested.ms, inserted.ms),
        runApprovalToBareCsvParse: ratio(approval.seconds, bare.seconds),
        // The same by CPU, process against process.
        runApprovalToIngestCpu: ratio(approval.cpuSeconds, ingest.cpuSeconds),
        ingestToBareInsertCpu: ratio(ingested.cpuMs, inserted.cpuMs),
        runApprovalToBareCsvParseCpu: ratio(approval.cpuSeconds, bare.cpuSeconds),
        payoutsPerSecAtZeroLatency: send && rate(send.seconds),
        sendingPhasePayoutsPerSec: phases && rate(phases.seconds.sending),
        sendingPhaseCpuUsPerPayout: phases?.cpuUs,
        sendingPhaseCpuBoundPerSec: phases?.cpuBound,
        load: loadavg()[0],
      }),
    );
  } finally {
    lean?.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
