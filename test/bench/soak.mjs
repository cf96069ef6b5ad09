// The daemon's soak (issue 36): one `payouts watch` process against the sandbox as a process
// of its own with its faults on (errors before and after a create, 429s, cut connections,
// answers that never come), a new payroll file of ROWS_PER_FILE rows, a payee each, renamed
// into the inbox every 15 s for BENCH_SOAK_MINUTES (default 2; the figure is 30);
// 100 rows, because this shared machine paid about 8 rows/s: more would pile up a backlog
// and measure it instead of the daemon's age.
// Every 30 s a sample of the daemon from /proc (RSS, open fds, threads), the health line's
// answer time (GET /healthz of its postback receiver) and the journal's bytes on disk. When
// the last file is in, waits (still sampling) for every row to be paid and every file done, stops the daemon
// with SIGTERM, then holds the gateway's ledger against the files: every orderId created
// once and paid. Prints each sample as a JSON line, then a summary (`npm run build` first).
import { once } from 'node:events';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { withCheckDigits } from '../../dist/domain/check-digits.js';
import { startGatewayProcess, TOKEN } from './support/gateway-process.mjs';
import { loadAverage } from './support/postgres.mjs';
import { hostsEnv, startHost, waitFor } from './support/watch-hosts.mjs';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 2);
const ROWS_PER_FILE = 100;
const FILE_EVERY_MS = 15_000;
const SAMPLE_EVERY_MS = 30_000;
/** How long the daemon may take to pay what is left once the last file is in. */
const DRAIN_BOUND_MS = 15 * 60_000;
const FAULTS = [
  ...['--error-rate', '0.01', '--error-after-commit-rate', '0.01'],
  ...['--rate-limit-rate', '0.01', '--drop-rate', '0.01', '--hang-rate', '0.001'],
];

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-soak-'));
const home = join(folder, 'home');
const staging = join(folder, 'staging');
mkdirSync(join(home, 'inbox'), { recursive: true });
mkdirSync(staging);

/** File `index`'s rows, each a payee of its own so that no duplicate rule holds one. */
function payrollFile(index) {
  const orderIds = [];
  const lines = ['orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount'];
  for (let row = 0; row < ROWS_PER_FILE; row++) {
    const n = index * ROWS_PER_FILE + row;
    const orderId = `soak-${index}-${row}`;
    orderIds.push(orderId);
    const cents = 1_000 + ((n * 7919) % 500_000);
    lines.push(
      `${orderId},Pessoa ${n},p${n}@example.com,11987654321,${withCheckDigits(String(100_000_000 + n))},EMAIL,p${n}@example.com,"${Math.trunc(cents / 100)},${String(cents % 100).padStart(2, '0')}"`,
    );
  }
  return { text: lines.join('\n') + '\n', orderIds };
}

/** The daemon's RSS (MB), open fds and threads, from /proc. */
function processFigures(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)[1]);
  return {
    rssMB: Number((field('VmRSS') / 1024).toFixed(1)),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    threads: field('Threads'),
  };
}

/** The journal's bytes on disk, its WAL included. */
function journalBytes() {
  return readdirSync(home)
    .filter((name) => name.startsWith('journal.db'))
    .reduce((sum, name) => sum + statSync(join(home, name)).size, 0);
}

/** Milliseconds the daemon takes to answer its health (GET /healthz). */
async function healthMs(receiverUrl) {
  const began = performance.now();
  const response = await request(`${receiverUrl}/healthz`);
  const health = await response.body.json();
  if (response.statusCode !== 200) throw new Error(`healthz: ${response.statusCode}`);
  return { ms: Number((performance.now() - began).toFixed(1)), rows: health.rows };
}

