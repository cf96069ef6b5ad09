/**
 * `payouts watch` while a batch's payouts settle one after another: each settlement may
 * finish the file (its result written again), but a pass comes at most once per
 * min(inboxSettle, inboxRescan) after the first settlement it follows, not once per
 * settlement, which at 200,000 rows rewrote the whole result file back to back.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { receivePostbacks, serve } from '../../src/app/serve.js';
import { loadConfig } from '../../src/config/load.js';
import { ensureFolders, homeFolders } from '../../src/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { TOKEN, clientFor } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';
import { waitFor } from '../support/wait.js';

const ROWS = 24;
/** Each cash-out's answer, sent one at a time: their settlements come this far apart. */
const CREATE_MS = 100;
/** From a cash-out's creation to its settlement: after the pass that sends them all. */
const SETTLE_DELAY_MS = 3_000;
/** min(inboxSettle, inboxRescan): at most one pass this often while payouts settle. */
const PASS_EVERY_MS = 1_000;
/** Passes allowed beyond one per PASS_EVERY_MS: the one sending, the one finishing. */
const SLACK = 2;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('payouts settling one after another bring a pass once per min(inboxSettle, inboxRescan), not one each', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-serve-settling-'));
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: SETTLE_DELAY_MS,
    faults: { latencyMs: CREATE_MS, operations: ['createCashOut'] },
  });
  const folders = homeFolders(join(folder, 'home'));
  ensureFolders(folders);
  const journal = await openJournal(sqliteJournalAt(folders.journal), { now: Date.now });
  const gateway = clientFor(sandbox.url);
  const stop = new AbortController();
  cleanups.push(async () => {
    await gateway.close();
    await journal.close();
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const config = loadConfig({
    env: {
      PAYOUTS_HOME: folders.home,
      PAYOUTS_BASE_URL: sandbox.url,
      PAYOUTS_TOKEN: TOKEN,
      PAYOUTS_INBOX_SETTLE: `${PASS_EVERY_MS}ms`,
      // The default: a settlement journaled just after a pass looked is finished by the rescan.
      PAYOUTS_INBOX_RESCAN: '5s',
      PAYOUTS_CONCURRENCY: '1',
      // Each settlement told at once, so on its own it would bring a pass.
      PAYOUTS_POSTBACK_LISTEN: '127.0.0.1:0',
    },
  }).config;
  // When each pass ended, from the daemon's log.
  const passes: number[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as { msg?: string; time: number };
          if (entry.msg === 'pass done') passes.push(entry.time);
        }
        done();
      },
    }),
  );
  const started = await receivePostbacks({ config, folders, journal, logger });
  if ('failed' in started) throw new Error(started.why);
  const receiver = started.receiver;
  cleanups.push(async () => receiver?.close());
  const file = join(folders.inbox, 'folha.csv');
  writeFileSync(file, payrollFile('s', ROWS));
  const past = new Date(Date.now() - 60_000);
  utimesSync(file, past, past); // settled: taken by the first pass
  const served = serve({
    config,
    folders,
    journal,
    gateway,
    logger,
    clock: systemClock,
    signal: stop.signal,
    hintFlags: '',
    setHealth: () => undefined,
    receiver,
  });
  cleanups.push(async () => {
    stop.abort();
    await served;
  });
  await waitFor(
    'the batch finished',
    async () => (await journal.batchesIn('done')).length === 1,
    60_000,
  ).catch(async (error: unknown) => {
    const batches = await journal.batches();
    const rows = await journal.countsByState([
      'queued',
      'sending',
      'pending',
      'paid',
      'held',
      'unknown',
    ]);
    const ledger = sandbox.ledger().map((entry) => entry.status);
    throw new Error(
      `${(error as Error).message}: ${JSON.stringify({ batches: batches.map((b) => b.state), rows, ledger, passes: passes.length })}`,
    );
  });
  const finishedAt = Date.now();
  const settledAt = sandbox
    .ledger()
    .map((entry) => Date.parse(`${entry.processedAt}Z`))
    .sort((a, b) => a - b);
  const firstSettled = settledAt[0] ?? 0;
  const lastSettled = settledAt.at(-1) ?? 0;
  const during = passes.filter((at) => at >= firstSettled && at <= finishedAt).length;
  // Later settlements do not push the pass back: one comes while they still do.
  const amid = passes.filter((at) => at > firstSettled + PASS_EVERY_MS && at < lastSettled);
  const allowed = Math.ceil((finishedAt - firstSettled) / PASS_EVERY_MS) + SLACK;
  const figures = `${during} passes from the first of ${ROWS} settlements to the batch done, ${finishedAt - firstSettled} ms (settlements over ${lastSettled - firstSettled} ms, ${amid.length} passes amid them); at most ${allowed}`;
  console.log(figures);
  expect(settledAt).toHaveLength(ROWS);
  expect(during, figures).toBeLessThanOrEqual(allowed);
  // Sent one at a time, CREATE_MS apart: they settle over more than twice PASS_EVERY_MS.
  expect(lastSettled - firstSettled).toBeGreaterThan(2 * PASS_EVERY_MS);
  expect(amid.length, figures).toBeGreaterThanOrEqual(1);
  stop.abort();
  expect(await served).toEqual({ failed: false });
}, 180_000);
