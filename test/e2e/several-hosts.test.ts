import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFailed } from 'vitest';
import { stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `several hosts on one home and one journal on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const hosts = useHostsOfOneHome();
    const startHost = hosts.start;

    it('a host killed mid-batch: the host working beside it takes its claims over and finishes, each row once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('hosts');
      const first = startHost(env, 'pay-1');
      await waitFor('pay-1 working', () => first.log().includes('"msg"'));
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 working', () => second.log().includes('"msg"'));

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 200));
      await waitFor('some payouts sent', () => sandbox.ledger().length > 20);
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
      // Node prints it once per process: a query sent on a connection still busy with another.
      for (const host of [first, second]) expect(host.log()).not.toContain('DeprecationWarning');
    });

    /** The rows `sql` reads from the journal's database at `url`. */
    const rowsOf = async <T extends object>(url: string, sql: string): Promise<T[]> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<T>(sql)).rows;
      } finally {
        await client.end();
      }
    };

    /** The hosts that claimed rows to send, from the journal's audit of each claim. */
    const sendingHosts = async (url: string): Promise<string[]> =>
      (
        await rowsOf<{ host: string }>(
          url,
          // Some reasons are a caller's English, not JSON: only the claims' are cast.
          `SELECT DISTINCT split_part(claimed::json->>'owner', ':', 1) AS host
           FROM (SELECT reason AS claimed FROM audit WHERE reason LIKE '{"code":"auditClaimed"%') c
           ORDER BY host`,
        )
      ).map((row) => row.host);

    /** Each file or batch claimed, and by which host. */
    const claimsOf = (url: string) =>
      rowsOf<{ kind: string; host: string }>(
        url,
        `SELECT split_part(key, ':', 1) AS kind, host FROM work_claims ORDER BY key`,
      );

    it('three hosts work at once: each sends rows of two files, each row paid once, each file moved once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('together', { PAYOUTS_CONCURRENCY: '4' });
      const journal = env.PAYOUTS_JOURNAL ?? '';
      // Sending outlasts reading both files: each host has rows left to send once it is free.
      sandbox.setFaults({ latencyMs: 150 });
      const names = ['pay-1', 'pay-2', 'pay-3'];
      const all = names.map((name) => startHost(env, name));
      // Why a host sent nothing, or a file stayed, is in the hosts' own words.
      onTestFailed(() => {
        for (const [i, host] of all.entries()) {
          console.log(
            `--- ${names[i]}: stderr\n${host.log()}--- ${names[i]}: stdout\n${host.printed()}`,
          );
        }
      });
      await waitFor('every host started', () => all.every((host) => host.log().includes('"msg"')));
      const files = { 'folha-a.csv': 'a', 'folha-b.csv': 'b' };
      for (const [name, prefix] of Object.entries(files)) {
        writeFileSync(join(home, 'inbox', name), payrollFile(prefix, 300));
      }
      // Bounded far above its time alone (about 30 s): the machine may be busy.
      await waitFor(
        'both files archived',
        () => Object.keys(files).every((name) => existsSync(join(home, 'archive', dated(name)))),
        180_000,
      );

      expect(await sendingHosts(journal)).toEqual(names);
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(600);
      // Each file moved once, to archive/, and one result for each.
      const archived = Object.keys(files).map((name) => dated(name));
      expect(readdirSync(join(home, 'archive')).sort()).toEqual(archived);
      for (const folder of ['inbox', 'processing', 'rejected']) {
        expect(readdirSync(join(home, folder)).filter((name) => name.endsWith('.csv'))).toEqual([]);
      }
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
        ).toHaveLength(301);
      }
      for (const host of all) expect(await stopChild(host.child)).toBe(0);
    }, 240_000);

    it('a host idle while another reads a file sends its rows once it is read, not at its next rescan', async () => {
      const sandbox = hosts.sandbox();
      // No rescan within the test: only being told can bring pay-2 to the rows.
      const { home, env } = await hosts.home('told', {
        PAYOUTS_CONCURRENCY: '4',
        PAYOUTS_INBOX_RESCAN: '10m',
      });
      sandbox.setFaults({ latencyMs: 150 });
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('t', 300));
      // Frozen as its first chunk of rows is about to be written: the file claimed, in processing/.
      const first = startHost({ ...env, PAYOUTS_FAILPOINT: 'admitting-chunk:1:stop' }, 'pay-1');
      await waitFor('pay-1 frozen reading folha.csv', () =>
        first.log().includes('failpoint admitting-chunk: stopped'),
      );
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 leaving folha.csv to pay-1', () =>
        second.log().includes('the host pay-1 is taking it in'),
      );
      first.child.kill('SIGCONT');
      await waitFor(
        'folha.csv archived',
        () => existsSync(join(home, 'archive', dated('folha.csv'))),
        180_000,
      );
      expect(await sendingHosts(env.PAYOUTS_JOURNAL ?? '')).toEqual(['pay-1', 'pay-2']);
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(300);
      for (const host of [first, second]) expect(await stopChild(host.child)).toBe(0);
    }, 240_000);

    it('a host dies reading a file: the other leaves it while the claim lives, then reads it on, each row once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('reader');
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

    it('a host killed finishing a batch: the other leaves it while the claim lives, then archives it once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('finisher');
      const journal = env.PAYOUTS_JOURNAL ?? '';
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('f', 50));
      // pay-1 alone pays the file and freezes about to archive it, the batch claimed.
      const first = startHost({ ...env, PAYOUTS_FAILPOINT: 'archiving-file:1:stop' }, 'pay-1');
      await waitFor('pay-1 frozen finishing folha.csv', () =>
        first.log().includes('failpoint archiving-file: stopped'),
      );
      expect(await claimsOf(journal)).toEqual([{ kind: 'batch', host: 'pay-1' }]);
      const second = startHost(env, 'pay-2');
      await waitFor('pay-2 saying folha.csv paid', () =>
        second.log().includes('folha.csv: resumed; 50 paid'),
      );
      expect(second.log()).not.toContain('archived');
      expect(existsSync(join(home, 'processing', 'folha.csv'))).toBe(true);
      await stopChild(first.child, 'SIGKILL');

      // Once pay-1's lock is stale (30 s after its last heartbeat), pay-2 archives the file.
      await waitFor(
        'folha.csv archived by pay-2',
        () => existsSync(join(home, 'archive', dated('folha.csv'))),
        180_000,
      );
      expect(readdirSync(join(home, 'archive'))).toEqual([dated('folha.csv')]);
      expect(readdirSync(join(home, 'processing'))).toEqual([]);
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(50);
      const result = readFileSync(join(home, 'results', dated('folha.csv', 'result')), 'utf8');
      expect(result.trimEnd().split('\n')).toHaveLength(51);
      // The claim is given back once the file is archived, a moment after the rename.
      await waitFor(
        'pay-2 giving its claim back',
        async () => (await claimsOf(journal)).length === 0,
      );
      expect(await stopChild(second.child)).toBe(0);
    }, 240_000);
  },
);
