/**
 * A daemon on a PostgreSQL journal whose database is away for a while (its server
 * restarting, the network between them cut): it waits for the database and goes on, as it
 * does for the gateway, rather than end with exit 1, which its systemd unit does not start
 * again (the payroll would wait for a person). A network that stops answering without
 * closing anything (a cut cable, a firewall dropping packets) is met by the journal's own
 * time-outs, not TCP's, which take minutes to hours.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { closedPort, ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

/**
 * How long a process cut off from its database may take to end: well beyond the journal's
 * own time-outs (10 s to connect, 35 s for a statement), well below TCP's (minutes to
 * hours), which is what it waited for before.
 */
const ENDS_WITHIN_MS = 90_000;

/** The journal's URL through `port` (a proxy's) instead of its own. */
const through = (url: string, port: number): string =>
  Object.assign(new URL(url), { port: String(port) }).href;

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
        const watch = hosts.start(
          { ...env, PAYOUTS_JOURNAL: through(direct.href, proxy.port) },
          'pay-1',
        );
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

    it('payouts run whose database stops answering mid-connection ends with exit 1 naming the server, the file left in the inbox', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('cut-run');
      const direct = new URL(env.PAYOUTS_JOURNAL ?? '');
      const proxy = await startTcpProxy(Number(direct.port));
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('f', 5));
      // Connections are taken and never answered, as behind a firewall dropping packets.
      proxy.cut();
      const run = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...env, PAYOUTS_JOURNAL: through(direct.href, proxy.port) }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      try {
        await waitFor('payouts run to end', () => run.exitCode !== null, ENDS_WITHIN_MS);
        expect(run.exitCode, stderr).toBe(1);
        expect(stderr).toContain(
          `the journal's database postgres://postgres@${direct.hostname}:${proxy.port}${direct.pathname} cannot be reached (no answer from the server within `,
        );
        expect(stderr).toContain('nothing was sent, and every file stays where it was');
        expect(readdirSync(join(home, 'inbox'))).toEqual(['folha.csv']);
        expect(sandbox.ledger()).toHaveLength(0);
      } finally {
        await stopChild(run, 'SIGKILL');
        await proxy.close();
      }
    });

    it('a daemon whose database stops answering says so and tries again while cut, and pays on once it answers, each row once', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('cut-watch');
      const direct = new URL(env.PAYOUTS_JOURNAL ?? '');
      const proxy = await startTcpProxy(Number(direct.port));
      try {
        const watch = hosts.start(
          { ...env, PAYOUTS_JOURNAL: through(direct.href, proxy.port) },
          'pay-1',
        );
        writeFileSync(join(home, 'inbox', 'antes.csv'), payrollFile('a', 10));
        await waitFor('antes.csv archived', () =>
          existsSync(join(home, 'archive', dated('antes.csv'))),
        );
        proxy.cut();
        // Nothing closes the connections: the daemon learns of the cut from its own bounds.
        await waitFor(
          'a heartbeat failing while cut, or pay-1 ended',
          () => watch.log().includes('could not be renewed') || watch.child.exitCode !== null,
          ENDS_WITHIN_MS,
        );
        expect(watch.log()).toMatch(
          /the home folder lock could not be renewed \(no answer from the server within \d+ s\): the journal cannot be reached; trying again/,
        );
        // The network back before TCP gave up: held bytes arrive, nothing was closed.
        proxy.resume();
        writeFileSync(join(home, 'inbox', 'depois.csv'), payrollFile('d', 10));
        await waitFor(
          'depois.csv archived, or pay-1 ended',
          () =>
            existsSync(join(home, 'archive', dated('depois.csv'))) || watch.child.exitCode !== null,
          120_000,
        );
        expect(watch.child.exitCode, watch.log()).toBeNull();
        const counts = ledgerCounts(sandbox);
        expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
        expect(counts.size).toBe(20);
        expect(await stopChild(watch.child)).toBe(0);
      } finally {
        await proxy.close();
      }
    });

    it('a daemon told to stop while its LISTEN connection stops answering ends at once, exit 0', async () => {
      const { env } = await hosts.home('cut-listen');
      const direct = new URL(env.PAYOUTS_JOURNAL ?? '');
      const proxy = await startTcpProxy(Number(direct.port));
      try {
        const watch = hosts.start(
          {
            ...env,
            PAYOUTS_JOURNAL: through(direct.href, proxy.port),
            PAYOUTS_POSTBACK_LISTEN: `127.0.0.1:${await closedPort()}`,
          },
          'pay-1',
        );
        await waitFor('pay-1 watching', () => watch.log().includes('watching '));
        // Only the session that listens for postbacks: the pool's statements still pass.
        proxy.cut(/LISTEN payouts_postback/);
        watch.child.kill('SIGTERM');
        await waitFor('pay-1 to end', () => watch.child.exitCode !== null, ENDS_WITHIN_MS);
        expect(watch.child.exitCode, watch.log()).toBe(0);
        expect(watch.log()).toContain('stopped');
      } finally {
        await proxy.close();
      }
    });
  },
);
