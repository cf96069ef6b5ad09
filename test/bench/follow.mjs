// Gateway requests spent following 1,000 payouts that settle 30 s after creation, by
// polling alone and with the postback receiver on, against the ideal of one poll per
// payout; and by polling alone a batch whose every tenth payout settles at 60 s (the
// sandbox's `review@` key: an unknown word at 30 s, paid at 60 s). One after another,
// each against its own in-process sandbox and journal: run at once, the polls one mode
// makes together (a batch polled when it settles) would slow the others' in this one
// process. Each prints one JSON line: the polls, how long following took from the first
// send to the last payout seen settled, and how long after the last settlement that was;
// and the lookups by orderId asked before the batch's first send (checkFirstSends), with
// every request of following and checking a payout.
//
// Then the follow loop's speed against the size of the batch: 2,000 and then 200,000
// payouts pending, every one due, put straight into a journal in SQL, polled for 8 s
// against the lean stand-in (its own process, every poll answered at once as pending):
// the payouts it takes up a second (claimed as due: polled, or put back to wait for their
// batch's probes) and the polls among them, and how long the loop takes to end once
// stopped (what SIGTERM waits for). `node test/bench/follow.mjs pending` runs only these (`npm run build` first).
//
// Then the command a user runs (issue 34): a home whose journal holds 2,000, 20,000 and
// 200,000 payouts sent and pending, every one due, put in SQL as above, followed by
// `payouts watch` as a child against the lean stand-in: its polls a second from the
// stand-in's count over 5 s once polling began, and the time from SIGTERM to the exit; then
// `payouts run --follow-timeout 10s` on the same home under GNU time: its wall time from
// spawn to exit, and beyond the timeout (start-up and intake counted in), and its CPU
// seconds (user and system) in all and past the timeout (10 s after its spawn).
// `node test/bench/follow.mjs command` runs only these, `BENCH_FOLLOW_PENDING=200000`
// only the sizes named.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requestBudget } from '../../dist/engine/budget.js';
import { sendQueued } from '../../dist/engine/engine.js';
import { checkFirstSends } from '../../dist/engine/first-send.js';
import {
  Doorbell,
  followPending,
  nudgeOnPostback,
  wakeOnPollNow,
} from '../../dist/engine/follow.js';
import { POLLING, POLLING_WITH_POSTBACKS } from '../../dist/engine/policy.js';
import { createGatewayPool } from '../../dist/engine/pool.js';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { startPostbackReceiver } from '../../dist/postback/receiver.js';
import { startSandbox } from '../../dist/sandbox/server.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { sqliteBinding } from '../../dist/runtime/sqlite.js';
import { addPayouts } from './support/old-payouts.mjs';
import { cpuMicrosOf } from './support/postgres.mjs';

const TOKEN = 'bench-token';
const PAYOUTS = 1_000;
const SETTLE_MS = 30_000;
const SECRET = 'bench-secret-bench-secret-bench-secret-0000';

/** The Pix key of payout `i`: in the mixed batch, every tenth settles twice as late. */
const pixKey = (mode, i) =>
  mode === 'mixed' && i % 10 === 5 ? `review+${i}@example.com` : `p${i}@example.com`;

/** Our client of the gateway at `baseUrl`, a connection for each of the 16 polls at once. */
const clientOf = (baseUrl) =>
  createGatewayClient({
    baseUrl,
    token: TOKEN,
    authScheme: '',
    getTransactionMethod: 'GET',
    connectTimeoutMs: 5000,
    requestTimeoutMs: 30_000,
    connections: 16,
  });

/** What the engine's loops are given: 16 polls at once, ended by `stop`. */
const engineDeps = (journal, gateway, stop) => ({
  journal,
  gateway,
  clock: systemClock,
  random: Math.random,
  elapsed: () => performance.now(),
  pool: createGatewayPool({
    concurrency: 16,
    budget: requestBudget(null),
    maxPauseMs: 60_000,
    stop,
    clock: systemClock,
  }),
});

