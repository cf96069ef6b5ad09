/**
 * A file moved into approved/ on a home two hosts share (one journal on PostgreSQL): it is
 * released by one host alone, under a claim as an inbox file is taken, while the other
 * leaves it and says which host has it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runCli, stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { waitFor, waitForStopped } from '../support/wait.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a file approved on a home two hosts share${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const hosts = useHostsOfOneHome();
    const children: ChildProcess[] = [];
    afterEach(async () => {
      await Promise.all(children.splice(0).map((child) => stopChild(child, 'SIGKILL')));
    });

    /** The events of every batch named `event`, from the journal's database at `url`. */
    const eventsNamed = async (url: string, event: string): Promise<number> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>(
          'SELECT count(*) AS n FROM batch_events WHERE event = $1',
          [event],
        );
        return Number(rows[0]?.n);
      } finally {
        await client.end();
      }
    };

    it('seen by both hosts at once, it is released by one: the other leaves it, saying which host has it', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('approved', {
        PAYOUTS_REQUIRE_APPROVAL: 'true',
        PAYOUTS_INBOX_SETTLE: '1ms',
      });
      const journal = env.PAYOUTS_JOURNAL ?? '';
      const as = (host: string) => ({ ...env, PAYOUTS_HOST_NAME: host });
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('a', 20));
      const validated = await runCli(['run'], { env: as('pay-1') });
      expect(validated.code, validated.stderr).toBe(2);
      const approved = await runCli(['approve', 'folha.csv'], { env: as('pay-1') });
      expect(approved.code, approved.stderr).toBe(0);
      expect(readdirSync(join(home, 'approved'))).toEqual(['folha.csv']);

      // pay-1 freezes with the file's batch read, about to release it.
      const first = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...as('pay-1'), PAYOUTS_FAILPOINT: 'releasing-approved:1:stop' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(first);
      let firstSaid = '';
      first.stdout.on('data', (chunk: Buffer) => (firstSaid += chunk.toString('utf8')));
      first.stderr.on('data', (chunk: Buffer) => (firstSaid += chunk.toString('utf8')));
      await waitFor('pay-1 frozen releasing folha.csv', () =>
        firstSaid.includes('failpoint releasing-approved: stopped'),
      );
      await waitForStopped(first.pid ?? 0);

      // pay-2's run sees the same file meanwhile: pay-1 has it.
      const second = await runCli(['run'], { env: as('pay-2') });
      expect(second.stdout).toContain('the host pay-1 is releasing it');
      expect(second.stdout).not.toContain('waiting for approval');
      expect(second.code, second.stdout).toBe(3);
      expect(sandbox.ledger()).toEqual([]);
      expect(readdirSync(join(home, 'approved'))).toEqual(['folha.csv']);

      const exited = new Promise<number | null>((resolve) => first.once('exit', resolve));
      first.kill('SIGCONT');
      expect(await exited, firstSaid).toBe(0);
      expect(firstSaid).not.toContain('rejected/');
      expect(readdirSync(join(home, 'archive'))).toEqual([dated('folha.csv')]);
      for (const folder of ['approved', 'processing', 'rejected']) {
        expect(readdirSync(join(home, folder)), folder).toEqual([]);
      }
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(20);
      expect(await eventsNamed(journal, 'approved')).toBe(1);
    });
  },
);
