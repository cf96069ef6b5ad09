import { userInfo } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli, stopChild } from '../support/cli.js';
import { useTempFolder, dated } from '../support/files.js';
import { QUICK_TIMEOUTS } from '../support/home.js';
import { JOURNAL_STORES, countsOf } from '../support/journal-stores.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import {
  PAYROLL_HEADER as HEADER,
  payrollFile as payroll,
  payrollRows as payrollLines,
} from '../support/payroll.js';
import { waitFor } from '../support/wait.js';

describe.each(JOURNAL_STORES)(
  'payouts watch (daemon as a child process, real folders, sandbox over HTTP), the journal in %s',
  { timeout: 150_000 },
  (_, store) => {
    const folder = useTempFolder();
    let sandbox: Sandbox;
    let home: string;
    let env: Record<string, string>;
    const daemons: ChildProcess[] = [];

    beforeEach(async () => {
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 200, faults: { latencyMs: 5 } });
      ({ home, env } = store.home(folder(), sandbox.url, {
        PAYOUTS_LOG_LEVEL: 'info',
        PAYOUTS_INBOX_SETTLE: '300ms',
        PAYOUTS_INBOX_RESCAN: '300ms',
        ...QUICK_TIMEOUTS,
      }));
    });
    afterEach(async () => {
      await Promise.all(daemons.splice(0).map((child) => stopChild(child, 'SIGKILL')));
      await sandbox.close();
    });

    const startDaemon = (...args: string[]) => {
      const child = spawn(process.execPath, [BIN, 'watch', ...args], {
        env: cleanEnv(env),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      daemons.push(child);
      return { child, stderr: () => stderr };
    };

    const archived = (name: string) => () => existsSync(join(home, 'archive', name));

    const expectEachOnce = (ids: string[]) => {
      const counts = ledgerCounts(sandbox);
      expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
    };
    const ids = (prefix: string, rows: number) =>
      Array.from({ length: rows }, (_, i) => `${prefix}-${i}`);

    const journalStates = async () => (await store.read(home, countsOf)) ?? {};

    it('a home restored whole from a backup: the daemon sends nothing of a file it forgot, and stops with exit 1', async () => {
      writeFileSync(join(home, 'inbox', 'folha.csv'), payroll('a', 5));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      const backup = join(folder(), 'home-backup');
      store.backupHome(home, backup);
      writeFileSync(join(home, 'inbox', 'fornecedores.csv'), payroll('f', 10));
      const first = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(first.code, first.stderr).toBe(0);
      store.restoreHome(backup, home);

      writeFileSync(join(home, 'inbox', 'fornecedores.csv'), payroll('f', 10));
      const daemon = startDaemon();
      const [code] = (await once(daemon.child, 'exit')) as [number | null];
      expect(code, daemon.stderr()).toBe(1);
      expect(daemon.stderr()).toMatch(/the gateway already has payout f-\d+/);
      expect(daemon.stderr()).toContain('payouts run --recover');
      expectEachOnce([...ids('a', 5), ...ids('f', 10)]);
    });

    it('takes files present at start, and a file copied in slowly only once it is whole', async () => {
      writeFileSync(join(home, 'inbox', 'before.csv'), payroll('b', 5));
      const daemon = startDaemon();
      await waitFor('before.csv archived', archived(dated('before.csv')));

      // Written in pieces, a row at a time, faster than it takes to settle.
      const slow = join(home, 'inbox', 'slow.csv');
      const descriptor = openSync(slow, 'w');
      writeSync(descriptor, `${HEADER}\n`);
      for (const line of payrollLines('s', 20)) {
        writeSync(descriptor, `${line}\n`);
        await delay(100);
      }
      closeSync(descriptor);
      await waitFor('slow.csv archived', archived(dated('slow.csv')));
      expectEachOnce([...ids('b', 5), ...ids('s', 20)]);
      const result = readFileSync(join(home, 'results', dated('slow.csv', 'result')), 'utf8');
      expect(result.trim().split('\r\n')).toHaveLength(21);
      expect(await stopChild(daemon.child)).toBe(0);
    });

    it('the same rows under two names pay once; the copy is held as possible duplicates, for a person', async () => {
      writeFileSync(join(home, 'inbox', 'a.csv'), payroll('d', 10));
      const payees = payroll('d', 10).split('\n').slice(1).join('\n');
      writeFileSync(join(home, 'inbox', 'b.csv'), `${HEADER}\n${payees.replaceAll('d-', 'x-')}`);
      startDaemon();
      await waitFor(
        'one archived, the other held',
        async () =>
          existsSync(join(home, 'archive', dated('a.csv'))) && (await journalStates()).held === 10,
      );
      expectEachOnce(ids('d', 10));
      expect(existsSync(join(home, 'processing', 'b.csv'))).toBe(true);
    });

    it('logs JSON lines with ISO times, a held file at warn level; --quiet keeps only warnings', async () => {
      writeFileSync(join(home, 'inbox', 'a.csv'), payroll('q', 3));
      const payees = payroll('q', 3).split('\n').slice(1).join('\n');
      writeFileSync(join(home, 'inbox', 'b.csv'), `${HEADER}\n${payees.replaceAll('q-', 'y-')}`);
      const lines = (text: string) =>
        text
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; time: string; msg: string });
      const said = (daemon: { stderr: () => string }, file: string, what: RegExp) =>
        lines(daemon.stderr()).find(
          (line) => line.msg.startsWith(`${file}: `) && what.test(line.msg),
        );
      const loud = startDaemon();
      await waitFor(
        'a.csv archived and b.csv held, said',
        () => !!said(loud, 'a.csv', /archived/) && !!said(loud, 'b.csv', / held/),
      );
      expect(await stopChild(loud.child)).toBe(0);
      for (const line of lines(loud.stderr()))
        expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(said(loud, 'a.csv', /archived/)?.level).toBe(30); // info: paid, nothing to do
      expect(said(loud, 'b.csv', / held/)?.level).toBe(40); // warn: held for a person

      // Quiet: the held file is said again at start (it is still held), nothing at info.
      const quiet = startDaemon('--quiet');
      await waitFor('the held file said', () => !!said(quiet, 'b.csv', / held/));
      expect(await stopChild(quiet.child)).toBe(0);
      expect(lines(quiet.stderr()).filter((line) => line.level < 40)).toEqual([]);
    });

    it('SIGTERM mid-batch loses nothing; a file left in processing/ is finished at the next start', async () => {
      sandbox.setFaults({ latencyMs: 30 });
      writeFileSync(join(home, 'inbox', 'big.csv'), payroll('t', 300));
      const first = startDaemon();
      await waitFor('some payouts sent', () => sandbox.ledger().length > 20);
      expect(await stopChild(first.child)).toBe(0);
      expect(first.stderr()).toContain('SIGTERM: taking no new file');
      expect((await journalStates()).sending).toBeUndefined(); // in flight finished and journaled
      expect(sandbox.ledger().length).toBeLessThan(300);
      expect(existsSync(join(home, 'processing', 'big.csv'))).toBe(true);

      sandbox.setFaults({ latencyMs: 5 });
      startDaemon();
      await waitFor('big.csv archived', archived(dated('big.csv')));
      expectEachOnce(ids('t', 300));
    });

    it('a daemon killed with SIGKILL mid-batch: the next start finishes its file, each row once', async () => {
      sandbox.setFaults({ latencyMs: 30 });
      writeFileSync(join(home, 'inbox', 'big.csv'), payroll('k', 300));
      const first = startDaemon();
      await waitFor('some payouts sent', () => sandbox.ledger().length > 20);
      await stopChild(first.child, 'SIGKILL');
      expect(existsSync(join(home, 'processing', 'big.csv'))).toBe(true);

      sandbox.setFaults({ latencyMs: 5 });
      startDaemon();
      await waitFor('big.csv archived', archived(dated('big.csv')));
      expectEachOnce(ids('k', 300));
    });

    it('two daemons on one home folder: one works, the other waits; each row paid once', async () => {
      const one = startDaemon();
      const two = startDaemon();
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('w', 100));
      await waitFor('pay.csv archived', archived(dated('pay.csv')));
      expectEachOnce(ids('w', 100));
      expect(one.stderr() + two.stderr()).toContain(
        'is working on this home folder: waiting for it',
      );

      // A cron run beside the daemon steps back at once, or after --wait; never works beside it.
      // Said even with --quiet, as cron runs it: exit 3 alone does not say who holds it.
      const beside = await runCli(['run', '--quiet'], { env });
      expect(beside.code).toBe(3);
      expect(beside.stderr).toMatch(
        /^payouts run: another payouts process \(the daemon, payouts watch, pid \d+ on .*\) is still working on this home folder: nothing done\. Run again later, or use --wait\.$/m,
      );
      const waited = await runCli(['run', '--wait', '1s'], { env });
      expect(waited.code).toBe(3);
      expect(waited.stderr).toContain('waiting for the daemon, payouts watch, pid');
      expect(waited.stderr).toContain(
        'is still working on this home folder after waiting 1s: nothing done. Run again later, or wait longer with --wait.',
      );

      expect(await stopChild(one.child)).toBe(0);
      expect(await stopChild(two.child)).toBe(0);
    });

    it('approval holds a file until a person releases it; a refused file is never sent', async () => {
      env = { ...env, PAYOUTS_REQUIRE_APPROVAL: 'true' };
      // The runs below take a file written just before them.
      const runEnv = { ...env, PAYOUTS_INBOX_SETTLE: '1ms' };
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('a', 10));
      const daemon = startDaemon();
      const report = join(home, 'awaiting-approval', 'pay.csv.report.txt');
      await waitFor('pay.csv awaiting approval', () => existsSync(report));
      expect(readFileSync(report, 'utf8')).toContain(
        'Once approved, 10 payouts are sent, R$ 10,00 in all.',
      );
      // A pass after it was held, not a time: a file dropped later waits in its turn, and
      // still nothing is sent. Turned down, so that it is not in what follows.
      writeFileSync(join(home, 'inbox', 'later.csv'), payroll('l', 2));
      await waitFor('later.csv awaiting approval', () =>
        existsSync(join(home, 'awaiting-approval', 'later.csv.report.txt')),
      );
      expect(sandbox.ledger()).toHaveLength(0);
      const turnedDown = await runCli(['reject', 'later.csv', '--reason', 'a test'], { env });
      expect(turnedDown.code, turnedDown.stderr).toBe(0);

      const approved = await runCli(['approve', 'pay.csv'], { env });
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain('approved: 10 payouts, R$ 10,00 in all');
      await waitFor('pay.csv archived', archived(dated('pay.csv')));
      expectEachOnce(ids('a', 10));
      expect(existsSync(report)).toBe(false);
      expect(await stopChild(daemon.child)).toBe(0);

      // Without the daemon: a run leaves the file waiting (exit 2), a person turns it down.
      writeFileSync(join(home, 'inbox', 'other.csv'), payroll('o', 3));
      const waiting = await runCli(['run', '--follow-timeout', '0'], { env: runEnv });
      expect(waiting.code).toBe(2);
      expect(waiting.stdout).toContain('other.csv: waiting for approval in awaiting-approval/');
      const wrongName = await runCli(['reject', 'nope.csv', '--reason', 'x'], { env });
      expect(wrongName.code).toBe(1);
      expect(wrongName.stderr).toContain('(waiting: other.csv)');
      const refused = await runCli(
        ['reject', 'other.csv', '--reason', 'wrong month', '--by', 'Maria'],
        { env },
      );
      expect(refused.code, refused.stderr).toBe(0);
      expect((await runCli(['status', 'other.csv'], { env })).stdout).toContain(
        `refused by ${userInfo().username} (--by Maria) at`,
      );
      expect(readFileSync(join(home, 'rejected', 'other.csv.reason.txt'), 'utf8')).toContain(
        'turned down by a person: wrong month',
      );
      const after = await runCli(['run', '--follow-timeout', '0'], { env });
      expect(after.code, after.stdout).toBe(0);
      expect(sandbox.ledger()).toHaveLength(10); // nothing of other.csv
      // Turned down "not today": the same bytes may come back, to be approved again.
      writeFileSync(join(home, 'inbox', 'other.csv'), payroll('o', 3));
      const again = await runCli(['run', '--follow-timeout', '0'], { env: runEnv });
      expect(again.code).toBe(2);
      expect(again.stdout).toContain('other.csv: waiting for approval in awaiting-approval/');
      expect(sandbox.ledger()).toHaveLength(10);
    });

    it('approval by moving the file into approved/; a file dropped straight into approved/ is refused', async () => {
      env = {
        ...env,
        PAYOUTS_REQUIRE_APPROVAL: 'true',
        PAYOUTS_FOLLOW_TIMEOUT: '10s',
        PAYOUTS_INBOX_SETTLE: '1ms',
      };
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('m', 4));
      expect((await runCli(['run'], { env })).code).toBe(2);
      renameSync(join(home, 'awaiting-approval', 'pay.csv'), join(home, 'approved', 'pay.csv'));
      writeFileSync(join(home, 'approved', 'stray.csv'), payroll('x', 2));
      const released = await runCli(['run'], { env });
      expect(released.code, released.stdout + released.stderr).toBe(2); // the stray file
      expect(released.stderr).toContain('pay.csv: approved; it is sent now');
      expect(released.stdout).toContain('stray.csv: moved to rejected/');
      expect(readFileSync(join(home, 'rejected', 'stray.csv.reason.txt'), 'utf8')).toContain(
        'its bytes match no file awaiting approval',
      );
      expect(existsSync(join(home, 'archive', dated('pay.csv')))).toBe(true);
      expectEachOnce(ids('m', 4));
    });

    it('an idle daemon stops at once on SIGTERM, even with a long rescan interval', async () => {
      env = { ...env, PAYOUTS_INBOX_RESCAN: '60s' };
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('i', 2));
      const daemon = startDaemon();
      // Said once the pass is over, as the daemon goes to sleep until the next rescan.
      await waitFor('pay.csv archived, said', () =>
        /"msg":"pay\.csv: [^"]*archived/.test(daemon.stderr()),
      );
      // Exit 0 is a stop on SIGTERM: stopChild's SIGKILL comes 10 s on, far before the rescan.
      expect(await stopChild(daemon.child)).toBe(0);
    });

    it('a refused token stops the daemon with exit 1 and says what to check; nothing is sent', async () => {
      env = { ...env, PAYOUTS_TOKEN: 'not-the-token' };
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('t', 2));
      const daemon = startDaemon();
      const [code] = (await Promise.race([
        once(daemon.child, 'exit'),
        delay(20_000).then(() => ['still running']),
      ])) as [number | string];
      expect(code, daemon.stderr()).toBe(1);
      expect(daemon.stderr()).toMatch(
        /refused our credentials .*Check the token \(PAYOUTS_TOKEN\)/,
      );
      expect(sandbox.ledger()).toEqual([]);
    });
  },
);
