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
// `node test/bench/command.mjs send` runs the sending run alone.
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { writePayoutFile } from './support/brazilian-excel.mjs';

const ROWS = Number(process.env.BENCH_COMMAND_ROWS ?? 100_000);
const TIME = '/usr/bin/time';
const TOKEN = 'bench-token';
const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));
const INGEST = fileURLToPath(new URL('./ingest.mjs', import.meta.url));
const LEAN = fileURLToPath(new URL('./support/lean-gateway.mjs', import.meta.url));
const self = fileURLToPath(import.meta.url);
/** Rows inserted a transaction by the bare insert, as ingest.ts commits its chunks. */
const CHUNK = 1_000;

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

/** A command line under GNU time: its wall seconds, peak RSS in MB, and stdout; `part` printed. */
function timed(part, args, env = process.env) {
  const child = spawnSync(TIME, ['-f', 'TIMED %e %M', process.execPath, ...args], {
    encoding: 'utf8',
    env,
    maxBuffer: 256 * 1024 * 1024,
    timeout: 60 * 60_000,
  });
  const found = /TIMED ([\d.]+) (\d+)/.exec(child.stderr ?? '');
  if (!found) throw new Error(`${args.join(' ')}: ${child.status ?? child.signal} ${child.stderr}`);
  // Each part as it ends: a million rows take most of an hour on a busy machine.
  console.log(JSON.stringify({ bench: 'command', rows: ROWS, part, seconds: Number(found[1]) }));
  return {
    status: child.status,
    stdout: child.stdout,
    stderr: child.stderr,
    seconds: Number(found[1]),
    peakRssMb: Math.round(Number(found[2]) / 1024),
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
  return { url: /listening on (\S+)/.exec(output)[1], close: () => child.kill('SIGTERM') };
}

/** `payouts run --json` on a fresh home whose inbox holds `file`. */
function run(folder, file, gatewayUrl, approval) {
  const home = join(folder, approval ? 'home-approval' : 'home-send');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  copyFileSync(file, join(home, 'inbox', 'folha.csv'));
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUTS_'))),
    PAYOUTS_HOME: home,
    PAYOUTS_BASE_URL: gatewayUrl,
    PAYOUTS_TOKEN: TOKEN,
    PAYOUTS_LOG_LEVEL: 'silent',
    PAYOUTS_INBOX_SETTLE: '1ms',
    PAYOUTS_FOLLOW_TIMEOUT: '0',
    PAYOUTS_REQUIRE_APPROVAL: String(approval),
    PAYOUTS_BALANCE_CHECK: 'off',
    PAYOUTS_MAX_FILE_BYTES: String(4 * 1024 ** 3),
    PAYOUTS_MAX_PAYOUT_CENTS: String(1e12),
    PAYOUTS_MAX_FILE_CENTS: String(Number.MAX_SAFE_INTEGER),
  };
  const startedAt = Date.now();
  const measured = timed(approval ? 'runApproval' : 'runSend', [BIN, 'run', '--json'], env);
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

/** The sending run's phases in seconds: to the first create, first to last, after the last. */
function phasesOf(send, { firstAt, lastAt }) {
  const seconds = (ms) => Number((ms / 1000).toFixed(2));
  return {
    beforeFirstSend: seconds(firstAt - send.startedAt),
    sending: seconds(lastAt - firstAt),
    afterLastSend: seconds(send.endedAt - lastAt),
  };
}

const rate = (seconds) => Math.round(ROWS / seconds);

/** The sending run alone, against a fresh stand-in: its seconds, phases, peak RSS and rates. */
async function sendAlone(folder) {
  const file = join(folder, 'folha.csv');
  await writePayoutFile(file, ROWS);
  const lean = await startLean();
  try {
    const send = run(folder, file, lean.url, false);
    const ledger = await ledgerOf(lean);
    if (ledger.sent !== ROWS || send.status !== 3)
      throw new Error(`sent ${ledger.sent} of ${ROWS}, run exits ${send.status}: ${send.stderr}`);
    const phases = phasesOf(send, ledger);
    return {
      bench: 'command',
      rows: ROWS,
      seconds: { runSend: send.seconds, ...phases },
      peakRssMb: { runSend: send.peakRssMb },
      payoutsPerSecAtZeroLatency: rate(send.seconds),
      sendingPhasePayoutsPerSec: rate(phases.sending),
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
    const bare = timed('bareCsvParse', [INGEST, 'bare', file]);
    const bareRecords = JSON.parse(bare.stdout).records;
    const insert = timed('bareInsert', [self, 'insert', file, join(folder, 'bare.db')]);
    const inserted = JSON.parse(insert.stdout);
    rmSync(join(folder, 'bare.db'), { force: true });
    const ingest = timed('ingest', [INGEST, 'ingest', file, join(folder, 'ingest.db')]);
    const ingested = JSON.parse(ingest.stdout);
    const queued = ingested.rows.queued ?? 0;
    rmSync(join(folder, 'ingest.db'), { force: true });
    // Started now, so its bounded life is the runs'.
    lean = await startLean();
    const approval = run(folder, file, lean.url, true);
    const send = run(folder, file, lean.url, false);
    const ledger = await ledgerOf(lean);
    const { sent } = ledger;
    const phases = phasesOf(send, ledger);
    if (bareRecords !== ROWS || inserted.records !== ROWS || queued !== ROWS || sent !== ROWS)
      throw new Error(
        `expected ${ROWS} rows each: bare ${bareRecords}, inserted ${inserted.records}, ingested ${JSON.stringify(ingested.rows)}, sent ${sent}`,
      );
    const waiting = JSON.parse(approval.stdout).files[0];
    // Exit 2: a file waits for a person; 3: payouts sent, left pending (not followed).
    if (waiting?.state !== 'awaiting-approval' || approval.status !== 2 || send.status !== 3)
      throw new Error(`run exits ${approval.status} and ${send.status}: ${approval.stdout}`);
    const ratio = (a, b) => Number((a / b).toFixed(2));
    console.log(
      JSON.stringify({
        bench: 'command',
        rows: ROWS,
        seconds: {
          runApproval: approval.seconds,
          runSend: send.seconds,
          runSendPhases: phases,
          ingest: Number((ingested.ms / 1000).toFixed(2)),
          ingestProcess: ingest.seconds,
          bareCsvParse: bare.seconds,
          bareInsert: Number((inserted.ms / 1000).toFixed(2)),
        },
        peakRssMb: {
          runApproval: approval.peakRssMb,
          runSend: send.peakRssMb,
          ingest: ingest.peakRssMb,
          bareCsvParse: bare.peakRssMb,
          bareInsert: insert.peakRssMb,
        },
        rowsPerSec: {
          runApproval: rate(approval.seconds),
          runSend: rate(send.seconds),
          ingest: rate(ingested.ms / 1000),
          bareCsvParse: rate(bare.seconds),
          bareInsert: rate(inserted.ms / 1000),
        },
        // Process against process: both count node's start and the journal's opening.
        runApprovalToIngest: ratio(approval.seconds, ingest.seconds),
        ingestToBareInsert: ratio(ingested.ms, inserted.ms),
        runApprovalToBareCsvParse: ratio(approval.seconds, bare.seconds),
        payoutsPerSecAtZeroLatency: rate(send.seconds),
        sendingPhasePayoutsPerSec: rate(phases.sending),
      }),
    );
  } finally {
    lean?.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
