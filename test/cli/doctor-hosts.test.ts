/**
 * `payouts doctor` with the journal on PostgreSQL names the hosts at work on it: a host
 * killed mid-batch still holding the home and its rows' leases, and a host beside it.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { usePendingSandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `payouts doctor on a PostgreSQL journal${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 60_000 },
  () => {
    const postgres = usePostgres();
    const made = usePendingSandboxHome();

    it('lists each host seen: when, whether it is at work on the home folder, its rows under a lease', async () => {
      const { home, env: homeEnv, sandbox } = made();
      const env = { ...homeEnv, PAYOUTS_JOURNAL: await postgres.made('hosts') };
      const before = await runCli(['doctor'], { env });
      expect(before.stdout).toMatch(/^ok {4}journal: none yet/m);
      expect(before.stdout).not.toMatch(/^ok {4}host/m);

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('d', 40));
      // pay-1 dies mid-batch: its lock and the leases of the rows it was sending stay.
      const child = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({
          ...env,
          PAYOUTS_HOST_NAME: 'pay-1',
          PAYOUTS_FAILPOINT: 'after-sending-commit:1',
        }),
        stdio: 'ignore',
      });
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        child.once('exit', (...end) => resolve(end)),
      );
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
      // pay-2 works beside pay-1: it sends the queued rows and leaves those under pay-1's leases.
      const beside = await runCli(['run'], { env: { ...env, PAYOUTS_HOST_NAME: 'pay-2' } });
      expect(beside.code).toBe(3);
      expect(beside.stdout).toMatch(/\d+ sending/);

      const doctor = await runCli(['doctor'], { env });
      const leased = doctor.stdout.match(
        /^ok {4}host pay-1: seen \d+s ago, its clock on the database's, at work on the home folder, (\d+) rows? under its leases for \d+(m|s)( \d+s)? more$/m,
      );
      expect(leased, doctor.stdout).not.toBeNull();
      expect(Number(leased?.[1])).toBeGreaterThan(0);
      expect(doctor.stdout).toMatch(
        /^ok {4}host pay-2: seen \d+s ago, its clock on the database's, no rows under its leases$/m,
      );
      expect(sandbox.ledger().length).toBe(40 - Number(leased?.[1]));
      const json = JSON.parse((await runCli(['doctor', '--json'], { env })).stdout) as {
        checks: { name: string }[];
      };
      expect(json.checks.map((check) => check.name)).toEqual(
        expect.arrayContaining(['host pay-1', 'host pay-2']),
      );
    });

    it('fails a host whose clock was off by more than maxClockSkew, with its offset and what to do', async () => {
      const { env: homeEnv } = made();
      const env = { ...homeEnv, PAYOUTS_JOURNAL: await postgres.made('skewed') };
      const ahead = { ...systemClock, now: () => Date.now() + 10 * 60_000 };
      const refused = await runCli(['run'], {
        env: { ...env, PAYOUTS_HOST_NAME: 'pay-3' },
        clock: ahead,
      });
      expect(refused.code).toBe(1);
      const doctor = await runCli(['doctor'], { env });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(
        /^FAIL {2}host pay-3: seen \d+s ago, its clock 600 s ahead of the database's, more than maxClockSkew \(30 s\) allows: it pays nothing until its clock is kept by NTP \(chrony or systemd-timesyncd\), no rows under its leases$/m,
      );
    });

    it('warns of a host whose last clock reading could not tell, with its round trip, not the figure before', async () => {
      const { env: homeEnv } = made();
      const url = await postgres.made('untold');
      const env = { ...homeEnv, PAYOUTS_JOURNAL: url, PAYOUTS_MAX_CLOCK_SKEW: '1s' };
      const proxied = new URL(url);
      const proxy = await startTcpProxy(Number(proxied.port));
      proxied.port = String(proxy.port);
      const journal = await openPostgresJournal({ kind: 'postgres', url: proxied.href });
      try {
        const boundMs = 1_000;
        expect(await journal.clockOffset('pay-4', Date.now, boundMs)).toEqual({ offsetMs: 0 });
        expect((await runCli(['doctor'], { env })).stdout).toMatch(
          /^ok {4}host pay-4: seen \d+s ago, its clock on the database's, no rows under its leases$/m,
        );
        // Held 3 s on its way in: the clock read right, or up to 3 s behind, past the bound.
        const holdMs = 3_000;
        const reads: number[] = [];
        const now = () => {
          reads.push(Date.now());
          return Date.now();
        };
        proxy.cut();
        const reading = journal.clockOffset('pay-4', now, boundMs);
        for (let i = 0; i < 600 && (reads[0] === undefined || Date.now() < reads[0] + holdMs); i++)
          await delay(20);
        proxy.resume();
        const slow = await reading;
        const roundTripMs = slow !== null && 'roundTripMs' in slow ? slow.roundTripMs : undefined;
        expect(roundTripMs).toBeGreaterThanOrEqual(holdMs);
        const doctor = await runCli(['doctor'], { env });
        expect(doctor.stdout).not.toMatch(/^FAIL {2}host/m);
        expect(doctor.stdout).toMatch(
          new RegExp(
            `^WARN {2}host pay-4: seen \\d+s ago, its clock: could not tell \\(round trip ${roundTripMs} ms\\) whether it is within maxClockSkew \\(1 s\\) of the database's; check the network and the load between it and the database, no rows under its leases$`,
            'm',
          ),
        );
      } finally {
        await journal.close();
        await proxy.close();
      }
    }, 120_000);
  },
);
