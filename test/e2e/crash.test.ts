import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { QUICK_TIMEOUTS } from '../support/home.js';
import { JOURNAL_STORES, countsOf, payoutsOf } from '../support/journal-stores.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';

const ROWS = 2000;

describe.each(JOURNAL_STORES)(
  'crashes and concurrent runs, the journal in %s: every valid row exactly once at the gateway',
  { timeout: 120_000 },
  (_, store) => {
    const folder = useTempFolder();
    let sandbox: Sandbox;
    let home: string;
    let env: Record<string, string>;

    beforeEach(async () => {
      sandbox = await startSandbox({
        token: TOKEN,
        settleDelayMs: 3_600_000,
        // Slow enough that the kills land while requests are in flight, before the batch is done.
        faults: { latencyMs: 10 },
      });
      ({ home, env } = store.home(folder(), sandbox.url, {
        // About sending: payouts are left pending, not followed.
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        // Files are written just before each run: taken at once.
        PAYOUTS_INBOX_SETTLE: '1ms',
        ...QUICK_TIMEOUTS,
      }));
    });
    afterEach(() => sandbox.close());

    /** How many rows of the journal are in `states`; none while it is not yet made. */
    const rowsIn = async (...states: ('queued' | 'sending' | 'unknown')[]) => {
      const counts = (await store.read(home, countsOf)) ?? {};
      return states.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    };

    /** Rows the journal has not finished sending. */
    const unfinished = () => rowsIn('queued', 'sending', 'unknown');

    /** Reruns until nothing is left to send (bounded), waiting out leases and grace periods. */
    const runToCompletion = async () => {
      for (let attempt = 0; attempt < 12; attempt++) {
        const result = await runCli(['run'], { env });
        expect([2, 3], result.stderr).toContain(result.code);
        if ((await unfinished()) === 0) return;
        await delay(2500);
      }
      throw new Error(`rows still unfinished: ${await unfinished()}`);
    };

    const expectEachOnce = () => {
      const counts = ledgerCounts(sandbox);
      expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(ROWS);
    };

    /** Starts a run and SIGKILLs it once `reached` holds, looked at every 10 ms (bounded). */
    const killWhen = async (what: string, reached: () => boolean | Promise<boolean>) => {
      const child = spawn(process.execPath, [BIN, 'run'], { env: cleanEnv(env), stdio: 'ignore' });
      // Listened for from the spawn: a run that ends before the state must not be waited for forever.
      let ended = false;
      const exited = new Promise((resolve) => child.once('exit', resolve)).then(
        () => (ended = true),
      );
      try {
        // What was seen, not looked at again: a row is `sending` for only a moment.
        let seen = false;
        for (let i = 0; i < 3000 && !ended && !seen; i++) {
          seen = await reached();
          if (!seen) await delay(10);
        }
        expect(seen || !ended, `the run ended before ${what}`).toBe(true);
        expect(seen, what).toBe(true);
      } finally {
        child.kill('SIGKILL');
        await exited;
      }
    };

    it('a run killed with SIGKILL again and again, then rerun, pays each row once and misses none', async () => {
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', ROWS));
      // As the first claim is committed, then while requests are in flight, repeatedly.
      await killWhen('a row sending', async () => (await rowsIn('sending')) > 0);
      for (let kill = 0; kill < 4; kill++) {
        const sent = sandbox.ledger().length;
        await killWhen(`50 more created than ${sent}`, () => sandbox.ledger().length >= sent + 50);
      }
      expect(sandbox.ledger().length).toBeLessThan(ROWS); // the kills did land mid-batch
      await runToCompletion();
      expectEachOnce();
    });

    /** Runs until the failpoint kills it; fails the test if the run ends any other way. */
    const crashAt = async (failpoint: string) => {
      const child = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...env, PAYOUTS_FAILPOINT: failpoint }),
        stdio: 'ignore',
      });
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        child.once('exit', (...end) => resolve(end)),
      );
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
    };

    /** The journal's state of each orderId. */
    const journaled = async () =>
      new Map(
        ((await store.read(home, payoutsOf)) ?? []).map((payout) => [payout.orderId, payout.state]),
      );

    it('killed right after a `sending` commit, before the requests leave: resent after lookups, once', async () => {
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', ROWS));
      await crashAt('after-sending-commit:3');
      const atGateway = ledgerCounts(sandbox);
      const sendingUnsent = [...(await journaled())].filter(
        ([orderId, state]) => state === 'sending' && !atGateway.has(orderId),
      );
      expect(sendingUnsent.length).toBeGreaterThan(0);
      await runToCompletion();
      expectEachOnce();
    });

    it('killed after the gateway answered, before the answers are journaled: adopted by lookup, once', async () => {
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', ROWS));
      await crashAt('before-answer-commit:2');
      const atGateway = ledgerCounts(sandbox);
      const paidButSending = [...(await journaled())].filter(
        ([orderId, state]) => state === 'sending' && atGateway.has(orderId),
      );
      expect(paidButSending.length).toBeGreaterThan(0);
      await runToCompletion();
      expectEachOnce();
    });

    it('killed between two files, the first journaled and the second not yet read: both paid, once', async () => {
      const half = payrollFile('c', ROWS).split('\n');
      const header = half[0] as string;
      const rows = half.slice(1).filter((line) => line !== '');
      writeFileSync(
        join(home, 'inbox', 'a.csv'),
        [header, ...rows.slice(0, ROWS / 2), ''].join('\n'),
      );
      writeFileSync(join(home, 'inbox', 'b.csv'), [header, ...rows.slice(ROWS / 2), ''].join('\n'));
      await crashAt('between-files:1');
      expect((await journaled()).size).toBe(ROWS / 2);
      expect(sandbox.ledger()).toHaveLength(0);
      await runToCompletion();
      expectEachOnce();
    });

    it('killed right after a re-send is marked, before it leaves: looked up again, sent once', async () => {
      sandbox.setFaults({ serverErrorRate: 1, operations: ['createCashOut'] });
      const rows = 20;
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', rows));
      // Every create fails before it commits: the rows are unknown, then sent again once
      // not found twice after the grace period, and the run dies at the first re-send.
      env = { ...env, PAYOUTS_FOLLOW_TIMEOUT: '30s' };
      await crashAt('after-resend-commit');
      expect(sandbox.ledger()).toHaveLength(0);
      expect([...(await journaled()).values()]).toContain('sending');
      sandbox.setFaults({ serverErrorRate: 0 });
      env = { ...env, PAYOUTS_FOLLOW_TIMEOUT: '0' };
      await runToCompletion();
      const counts = ledgerCounts(sandbox);
      expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(rows);
    });

    it('two runs started at once on one home folder pay each row once', async () => {
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', ROWS));
      const [a, b] = await Promise.all([runCli(['run'], { env }), runCli(['run'], { env })]);
      expect([a.code, b.code].sort(), a.stderr + b.stderr).toEqual([3, 3]);
      await runToCompletion();
      expectEachOnce();
    });

    it('SIGTERM mid-batch: nothing new is sent, what was in flight is journaled, and the next run finishes', async () => {
      sandbox.setFaults({ latencyMs: 40 });
      writeFileSync(join(home, 'inbox', 'payroll.csv'), payrollFile('c', ROWS));
      const child = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv(env),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // The state, not a time: the run is sending (a fixed delay lost the race on a busy
      // machine, signalling a process that had not yet listened for it).
      for (let i = 0; i < 1500 && sandbox.ledger().length < 50; i++) await delay(10);
      expect(sandbox.ledger().length).toBeGreaterThanOrEqual(50);
      child.kill('SIGTERM');
      expect(await exited).toBe(3);
      expect(stderr).toContain(
        'SIGTERM: no new payouts will be sent; waiting for the ones in flight',
      );
      const states = (await store.read(home, countsOf)) ?? {};
      expect(states['sending']).toBeUndefined();
      expect(states['pending']).toBe(sandbox.ledger().length);
      expect(states['queued']).toBeGreaterThan(0);
      await runToCompletion();
      expectEachOnce();
    });
  },
);
