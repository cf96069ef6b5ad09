import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome, waitFor } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `several hosts on one home and one journal on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const hosts = useHostsOfOneHome();
    const startHost = hosts.start;

    it('a host killed mid-batch: the host waiting beside it takes the home over and finishes, each row once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('hosts');
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
