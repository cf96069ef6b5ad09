import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli, stopChild } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { QUICK_TIMEOUTS } from '../support/home.js';
import { JOURNAL_STORES, countsOf, payoutsOf } from '../support/journal-stores.js';
import { payrollFile } from '../support/payroll.js';
import { waitForStopped } from '../support/wait.js';
import { sayInEnglish } from '../../src/messages/say.js';

const ROWS = 16;

describe.each(JOURNAL_STORES)(
  'a run frozen between its claim and its requests (SIGSTOP, a VM pause), the journal in %s: every row once',
  // The home lock of a frozen run goes stale after 30 s of the real clock.
  { timeout: 120_000 },
  (_, store) => {
    const folder = useTempFolder();
    let sandbox: Sandbox;
    let home: string;
    let env: Record<string, string>;
    let frozen: ChildProcess | undefined;

    beforeEach(async () => {
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
      // QUICK_TIMEOUTS: a claim's lease is 5 s.
      ({ home, env } = store.home(folder(), sandbox.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
        ...QUICK_TIMEOUTS,
      }));
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('f', ROWS));
    });
    afterEach(async () => {
      // A test that failed early leaves its child frozen: SIGKILL ends a stopped process too.
      if (frozen) await stopChild(frozen, 'SIGKILL');
      frozen = undefined;
      await sandbox.close();
    });

    /** How many rows of the journal are in `states`. */
    const rowsIn = async (...states: ('queued' | 'sending' | 'unknown')[]) => {
      const counts = (await store.read(home, countsOf)) ?? {};
      return states.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    };

    /** Rows `sending` whose lease has not run out. */
    const leasedSending = async () =>
      ((await store.read(home, payoutsOf)) ?? []).filter(
        (payout) => payout.state === 'sending' && (payout.leaseUntil ?? 0) > Date.now(),
      ).length;

    /**
     * A run that freezes itself the first time it reaches `point`, the gateway having made
     * `paid` payouts by then; its exit, later.
     */
    const freezeAt = async (
      point: 'after-sending-commit' | 'after-resend-commit' | 'before-answer-commit',
      runEnv = env,
      paid = 0,
    ): Promise<{
      child: ChildProcess;
      exited: Promise<number | null>;
      /** What it printed: its summary, as `--json` says it. */
      stdout: () => string;
      /** The lines it said of rows it did not send because it was paused. */
      pausedLines: () => string[];
    }> => {
      const child = spawn(process.execPath, [BIN, 'run', '--json'], {
        env: cleanEnv({ ...runEnv, PAYOUTS_FAILPOINT: `${point}:1:stop` }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      frozen = child;
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      for (let i = 0; i < 2000 && !stderr.includes('stopped (SIGSTOP)'); i++) await delay(10);
      expect(stderr).toContain(`failpoint ${point}: stopped (SIGSTOP)`);
      await waitForStopped(child.pid!);
      expect(sandbox.ledger()).toHaveLength(paid);
      const pausedLines = () =>
        stderr.split('\n').filter((line) => /^payout \S+ not sent/.test(line));
      return { child, exited, stdout: () => stdout, pausedLines };
    };

    /** Another run takes the frozen one's rows over, then reruns until each row is sent. */
    const takeOver = async () => {
      // It waits for the frozen run's lock to go stale, then looks the rows up (not found)
      // and sends them once not found twice after the grace period: reruns that wait for
      // that grace on the real clock.
      const takeover = await runCli(['run', '--wait', '90s'], { env });
      expect([2, 3], takeover.stderr).toContain(takeover.code);
      for (let rerun = 0; rerun < 12 && sandbox.ledger().length < ROWS; rerun++) {
        await delay(2500);
        const result = await runCli(['run'], { env });
        expect([2, 3], result.stderr).toContain(result.code);
      }
      expectEachOnce();
    };

    /** Rows whose claim was given back unsent, by their history. */
    const givenBack = async () =>
      (await store.read(home, async (journal) => {
        let rows = 0;
        for (const { orderId } of await payoutsOf(journal)) {
          const history = await journal.history(orderId);
          if (history.some((entry) => sayInEnglish(entry.reason).startsWith('not sent: its claim')))
            rows += 1;
        }
        return rows;
      })) ?? 0;

    const expectEachOnce = () => {
      const counts = ledgerCounts(sandbox);
      expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(ROWS);
    };

    it('frozen past its lease and lock, its rows taken over and sent by another run: on waking it sends none of them', async () => {
      const { child, exited, pausedLines } = await freezeAt('after-sending-commit');
      expect(await rowsIn('sending')).toBe(ROWS);
      await takeOver();
      child.kill('SIGCONT');
      await exited;
      frozen = undefined;
      expectEachOnce();
      expect(pausedLines().length).toBeGreaterThan(0);
      expect(pausedLines().filter((line) => !line.includes('another run had taken it'))).toEqual(
        [],
      );
    });

    it('frozen past its lease with no other run: on waking it gives its rows back and sends each once', async () => {
      const { child, exited, pausedLines } = await freezeAt('after-sending-commit');
      expect(await rowsIn('sending')).toBe(ROWS);
      // The lease running out is a wait on the real clock, looked at in the journal.
      for (let i = 0; i < 1000 && (await leasedSending()) > 0; i++) await delay(10);
      expect(await leasedSending()).toBe(0);
      child.kill('SIGCONT');
      expect(await exited).toBe(3);
      frozen = undefined;
      expectEachOnce();
      expect(await rowsIn('queued', 'sending', 'unknown')).toBe(0);
      expect(await givenBack()).toBe(ROWS);
      // One line a row, saying so.
      expect(pausedLines()).toHaveLength(ROWS);
      expect(pausedLines()[0]).toMatch(
        /^payout f-\d+ not sent: its claim was \d+ s old when its request was to leave/,
      );
      expect(pausedLines().filter((line) => !line.includes('given back unsent'))).toEqual([]);
    });

    it('frozen once its first payout is in the ledger, before it is journaled, the next row claimed: once woken it pays nobody twice', async () => {
      // One request at a time: beside the one answered, the next row is claimed ahead.
      const { child, exited, stdout } = await freezeAt(
        'before-answer-commit',
        { ...env, PAYOUTS_CONCURRENCY: '1' },
        1,
      );
      await takeOver();
      child.kill('SIGCONT');
      const code = await exited;
      frozen = undefined;
      expectEachOnce();
      // Woken, its summary counts what the journal holds: each row once, every one pending.
      expect(code).toBe(3);
      const summary = JSON.parse(stdout()) as { files: { rows: Record<string, number> }[] };
      expect(summary.files).toMatchObject([{ rows: { pending: ROWS } }]);
      expect(await rowsIn('queued', 'sending', 'unknown')).toBe(0);
    });

    it('frozen right after marking a re-send, its row taken over and sent by another run: on waking it does not send it', async () => {
      // Every create fails before it commits: the rows are unknown, then sent again within
      // the run once not found twice after the grace period; it freezes at the first re-send.
      sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
      const { child, exited } = await freezeAt('after-resend-commit', {
        ...env,
        PAYOUTS_FOLLOW_TIMEOUT: '30s',
      });
      // One re-send marked, at least: PostgreSQL commits the marks already on their way to it
      // while the run is frozen, SQLite's are written one by one.
      expect(await rowsIn('sending')).toBeGreaterThanOrEqual(1);
      sandbox.setFaults({ serverErrorRate: 0 });
      await takeOver();
      child.kill('SIGCONT');
      await exited;
      frozen = undefined;
      expectEachOnce();
    });
  },
);
