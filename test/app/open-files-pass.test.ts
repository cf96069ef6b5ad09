/**
 * A daemon's pass looks at every file of processing/ again. On a journal hosts share, a
 * file whose rows did not move since this process last looked costs it a few reads, no
 * batch claim taken and released and no result written again: a host with a hundred
 * files open otherwise spends its passes on them, and its following (a round of
 * `inboxRescan` a pass) falls ever further behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ensureFolders, homeFolders } from '../../src/inbox/folders.js';
import { lockHome } from '../../src/inbox/lock.js';
import { newPassMemory, runPass } from '../../src/app/pass.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { TOKEN, clientFor } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { payrollFile } from '../support/payroll.js';
import { roundTripProxy } from '../support/round-trips.js';
import { writeFileSync } from 'node:fs';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a daemon's pass over open files on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();

    it('costs a few round trips for each file whose rows did not move', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'payouts-open-files-'));
      // Payouts stay pending at the gateway: no row of an open file moves between passes.
      const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
      const proxy = await roundTripProxy(await postgres.made('open_files'));
      const journal = await openPostgresJournal({ kind: 'postgres', url: proxy.url });
      const gateway = clientFor(sandbox.url);
      const stop = new AbortController();
      const lock = await lockHome(journal, {
        command: 'watch',
        host: 'pay-1',
        perHost: true,
        waitMs: 0,
        signal: stop.signal,
        clock: systemClock,
        onLost: (why) => {
          throw new Error(why);
        },
      });
      if ('heldBy' in lock) throw new Error('the lock was not taken');
      cleanups.push(async () => {
        await lock.release();
        await gateway.close();
        await journal.close();
        await proxy.close();
        await sandbox.close();
        rmSync(folder, { recursive: true, force: true });
      });
      const folders = homeFolders(join(folder, 'home'));
      ensureFolders(folders);
      const config = loadConfig({
        env: { PAYOUTS_HOME: folders.home, PAYOUTS_BASE_URL: sandbox.url, PAYOUTS_TOKEN: TOKEN },
      }).config;
      const memory = newPassMemory();
      const pass = async () => {
        // No lookups of unclear rows (there are none) and no following: the files alone.
        memory.resolvedAt = Date.now();
        return runPass(journal, gateway, folders, config, {
          followMs: 0,
          signal: stop.signal,
          pollPolicy: { firstMs: 3_600_000, growth: 1, capMs: 3_600_000 },
          isReady: () => true,
          note: () => undefined,
          clock: systemClock,
          memory,
          ...(lock.claims ? { claims: lock.claims } : {}),
        });
      };
      let dropped = 0;
      /** `files` more files, taken in and sent, then the round trips of a pass after. */
      const roundTripsWith = async (files: number) => {
        for (let i = 0; i < files; i++, dropped++) {
          writeFileSync(join(folders.inbox, `folha-${dropped}.csv`), payrollFile(`f${dropped}`, 3));
        }
        const taken = await pass();
        expect(taken.files.map((file) => file.rows)).toEqual(
          Array.from({ length: dropped }, () => ({ pending: 3 })),
        );
        // Their results written once; from now on nothing of them moves.
        await pass();
        proxy.take();
        const report = await pass();
        expect(report.files).toHaveLength(dropped);
        return proxy.take();
      };

      const few = await roundTripsWith(4);
      const many = await roundTripsWith(12);
      const eachFile = (many - few) / 12;
      console.log(`a pass: ${few} round trips with 4 open files, ${many} with 16`);
      expect(eachFile, `${few} round trips with 4 open files, ${many} with 16`).toBeLessThanOrEqual(
        4,
      );
    }, 120_000);
  },
);