const gateway = await startGatewayProcess(20, { settleDelay: '1s', faults: FAULTS });
const daemon = startHost(
  hostsEnv({ gatewayUrl: gateway.url, token: TOKEN, home, PAYOUTS_POSTBACK_LISTEN: '127.0.0.1:0' }),
);
const pid = daemon.child.pid;
try {
  await waitFor(
    'the postback receiver',
    () => daemon.lines.some((line) => line.includes('postback receiver listening on')),
    60_000,
  );
  const receiverUrl = /listening on (http:\/\/\S+)/.exec(
    daemon.lines.find((line) => line.includes('postback receiver listening on')),
  )[1];
  const expected = new Set();
  const samples = [];
  const began = performance.now();
  const since = () => Math.round((performance.now() - began) / 1000);
  const sample = async () => {
    const health = await healthMs(receiverUrl);
    const figures = {
      bench: 'soak-sample',
      atSec: since(),
      ...processFigures(pid),
      healthMs: health.ms,
      journalMB: Number((journalBytes() / 1e6).toFixed(1)),
      rowsDropped: expected.size,
      inFlight: Object.values(health.rows).reduce((sum, count) => sum + count, 0),
    };
    samples.push(figures);
    console.log(JSON.stringify(figures));
  };
  await sample();
  let files = 0;
  let nextSample = SAMPLE_EVERY_MS;
  for (let at = 0; at < MINUTES * 60_000; at += FILE_EVERY_MS) {
    const { text, orderIds } = payrollFile(files);
    const name = `folha-${String(files).padStart(4, '0')}.csv`;
    writeFileSync(join(staging, name), text);
    // Whole at once, as an accountant's export saved elsewhere and moved in.
    renameSync(join(staging, name), join(home, 'inbox', name));
    for (const orderId of orderIds) expected.add(orderId);
    files++;
    // The files' pace is the soak's clock: a file every 15 s, a sample every other one.
    await delay(Math.max(0, began + at + FILE_EVERY_MS - performance.now()));
    if (at + FILE_EVERY_MS >= nextSample) {
      await sample();
      nextSample += SAMPLE_EVERY_MS;
    }
  }
  const lastFileSec = since();
  let ledger = [];
  const allPaid = async () => {
    ledger = (await gateway.transactions()).filter((entry) => entry.object === 'cashout');
    const paid = ledger.filter((entry) => entry.status === 'paid').length;
    const archived = readdirSync(join(home, 'archive')).length;
    return paid >= expected.size && archived >= files;
  };
  // Still sampled every 30 s while what is in flight is paid.
  const drainBound = performance.now() + DRAIN_BOUND_MS;
  while (!(await allPaid())) {
    if (performance.now() > drainBound) throw new Error('timed out waiting for every row paid');
    if (performance.now() - began >= nextSample) {
      await sample();
      nextSample += SAMPLE_EVERY_MS;
    }
    await delay(2_000);
  }
  const drainedSec = since();
  await sample();
  daemon.child.kill('SIGTERM');
  await once(daemon.child, 'exit');
  const byOrderId = new Map();
  for (const entry of ledger) byOrderId.set(entry.orderId, (byOrderId.get(entry.orderId) ?? 0) + 1);
  const createdTwice = [...byOrderId.values()].filter((count) => count > 1).length;
  const missing = [...expected].filter((orderId) => !byOrderId.has(orderId)).length;
  const unexpected = [...byOrderId.keys()].filter((orderId) => !expected.has(orderId)).length;
  const notPaid = ledger.filter((entry) => entry.status !== 'paid').length;
  const span = (field) => ({
    first: samples[0][field],
    last: samples.at(-1)[field],
    max: Math.max(...samples.map((s) => s[field])),
  });
  console.log(
    JSON.stringify({
      bench: 'soak',
      minutes: MINUTES,
      files,
      rows: expected.size,
      lastFileSec,
      drainedSec,
      rssMB: span('rssMB'),
      fds: span('fds'),
      threads: span('threads'),
      healthMs: span('healthMs'),
      journalMB: span('journalMB'),
      createdTwice,
      missing,
      unexpected,
      notPaid,
      paidOnce: createdTwice === 0 && missing === 0 && unexpected === 0 && notPaid === 0,
      daemonExit: daemon.child.exitCode,
      load: loadAverage(),
    }),
  );
  if (createdTwice + missing + unexpected + notPaid !== 0) process.exitCode = 1;
} finally {
  if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
    daemon.child.kill('SIGKILL');
    await once(daemon.child, 'exit');
  }
  gateway.close();
  rmSync(folder, { recursive: true, force: true });
}