async function follow(mode) {
  let polls = 0;
  let lookups = 0;
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: SETTLE_MS,
    initialBalanceCents: 1e12,
    onRequest: ({ path }) => {
      if (path.startsWith('/transaction/get/by/id/')) polls++;
      if (path.startsWith('/transaction/get/by/orderId/')) lookups++;
    },
  });
  const folder = mkdtempSync(join(tmpdir(), `payouts-bench-follow-${mode}-`));
  const journal = await openJournal(sqliteJournalAt(join(folder, 'journal.db')));
  const gateway = clientOf(sandbox.url);
  const doorbell = new Doorbell();
  const stopWaking = await wakeOnPollNow(journal, doorbell);
  const receiver =
    mode === 'postbacks'
      ? await startPostbackReceiver({
          host: '127.0.0.1',
          port: 0,
          secret: SECRET,
          onPostback: nudgeOnPostback(journal),
        })
      : undefined;
  try {
    const batchId = await journal.recordBatch(
      {
        fileName: 'bench.csv',
        sha256: mode,
        state: 'open',
        rows: PAYOUTS,
        valid: PAYOUTS,
        invalid: 0,
        totalCents: PAYOUTS * 100,
        problems: [],
      },
      [],
    );
    await journal.admitPayouts(
      batchId,
      Array.from({ length: PAYOUTS }, (_, i) => ({
        line: i + 2,
        request: {
          value: 100,
          pixKeyType: 2,
          pixKey: pixKey(mode, i),
          cpfCnpj: '52998224725',
          person: { name: `Pessoa ${i}`, email: `p${i}@example.com`, phone: '+5511987654321' },
          orderId: `${mode}-${i}`,
        },
      })),
      { duplicateWindowMs: 0 },
    );
    const deps = engineDeps(journal, gateway, new AbortController().signal);
    const options = {
      owner: 'bench',
      leaseMs: 120_000,
      graceMs: 120_000,
      maxUnreachable: 8,
      pollPolicy: receiver ? POLLING_WITH_POSTBACKS : POLLING,
      postbackUrl: receiver ? `${receiver.url}/postback/${SECRET}` : undefined,
    };
    const started = Date.now();
    const check = await checkFirstSends(deps);
    if (check.kind !== 'clear') throw new Error(`first-send check: ${JSON.stringify(check)}`);
    await sendQueued(deps, options);
    const report = await followPending(deps, {
      ...options,
      doorbell,
      until: started + 10 * SETTLE_MS,
    });
    const ended = Date.now();
    const settled = (await journal.countsByState()).paid?.count ?? 0;
    // The sandbox writes its settlement times without a zone: UTC.
    const lastSettledAt = Math.max(
      ...sandbox.ledger().map((entry) => Date.parse(`${entry.processedAt}Z`)),
    );
    return {
      bench: 'follow',
      mode,
      payouts: PAYOUTS,
      settleAfterMs: SETTLE_MS,
      settled,
      pollRequests: polls,
      idealPollRequests: PAYOUTS,
      pollsPerPayout: Number((polls / PAYOUTS).toFixed(2)),
      firstSendLookups: lookups,
      lookupsPerPayout: Number(((polls + lookups) / PAYOUTS).toFixed(3)),
      // From the first send to the last settlement seen (the floor: just over 30 s, or 60).
      followMs: ended - started,
      // How long after the last settlement at the gateway it was seen.
      lastSeenLateMs: ended - lastSettledAt,
      followerPolls: report.polls,
    };
  } finally {
    await receiver?.close();
    await stopWaking();
    await journal.close();
    await gateway.close();
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function startLeanGateway() {
  const lean = fileURLToPath(new URL('./support/lean-gateway.mjs', import.meta.url));
  const child = spawn(process.execPath, [lean, '0', TOKEN, '30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  while (!/listening on (\S+)/.test(output)) [output] = await once(child.stdout, 'data');
  return { url: /listening on (\S+)/.exec(output)[1], close: () => child.kill('SIGTERM') };
}

const POLL_FOR_MS = 8_000;

async function pollRate(pending) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-follow-pending-'));
  const path = join(folder, 'journal.db');
  await (await openJournal(sqliteJournalAt(path))).close();
  const db = new (sqliteBinding())(path);
  // Sent eleven minutes ago: every poll is due.
  addPayouts(db, { count: pending, state: 'pending', now: Date.now() - 660_000 });
  db.close();
  const lean = await startLeanGateway();
  const opened = await openJournal(sqliteJournalAt(path));
  let followed = 0;
  const journal = Object.assign(Object.create(opened), {
    claimDue: async (...args) => {
      const claims = await opened.claimDue(...args);
      followed += claims.length;
      return claims;
    },
  });
  const gateway = clientOf(lean.url);
  const stop = new AbortController();
  try {
    const deps = engineDeps(journal, gateway, stop.signal);
    const started = performance.now();
    const following = followPending(deps, {
      owner: 'bench',
      leaseMs: 120_000,
      graceMs: 120_000,
      maxUnreachable: 8,
      pollPolicy: POLLING,
      until: Date.now() + 10 * POLL_FOR_MS,
    });
    await systemClock.sleep(POLL_FOR_MS);
    const stoppedAt = performance.now();
    stop.abort();
    const report = await following;
    const ended = performance.now();
    return {
      bench: 'follow',
      mode: 'pending',
      pending,
      followedPerSecond: Math.round((followed * 1000) / (stoppedAt - started)),
      pollsPerSecond: Math.round((report.polls * 1000) / (stoppedAt - started)),
      stopMs: Math.round(ended - stoppedAt),
    };
  } finally {
    await opened.close();
    await gateway.close();
    lean.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));
const COMMAND_WINDOW_MS = 5_000;
const FOLLOW_TIMEOUT_MS = 10_000;
const COMMAND_SIZES = (process.env.BENCH_FOLLOW_PENDING ?? '2000,20000,200000')
  .split(',')
  .map(Number);
/** Every wait on the command's child is bounded by this much. */
const COMMAND_BOUND_MS = 5 * 60_000;

/** The environment of a command on `home` against the gateway at `url`. */
const commandEnv = (home, url) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUTS_'))),
  PAYOUTS_HOME: home,
  PAYOUTS_BASE_URL: url,
  PAYOUTS_TOKEN: TOKEN,
  PAYOUTS_LOG_LEVEL: 'silent',
  PAYOUTS_INBOX_SETTLE: '1ms',
  PAYOUTS_BALANCE_CHECK: 'off',
});

