/**
 * A daemon's pass looks at every file of processing/ again. On a journal hosts share, a
 * file whose rows did not move since this process last looked costs it a few reads, no
 * batch claim taken and released and no result written again: a host with a hundred
 * files open otherwise spends its passes on them, and its following (a round of
 * `inboxRescan` a pass) falls ever further behind; other files arriving beside it change
 * nothing of it. But a file whose summary could change (its rows, its overdue alert, a
 * file of its name or a copy of it, a payout its held rows repeat) is made again.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ensureFolders, homeFolders } from '../../src/inbox/folders.js';
import { lockHome } from '../../src/inbox/lock.js';
import { newPassMemory, runPass, type PassReport } from '../../src/app/pass.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { TOKEN, clientFor } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { PAYROLL_HEADER, payrollFile, payrollRows } from '../support/payroll.js';
import { roundTripProxy } from '../support/round-trips.js';
import { setTimeout as delay } from 'node:timers/promises';

/** A file of payrollRows without the orderId column: each row's orderId derived from it. */
const withoutIds = (rows: readonly string[]) =>
  [PAYROLL_HEADER.replace('orderId,', ''), ...rows.map((row) => row.replace(/^[^,]*,/, ''))]
    .map((line) => `${line}\n`)
    .join('');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a daemon's pass over open files on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();

    /**
     * A daemon's home on PostgreSQL behind a proxy counting round trips: its pass, taking
     * each `folha-N.csv` written in the inbox, with a memory kept between passes.
     */
    const daemonHome = async (
      name: string,
      options: { settleDelayMs?: number; env?: Record<string, string> } = {},
    ) => {
      const folder = mkdtempSync(join(tmpdir(), 'payouts-open-files-'));
      // Payouts stay pending at the gateway: no row of an open file moves between passes.
      const sandbox = await startSandbox({
        token: TOKEN,
        settleDelayMs: options.settleDelayMs ?? 3_600_000,
      });
      const proxy = await roundTripProxy(await postgres.made(name));
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
        env: {
          PAYOUTS_HOME: folders.home,
          PAYOUTS_BASE_URL: sandbox.url,
          PAYOUTS_TOKEN: TOKEN,
          ...options.env,
        },
      }).config;
      const memory = newPassMemory();
      /** A pass: by default no lookups of unclear rows (there are none) and no following. */
      const pass = async (
        given: { followMs?: number; clock?: Clock; pollEveryMs?: number } = {},
      ) => {
        memory.resolvedAt = Date.now();
        const pollEveryMs = given.pollEveryMs ?? 3_600_000;
        return runPass(journal, gateway, folders, config, {
          followMs: given.followMs ?? 0,
          signal: stop.signal,
          pollPolicy: { firstMs: pollEveryMs, growth: 1, capMs: pollEveryMs },
          isReady: () => true,
          note: () => undefined,
          clock: given.clock ?? systemClock,
          memory,
          ...(lock.claims ? { claims: lock.claims } : {}),
        });
      };
      const drop = (file: string, text: string) => writeFileSync(join(folders.inbox, file), text);
      return { folders, sandbox, journal, proxy, pass, drop };
    };

    it('costs a few round trips for each file whose rows did not move, while other files arrive', async () => {
      const { proxy, pass, drop } = await daemonHome('open_files');
      let dropped = 0;
      /** `files` more files, taken in and sent, then the round trips of a pass after. */
      const roundTripsWith = async (files: number) => {
        for (let i = 0; i < files; i++, dropped++) {
          drop(`folha-${dropped}.csv`, payrollFile(`f${dropped}`, 3));
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
      /** The round trips of a pass that takes in and sends one more file beside the open ones. */
      const arriving = async () => {
        drop(`folha-${dropped}.csv`, payrollFile(`f${dropped}`, 3));
        dropped++;
        proxy.take();
        const report = await pass();
        expect(report.files.map((file) => file.rows)).toEqual(
          Array.from({ length: dropped }, () => ({ pending: 3 })),
        );
        return proxy.take();
      };

      const few = await roundTripsWith(4);
      const fewArriving = await arriving();
      const many = await roundTripsWith(12);
      const manyArriving = await arriving();
      const figures = `a pass: ${few} round trips with 4 open files, ${many} with 17; taking one more in: ${fewArriving} beside 4, ${manyArriving} beside 17`;
      console.log(figures);
      expect((many - few) / 13, figures).toBeLessThanOrEqual(4);
      // Sending the arrival's rows varies by a few round trips (answers written in one group
      // or more): a file missing its cache costs 26, one kept 4.
      expect((manyArriving - fewArriving) / 13, figures).toBeLessThanOrEqual(6);
    }, 120_000);

    // Money first: a file whose summary could change is never served from memory.
    it('makes a file again once its rows move', async () => {
      const { sandbox, pass, drop } = await daemonHome('rows_move', { settleDelayMs: 20 });
      sandbox.settleAs('pending');
      drop('folha-0.csv', payrollFile('f0', 3));
      // Polled 20 ms after each send, once a pass follows.
      const quickPolls = { pollEveryMs: 20 };
      await pass(quickPolls);
      await pass(quickPolls);
      expect((await pass(quickPolls)).files.map((file) => file.rows)).toEqual([{ pending: 3 }]);
      sandbox.settleAs('by-key');
      for (
        let i = 0;
        i < 1_500 && sandbox.ledger().some((entry) => entry.status === 'pending');
        i++
      )
        await delay(20);
      expect(sandbox.ledger().map((entry) => entry.status)).toEqual(['paid', 'paid', 'paid']);
      const followed = await pass({ followMs: 60_000, pollEveryMs: 20 });
      expect(followed.files.map(({ rows, state }) => ({ rows, state }))).toEqual([
        { rows: { paid: 3 }, state: 'archived' },
      ]);
    }, 120_000);

    it('makes a file again once a corrected copy of it arrives', async () => {
      const { pass, drop } = await daemonHome('corrected');
      // No orderId column: the copy's rows take the orderIds of the rows they repeat.
      const rows = payrollRows('f0', 3);
      // Its second row's CPF cannot be read: invalid, until the copy fixes it.
      drop(
        'folha.csv',
        withoutIds(rows.map((row, i) => (i === 1 ? row.replace(/,\d{11},/, ',123,') : row))),
      );
      await pass();
      await pass();
      expect((await pass()).files.map((file) => file.rows)).toEqual([{ pending: 2, invalid: 1 }]);
      drop('folha.csv', withoutIds(rows));
      const corrected = await pass();
      expect(corrected.files.map(({ file, rows }) => ({ file, rows }))).toEqual([
        { file: 'folha [2].csv', rows: { covered: 2, pending: 1 } },
        { file: 'folha.csv', rows: { pending: 2, superseded: 1 } },
      ]);
    }, 120_000);

    it('makes a file again once its rows are pending longer than pendingAlertAfter', async () => {
      const { pass, drop } = await daemonHome('overdue', {
        env: { PAYOUTS_PENDING_ALERT_AFTER: '1h' },
      });
      drop('folha-0.csv', payrollFile('f0', 3));
      await pass();
      await pass();
      const before = await pass();
      expect(before.files.map((file) => file.pendingTooLong)).toEqual([undefined]);
      const later = { ...systemClock, now: () => Date.now() + 2 * 3_600_000 };
      const overdue = await pass({ clock: later });
      expect(overdue.files.map((file) => file.pendingTooLong?.rows)).toEqual([3]);
      expect(overdue.files[0]?.problems).toContainEqual(
        expect.objectContaining({ code: 'pendingTooLong' }),
      );
    }, 120_000);

    it('makes a file again once a payout its held row repeats moves, in a file that stays open', async () => {
      const { pass, drop } = await daemonHome('repeats', { settleDelayMs: 20 });
      const quickPolls = { pollEveryMs: 20 };
      const [first, second] = payrollRows('x', 2);
      if (first === undefined || second === undefined) throw new Error('no rows');
      // Its second row twice: one held as a repeat within the file, so it stays open.
      drop('outra.csv', withoutIds([first, second, second]));
      await pass(quickPolls);
      // The same person and amount in a file of another name: held, naming that payout.
      drop('folha.csv', withoutIds([first]));
      await pass(quickPolls);
      await pass(quickPolls);
      const heldSays = (report: PassReport) =>
        report.files
          .find((file) => file.file === 'folha.csv')
          ?.problems.flatMap((said) =>
            said.code === 'heldRowAt' && 'state' in said.why ? [said.why.state] : [],
          );
      const before = await pass(quickPolls);
      expect(before.files.map(({ file, rows }) => ({ file, rows }))).toEqual([
        { file: 'folha.csv', rows: { held: 1 } },
        { file: 'outra.csv', rows: { pending: 2, held: 1 } },
      ]);
      expect(heldSays(before)).toEqual(['pending']);
      const followed = await pass({ ...quickPolls, followMs: 60_000 });
      expect(followed.files.map(({ file, rows, state }) => ({ file, rows, state }))).toEqual([
        { file: 'folha.csv', rows: { held: 1 }, state: 'resumed' },
        { file: 'outra.csv', rows: { paid: 2, held: 1 }, state: 'resumed' },
      ]);
      expect(heldSays(followed)).toEqual(['paid']);
    }, 120_000);

    it('makes a file again once another file of its name arrives', async () => {
      const { pass, drop } = await daemonHome('same_name');
      const [first] = payrollRows('x', 1);
      if (first === undefined) throw new Error('no rows');
      drop('outra.csv', withoutIds([first]));
      await pass();
      // Held as a repeat of outra.csv's payout: its summary says how to pay it anyway.
      drop('folha.csv', withoutIds([first]));
      await pass();
      await pass();
      const answerFlags = (report: PassReport) =>
        report.files
          .find((file) => file.file === 'folha.csv')
          ?.problems.flatMap((said) => (said.code === 'readingNewBatch' ? [said.hintFlags] : []));
      const before = await pass();
      expect(answerFlags(before)).toEqual(['']);
      const batchId = before.files.find((file) => file.file === 'folha.csv')?.batchId;
      // Other people under its name: a batch beside it, so its answer must name its batch.
      drop('folha.csv', withoutIds(payrollRows('z', 1)));
      const beside = await pass();
      expect(beside.files.map(({ file, rows }) => ({ file, rows }))).toEqual([
        { file: 'folha [2].csv', rows: { pending: 1 } },
        { file: 'folha.csv', rows: { held: 1 } },
        { file: 'outra.csv', rows: { pending: 1 } },
      ]);
      expect(answerFlags(beside)).toEqual([` --batch ${batchId}`]);
    }, 120_000);
  },
);
