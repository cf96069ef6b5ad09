import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
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

    /** A home the hosts share, its journal the database at `journal`, and their environment. */
    const hostsHome = (journal: string, settings: Record<string, string> = {}) =>
      sandboxHome(folder(), sandbox.url, {
        PAYOUTS_JOURNAL: journal,
        PAYOUTS_LOG_LEVEL: 'info',
        PAYOUTS_INBOX_SETTLE: '300ms',
        PAYOUTS_INBOX_RESCAN: '300ms',
        ...QUICK_TIMEOUTS,
        ...settings,
      });

    /** Waits (bounded) until `condition` holds. */
    const waitFor = async (what: string, condition: () => boolean, ms = 90_000) => {
      const until = Date.now() + ms;
      while (!condition()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await delay(100);
      }
    };

    it('a host killed mid-batch: the host working beside it takes its claims over and finishes, each row once', async () => {
      const { home, env } = hostsHome(await postgres.made('hosts'));
      const first = startHost(env, 'pay-1');
      await waitFor('pay-1 working', () => first.log().includes('"msg"'));
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 working', () => second.log().includes('"msg"'));

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 200));
      await waitFor('some payouts sent by pay-1', () => sandbox.ledger().length > 20);
      await stopChild(first.child, 'SIGKILL');
      const sentByFirst = sandbox.ledger().length;
      expect(sentByFirst).toBeLessThan(200);

      // pay-2 takes pay-1's file or batch once pay-1's heartbeat is stale, and its rows
      // once their leases ended.
      await waitFor('folha.csv archived by pay-2', () =>
        existsSync(join(home, 'archive', dated('folha.csv'))),
      );
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(200);
      expect(await stopChild(second.child)).toBe(0);
    });

    /** The hosts that claimed rows to send, from the journal's audit of each claim. */
    const sendingHosts = async (url: string): Promise<string[]> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ host: string }>(
          // Some reasons are a caller's English, not JSON: only the claims' are cast.
          `SELECT DISTINCT split_part(claimed::json->>'owner', ':', 1) AS host
           FROM (SELECT reason AS claimed FROM audit WHERE reason LIKE '{"code":"auditClaimed"%') c
           ORDER BY host`,
        );
        return rows.map((row) => row.host);
      } finally {
        await client.end();
      }
    };

    it('two hosts work at once: both send rows of two files, each row paid once, each result written once', async () => {
      const journal = await postgres.made('together');
      const { home, env } = hostsHome(journal, { PAYOUTS_CONCURRENCY: '4' });
      // Sending outlasts reading both files: each host has rows left to send once it is free.
      sandbox.setFaults({ latencyMs: 150 });
      const hosts = [startHost(env, 'pay-1'), startHost(env, 'pay-2')];
      await waitFor('both hosts started', () =>
        hosts.every((host) => host.log().includes('"msg"')),
      );
      const files = { 'folha-a.csv': 'a', 'folha-b.csv': 'b' };
      for (const [name, prefix] of Object.entries(files)) {
        writeFileSync(join(home, 'inbox', name), payrollFile(prefix, 200));
      }
      // Bounded far above its time alone (about 30 s): the machine may be busy.
      await waitFor(
        'both files archived',
        () => Object.keys(files).every((name) => existsSync(join(home, 'archive', dated(name)))),
        180_000,
      );

      expect(await sendingHosts(journal)).toEqual(['pay-1', 'pay-2']);
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(400);
      const results = readdirSync(join(home, 'results')).filter((name) =>
        name.endsWith('.result.csv'),
      );
      expect(results.sort()).toEqual(Object.keys(files).map((name) => dated(name, 'result')));
      for (const result of results) {
        // A heading, then one line per line of the file read.
        expect(
          readFileSync(join(home, 'results', result), 'utf8')
            .trimEnd()
            .split('\n'),
        ).toHaveLength(201);
      }
      expect(readdirSync(join(home, 'processing'))).toEqual([]);
      for (const host of hosts) expect(await stopChild(host.child)).toBe(0);
    }, 240_000);

    it('a host dies reading a file: the other leaves it while the claim lives, then reads it on, each row once', async () => {
      const { home, env } = hostsHome(await postgres.made('reader'));
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('r', 1500));
      // Frozen as its first chunk of rows is about to be written: the file claimed, in processing/.
      const first = startHost({ ...env, PAYOUTS_FAILPOINT: 'admitting-chunk:1:stop' }, 'pay-1');
      await waitFor('pay-1 frozen reading folha.csv', () =>
        first.log().includes('failpoint admitting-chunk: stopped'),
      );
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 leaving folha.csv to pay-1', () =>
        second.log().includes('the host pay-1 is taking it in'),
      );
      expect(second.log()).not.toMatch(/reading cut short/);
      await stopChild(first.child, 'SIGKILL');

      // Once pay-1's lock is stale (30 s after its last heartbeat), pay-2 reads the file on.
      await waitFor(
        'folha.csv archived by pay-2',
        () => existsSync(join(home, 'archive', dated('folha.csv'))),
        180_000,
      );
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(1500);
      const result = readFileSync(join(home, 'results', dated('folha.csv', 'result')), 'utf8');
      expect(result.trimEnd().split('\n')).toHaveLength(1501);
      expect(await stopChild(second.child)).toBe(0);
    }, 240_000);
  },
);