/** The stand-in's count of polls answered. */
async function pollsAnswered(url) {
  const ledger = await fetch(`${url}/sandbox/ledger`, { headers: { authorization: TOKEN } });
  return (await ledger.json()).polls;
}

/** Looks at `look` every 50 ms until it gives something, within the bound. */
async function waitFor(what, look) {
  const bound = performance.now() + COMMAND_BOUND_MS;
  for (;;) {
    const seen = await look();
    if (seen !== undefined) return seen;
    if (performance.now() > bound) throw new Error(`waited too long for ${what}`);
    await systemClock.sleep(50);
  }
}

const TIME = '/usr/bin/time';

/** GNU time's one child, the command's node (0 before it starts and once it is gone). */
function childOf(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim());
  } catch {
    return 0;
  }
}

/**
 * `payouts ...args` as a child on the home, under GNU time when `timed` (its CPU seconds
 * then in `exited.cpuSeconds`); `exited` resolves with when it exited.
 */
function startCommand(home, url, args, timed = false) {
  const command = timed
    ? [TIME, ['-f', 'TIMED %U %S', process.execPath, BIN, ...args]]
    : [process.execPath, [BIN, ...args]];
  const child = spawn(...command, {
    env: commandEnv(home, url),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'close').then(([code, signal]) => {
    const cpu = /TIMED ([\d.]+) ([\d.]+)/.exec(stderr);
    return {
      at: performance.now(),
      code,
      signal,
      stderr,
      ...(cpu ? { cpuSeconds: Number(cpu[1]) + Number(cpu[2]) } : {}),
    };
  });
  return { child, exited };
}

/**
 * What `promise` gives, or undefined once `ms` have passed first; the timer is ended either
 * way, so that a bound left waiting keeps the benchmark's process alive no longer.
 */
async function within(promise, ms) {
  const done = new AbortController();
  try {
    return await Promise.race([promise, systemClock.sleep(ms, done.signal)]);
  } finally {
    done.abort();
  }
}

/** The polls answered, and when, once they began growing. */
async function pollingBegan(url, exited) {
  let gone = false;
  void exited.then(() => (gone = true));
  const before = await pollsAnswered(url);
  return waitFor('the first poll', async () => {
    if (gone) throw new Error('the command exited before it polled');
    const polls = await pollsAnswered(url);
    return polls > before ? { polls, at: performance.now() } : undefined;
  });
}

async function commandFollowing(pending, lean) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-follow-command-'));
  const home = join(folder, 'home');
  try {
    // An empty run makes the home and its journal as a user's first run does.
    const made = spawnSync(process.execPath, [BIN, 'run', '--follow-timeout', '0'], {
      env: commandEnv(home, lean.url),
      encoding: 'utf8',
      timeout: COMMAND_BOUND_MS,
    });
    if (made.status !== 0) throw new Error(`payouts run: ${made.status} ${made.stderr}`);
    const db = new (sqliteBinding())(join(home, 'journal.db'));
    // Sent eleven minutes ago: every poll is due.
    addPayouts(db, { count: pending, state: 'pending', now: Date.now() - 660_000 });
    db.close();

    const watch = startCommand(home, lean.url, ['watch']);
    let watchStopMs;
    let polls;
    try {
      const began = await pollingBegan(lean.url, watch.exited);
      await systemClock.sleep(COMMAND_WINDOW_MS);
      polls =
        ((await pollsAnswered(lean.url)) - began.polls) / ((performance.now() - began.at) / 1000);
    } finally {
      const termAt = performance.now();
      watch.child.kill('SIGTERM');
      const ended = await within(watch.exited, COMMAND_BOUND_MS);
      if (!ended) watch.child.kill('SIGKILL');
      watchStopMs = ended ? ended.at - termAt : undefined;
      if (ended && ended.code !== 0)
        throw new Error(`payouts watch: ${ended.code} ${ended.stderr}`);
    }

    const startedAt = performance.now();
    const run = startCommand(
      home,
      lean.url,
      ['run', '--follow-timeout', `${FOLLOW_TIMEOUT_MS}ms`],
      true,
    );
    // Its CPU once the timeout has run from its spawn (or at its exit, if sooner).
    const timedOut = await within(run.exited, FOLLOW_TIMEOUT_MS);
    const cpuAtTimeout = timedOut ? undefined : cpuMicrosOf(childOf(run.child.pid)) / 1e6;
    const ended = await within(run.exited, COMMAND_BOUND_MS);
    if (!ended) {
      run.child.kill('SIGKILL');
      throw new Error('payouts run --follow-timeout 10s ran past the bound');
    }
    // Exit 3: payouts left pending.
    if (ended.code !== 3) throw new Error(`payouts run: ${ended.code} ${ended.stderr}`);
    const runSeconds = (ended.at - startedAt) / 1000;
    return {
      bench: 'follow',
      mode: 'command',
      pending,
      watchPollsPerSecond: Math.round(polls),
      watchSigtermToExitMs: Math.round(watchStopMs),
      runFollowTimeout10sSeconds: Number(runSeconds.toFixed(2)),
      runBeyondTimeoutSeconds: Number((runSeconds - FOLLOW_TIMEOUT_MS / 1000).toFixed(2)),
      runCpuSeconds: ended.cpuSeconds,
      runCpuPastTimeoutSeconds: Number(
        (ended.cpuSeconds - (cpuAtTimeout ?? ended.cpuSeconds)).toFixed(2),
      ),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const only = process.argv[2];
if (only === undefined) {
  for (const mode of ['polling', 'postbacks', 'mixed'])
    console.log(JSON.stringify(await follow(mode)));
}
if (only === undefined || only === 'pending') {
  for (const pending of [2_000, 200_000]) console.log(JSON.stringify(await pollRate(pending)));
}
if (only === undefined || only === 'command') {
  const lean = await startLeanGateway();
  try {
    for (const pending of COMMAND_SIZES)
      console.log(JSON.stringify(await commandFollowing(pending, lean)));
  } finally {
    lean.close();
  }
}
