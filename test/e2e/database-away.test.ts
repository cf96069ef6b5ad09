/**
 * A daemon on a PostgreSQL journal whose database is away for a while (its server
 * restarting, the network between them cut): it waits for the database and goes on, as it
 * does for the gateway, rather than end with exit 1, which its systemd unit does not start
 * again (the payroll would wait for a person).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `payouts watch on a PostgreSQL journal that is away for a while${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 180_000 },
  () => {
    const hosts = useHostsOfOneHome();

    it('keeps its home through the outage and pays a file dropped after it, each row once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('away');
      const direct = new URL(env.PAYOUTS_JOURNAL ?? '');
      const proxy = await startTcpProxy(Number(direct.port));
      try {
        const through = new URL(direct);
        through.port = String(proxy.port);
        const watch = hosts.start({ ...env, PAYOUTS_JOURNAL: through.href }, 'pay-1');
        await waitFor('pay-1 working', () => watch.log().includes('"msg"'));
        writeFileSync(join(home, 'inbox', 'antes.csv'), payrollFile('a', 20));
        await waitFor('antes.csv archived', () =>
          existsSync(join(home, 'archive', dated('antes.csv'))),
        );

        // Until a heartbeat of the home's lock (every 5 s) is overdue, by the database's clock,
        // so it was sent into the cut, well within its staleness (30 s): it fails once mended.
        proxy.cut();
        const look = new pg.Client({ connectionString: direct.href });
        await look.connect();
        try {
          await waitFor(
            'a heartbeat of the lock overdue',
            async () =>
              Number(
                (
                  await look.query<{ late: string }>(
                    `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
                       - max(heartbeat_at) AS late FROM locks`,
                  )
                ).rows[0]!.late,
              ) > 6_000,
            30_000,
          );
        } finally {
          await look.end();
        }
        proxy.mend();
        await waitFor('the heartbeat sent into the cut failing', () =>
          watch.log().includes('could not be renewed'),
        );

        writeFileSync(join(home, 'inbox', 'depois.csv'), payrollFile('d', 20));
        await waitFor(
          'depois.csv archived, or pay-1 ended',
          () =>
            existsSync(join(home, 'archive', dated('depois.csv'))) || watch.child.exitCode !== null,
          120_000,
        );
        expect(watch.child.exitCode, watch.log()).toBeNull();
        const counts = ledgerCounts(sandbox);
        expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
        expect(counts.size).toBe(40);
        expect(await stopChild(watch.child)).toBe(0);
      } finally {
        await proxy.close();
      }
    });
  },
);
