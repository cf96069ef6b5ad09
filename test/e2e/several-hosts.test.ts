import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, stopChild } from '../support/cli.js';
import { dated, useTempFolder } from '../support/files.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `several hosts on one home and one journal on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const folder = useTempFolder();
    const postgres = usePostgres();
    let sandbox: Sandbox;
    const daemons: ChildProcess[] = [];

    beforeEach(async () => {
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 200, faults: { latencyMs: 30 } });
    });
    afterEach(async () => {
      await Promise.all(daemons.splice(0).map((child) => stopChild(child, 'SIGKILL')));
      await sandbox.close();
    });

    /** `payouts watch` as the host `hostName`, its log gathered. */
    const startHost = (env: Record<string, string>, hostName: string) => {
      const child = spawn(process.execPath, [BIN, 'watch'], {
        env: cleanEnv({ ...env, PAYOUTS_HOST_NAME: hostName }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
      daemons.push(child);
      return { child, log: () => log };
    };

    /** Waits (bounded) until `condition` holds. */
    const waitFor = async (what: string, condition: () => boolean, ms = 90_000) => {
      const until = Date.now() + ms;
      while (!condition()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await delay(100);
      }
    };

    it('a host killed mid-batch: the host waiting beside it takes the home over and finishes, each row once', async () => {
      const { home, env } = sandboxHome(folder(), sandbox.url, {
        PAYOUTS_JOURNAL: await postgres.made('hosts'),
        PAYOUTS_LOG_LEVEL: 'info',
        PAYOUTS_INBOX_SETTLE: '300ms',
        PAYOUTS_INBOX_RESCAN: '300ms',
        ...QUICK_TIMEOUTS,
      });
      const first = startHost(env, 'pay-1');
      await waitFor('pay-1 working', () => first.log().includes('"msg"'));
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 waiting for pay-1', () =>
        /is working on this home folder: waiting for it/.test(second.log()),
      );
      expect(second.log()).toContain('on pay-1');

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 200));
      await waitFor('some payouts sent by pay-1', () => sandbox.ledger().length > 20);
      await stopChild(first.child, 'SIGKILL');
      const sentByFirst = sandbox.ledger().length;
      expect(sentByFirst).toBeLessThan(200);

      // pay-2 takes over once pay-1's heartbeat is stale, and its claims' leases ended.
      await waitFor('folha.csv archived by pay-2', () =>
        existsSync(join(home, 'archive', dated('folha.csv'))),
      );
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(200);
      expect(await stopChild(second.child)).toBe(0);
      // Node prints it once per process: a query sent on a connection still busy with another.
      for (const host of [first, second]) expect(host.log()).not.toContain('DeprecationWarning');
    });
  },
);
