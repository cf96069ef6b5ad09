/**
 * A daemon with many files open on a slow journal keeps following its pending payouts
 * while it visits those files: a payout the gateway settled is seen paid within a pass or
 * two, not after as many passes as it takes slices of following to reach it (issue 31:
 * 280 files open, following settling 28 rows a minute across three hosts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { receivePostbacks, serve } from '../../src/app/serve.js';
import { loadConfig } from '../../src/config/load.js';
import { ensureFolders, homeFolders } from '../../src/inbox/folders.js';
import { lockHome } from '../../src/inbox/lock.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { TOKEN, clientFor } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { payrollFile } from '../support/payroll.js';
import { roundTripProxy } from '../support/round-trips.js';
import { waitFor } from '../support/wait.js';

const FILES = 80;
const ROWS = 2;
/** Each message's way to the journal once the files are open: a database across a network. */
const LATENCY_MS = 20;
/** File passes the daemon may finish between the gateway settling and every payout seen paid. */
const PASSES_ALLOWED = 3;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `following beside many open files on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();

    it('sees every settled payout paid within a few file passes', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'payouts-follow-beside-'));
      const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
      sandbox.settleAs('pending');
      const proxy = await roundTripProxy(await postgres.made('beside'));
      const journal = await openPostgresJournal({ kind: 'postgres', url: proxy.url });
      const gateway = clientFor(sandbox.url);
      const stop = new AbortController();
      cleanups.push(async () => {
        await gateway.close();
        await journal.close();
        await proxy.close();
        await sandbox.close();
        rmSync(folder, { recursive: true, force: true });
      });
      const folders = homeFolders(join(folder, 'home'));
      ensureFolders(folders);
      const config = loadConfig({
        env: {
          PAYOUTS_HOME: folders.home,
          PAYOUTS_BASE_URL: sandbox.url,
          PAYOUTS_TOKEN: TOKEN,
          PAYOUTS_INBOX_RESCAN: '1s',
          PAYOUTS_INBOX_SETTLE: '1ms',
          PAYOUTS_CONCURRENCY: '2',
          PAYOUTS_POSTBACK_LISTEN: '127.0.0.1:0',
        },
      }).config;
      // The daemon's passes, counted from its log.
      let passes = 0;
      const lines: string[] = [];
      const logger = pino(
        { level: 'debug' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            for (const line of chunk.toString().split('\n').filter(Boolean)) {
              lines.push(line);
              if ((JSON.parse(line) as { msg?: string }).msg === 'pass done') passes += 1;
            }
            done();
          },
        }),
      );
      // Said at the end: a throw here would be no test's failure.
      let lost: string | undefined;
      const lock = await lockHome(journal, {
        command: 'watch',
        host: 'pay-1',
        perHost: true,
        waitMs: 0,
        signal: stop.signal,
        clock: systemClock,
        onLost: (why) => (lost = why),
      });
      if ('heldBy' in lock) throw new Error('the lock was not taken');
      cleanups.push(() => lock.release());
      const started = await receivePostbacks({ config, folders, journal, logger });
      if ('failed' in started) throw new Error(started.why);
      const receiver = started.receiver;
      cleanups.push(async () => receiver?.close());
      for (let i = 0; i < FILES; i++) {
        writeFileSync(
          join(folders.inbox, `folha-${i}.csv`),
          payrollFile(`f${i}`, ROWS, () => `${i + 1},00`),
        );
      }
      const served = serve({
        config,
        folders,
        journal,
        ...(lock.claims ? { claims: lock.claims } : {}),
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
      const pending = async () => (await journal.countsByState(['pending'])).pending?.count ?? 0;
      await waitFor(
        `every payout sent and its file's result written`,
        async () => (await pending()) === FILES * ROWS && passes >= 2,
        480_000,
      ).catch(async (error: unknown) => {
        // Which rows were not sent, or were held, says why.
        const rows = await journal.countsByState(['queued', 'sending', 'unknown', 'held']);
        const why = `${passes} passes, rows ${JSON.stringify(rows)}, ${sandbox.ledger().length} at the gateway`;
        throw new Error(`${(error as Error).message}: ${why}`);
      });
      proxy.slow(LATENCY_MS);
      const before = passes;
      sandbox.settleAs('by-key');
      const paid = async () => (await journal.countsByState(['paid'])).paid?.count ?? 0;
      await waitFor(`every payout seen paid`, async () => (await paid()) === FILES * ROWS, 600_000);
      const figures = `${passes - before} file passes from the gateway settling to ${FILES * ROWS} payouts seen paid, ${FILES} files open, ${LATENCY_MS} ms to the journal`;
      console.log(figures);
      expect(passes - before, figures).toBeLessThanOrEqual(PASSES_ALLOWED);
      stop.abort();
      expect(await served).toEqual({ failed: false });
      expect(lines.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
      expect(lost).toBeUndefined();
    }, 1_200_000);
  },
);
