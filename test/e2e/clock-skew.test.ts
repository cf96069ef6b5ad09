/**
 * Hosts on one home and one journal on PostgreSQL, one of them with its clock off
 * (test/support/faketime.ts). Ten minutes off, beyond maxClockSkew (30 s by default), it pays nothing,
 * says so once and keeps out of the home's way, and goes on once its clock is set right;
 * the host on the right clock pays every row once. Half the bound off, it works beside the
 * host on the right clock: neither takes the other's live lock or leases, and a dead host's
 * rows are taken over once its lock and leases end, by the database's clock.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { stopChild } from '../support/cli.js';
import {
  TEN_MINUTES_MS,
  clockSetBy,
  faketimeMissing,
  setSkew,
  skewedClock,
} from '../support/faketime.js';
import { useTempFolder } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome, type WatchHost } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

/** maxClockSkew in the tests of hosts within it: small, since it widens the resend grace twice over. */
const BOUND_MS = 10_000;

const missing = postgresMissing() ?? faketimeMissing();
(missing ? describe.skip : describe)(
  `hosts whose clocks are off, beside another on one PostgreSQL journal${missing ? ` (skipped: ${missing})` : ''}`,
  { timeout: 240_000 },
  () => {
    const hosts = useHostsOfOneHome();
    /** The default bound, which the sentence names (the tests' own is 3 s). */
    const DEFAULT_BOUND = { PAYOUTS_MAX_CLOCK_SKEW: '30s' };
    const folder = useTempFolder();

    /** How far the clock of the process that wrote `log` is from ours, by its first line's time. */
    const skewOf = (log: string): number => {
      const time = /"time":"([^"]+)"/.exec(log)?.[1];
      return time === undefined ? Number.NaN : Date.parse(time) - Date.now();
    };
    /** The sentence of a host whose clock is off, as a daemon says it. */
    const clockOff = (host: string, way: string) =>
      new RegExp(
        `the clock of host ${host} reads \\d+ s ${way} of the journal's database, more than maxClockSkew \\(30 s\\) allows: it pays nothing until its clock is set right\\. Keep it by NTP \\(chrony or systemd-timesyncd\\), then it goes on by itself`,
        'g',
      );
    const archived = (home: string, name: string) =>
      readdirSync(join(home, 'archive')).some((file) => file.startsWith(`${name}.`));
    /** Every row of a file of `rows` rows paid once, by the sandbox's ledger. */
    const paidOnce = (rows: number) => {
      const counts = ledgerCounts(hosts.sandbox());
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(rows);
    };

    it.each([
      ['ahead', TEN_MINUTES_MS],
      ['behind', -TEN_MINUTES_MS],
    ])(
      'a host ten minutes %s pays nothing, says so once and keeps out of the way; the host on the right clock pays every row once',
      async (way, skewMs) => {
        const { home, env } = await hosts.home(way, DEFAULT_BOUND);
        const off = hosts.start({ ...env, ...skewedClock(skewMs) }, 'pay-2');
        await waitFor('pay-2 saying its clock is off', () =>
          clockOff('pay-2', way).test(off.log()),
        );
        expect(Math.abs(skewOf(off.log()) - skewMs)).toBeLessThan(60_000);

        // Started after it: the home is free for it, the host off never having taken it.
        const right = hosts.start(env, 'pay-1');
        writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 50));
        await waitFor('folha.csv archived', () => archived(home, 'folha'), 120_000);
        paidOnce(50);
        expect(right.log()).not.toContain('is working on this home folder: waiting for it');
        expect(right.log()).not.toMatch(/the clock of host/);
        expect(off.log().match(clockOff('pay-2', way))).toHaveLength(1);
        expect(await stopChild(off.child)).toBe(0);
        expect(await stopChild(right.child)).toBe(0);
      },
    );

    it('a host ten minutes ahead goes on by itself once its clock is set right, and pays the file once', async () => {
      const { home, env } = await hosts.home('set_right', DEFAULT_BOUND);
      const skewFile = join(folder(), 'skew');
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 20));
      const host = hosts.start({ ...env, ...clockSetBy(skewFile, TEN_MINUTES_MS) }, 'pay-1');
      await waitFor('pay-1 saying its clock is off', () =>
        clockOff('pay-1', 'ahead').test(host.log()),
      );
      expect(hosts.sandbox().ledger()).toHaveLength(0);
      // NTP sets it right.
      setSkew(skewFile, 0);
      await waitFor('folha.csv archived', () => archived(home, 'folha'), 120_000);
      paidOnce(20);
      expect(host.log().match(clockOff('pay-1', 'ahead'))).toHaveLength(1);
      expect(await stopChild(host.child)).toBe(0);
    });

    /** The rows `sql` reads from the journal's database at `url`. */
    const rowsOf = async <T extends object>(url: string, sql: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<T>(sql, params)).rows;
      } finally {
        await client.end();
      }
    };
    /** How many rows `host` claimed to send so far, from the journal's audit of each claim. */
    const claimsBy = async (url: string, host: string): Promise<number> =>
      Number(
        (
          await rowsOf<{ n: string }>(
            url,
            // Some reasons are a caller's English, not JSON: only the claims' are cast.
            `SELECT count(*) AS n FROM (SELECT reason FROM audit
               WHERE reason LIKE '{"code":"auditClaimed"%') c
             WHERE split_part(reason::json->>'owner', ':', 1) = $1`,
            [host],
          )
        )[0]!.n,
      );
    /** How many rows `host` holds under a lease not yet ended, by the database's clock. */
    const liveLeases = async (url: string, host: string): Promise<number> =>
      Number(
        (
          await rowsOf<{ n: string }>(
            url,
            `SELECT count(*) AS n FROM payouts WHERE lease_owner LIKE $1
               AND lease_until > floor(extract(epoch FROM clock_timestamp()) * 1000)`,
            [`${host}:%`],
          )
        )[0]!.n,
      );
    /** How many rows `later` took over from `earlier` once `earlier`'s lease on them ended. */
    const takenFrom = async (url: string, earlier: string, later: string): Promise<number> =>
      Number(
        (
          await rowsOf<{ n: string }>(
            url,
            `WITH claims AS (
               SELECT payout_id, id, split_part(reason::json->>'owner', ':', 1) AS host
               FROM (SELECT payout_id, id, reason FROM audit
                     WHERE reason LIKE '{"code":"auditClaimed"%') c)
             SELECT count(DISTINCT b.payout_id) AS n FROM claims a
             JOIN audit b ON b.payout_id = a.payout_id AND b.id > a.id
             WHERE a.host = $1 AND b.reason LIKE '{"code":"auditLeaseEnded"%'
               AND split_part(b.reason::json->>'owner', ':', 1) = $2`,
            [earlier, later],
          )
        )[0]!.n,
      );
    /** pay-1 and pay-2 started, then both sending a file of `rows` rows at once. */
    const bothSending = async (home: string, journal: string, pair: WatchHost[], rows: number) => {
      for (const host of pair) await waitFor('a host started', () => host.log().includes('"msg"'));
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', rows));
      await waitFor(
        'both hosts sending folha.csv',
        async () =>
          (await claimsBy(journal, 'pay-1')) > 0 && (await claimsBy(journal, 'pay-2')) > 0,
      );
    };

    it('a working host whose clock steps ten minutes behind stops claiming, and the host beside it pays the rest of the file and the next', async () => {
      const { home, env } = await hosts.home('stepped', DEFAULT_BOUND);
      const journal = env.PAYOUTS_JOURNAL ?? '';
      const sandbox = hosts.sandbox();
      // Sending outlasts the step: the file is still being sent when the clock is off.
      sandbox.setFaults({ latencyMs: 200 });
      const skewFile = join(folder(), 'skew');
      const stepped = hosts.start({ ...env, ...clockSetBy(skewFile, 0) }, 'pay-1');
      const right = hosts.start(env, 'pay-2');
      await bothSending(home, journal, [stepped, right], 600);

      setSkew(skewFile, -TEN_MINUTES_MS);
      await waitFor('pay-1 saying its clock is off', () =>
        clockOff('pay-1', 'behind').test(stepped.log()),
      );
      const claimedBeforeOff = await claimsBy(journal, 'pay-1');
      expect(sandbox.ledger().length).toBeLessThan(600);
      writeFileSync(join(home, 'inbox', 'ferias.csv'), payrollFile('v', 50));
      await waitFor(
        'folha.csv and ferias.csv archived',
        () => archived(home, 'folha') && archived(home, 'ferias'),
        150_000,
      );
      paidOnce(650);
      // The host whose clock is off claimed nothing more, and holds no lease.
      expect(await claimsBy(journal, 'pay-1')).toBe(claimedBeforeOff);
      expect(await liveLeases(journal, 'pay-1')).toBe(0);
      expect(stepped.log().match(clockOff('pay-1', 'behind'))).toHaveLength(1);
      expect(right.log()).not.toMatch(/the clock of host/);
      expect(await stopChild(stepped.child)).toBe(0);
      expect(await stopChild(right.child)).toBe(0);
    });

    /**
     * pay-1 (`working`) and pay-2 (`beside`) send a file's rows at once, neither taking the
     * other's; then pay-1 is killed, and pay-2 takes its rows over and finishes: each row once.
     */
    const takeOver = async (
      home: string,
      journal: string,
      working: WatchHost,
      beside: WatchHost,
    ) => {
      const sandbox = hosts.sandbox();
      sandbox.setFaults({ latencyMs: 150 });
      await bothSending(home, journal, [working, beside], 200);
      await waitFor(
        'pay-1 holding rows under live leases',
        async () => (await liveLeases(journal, 'pay-1')) > 0,
      );
      // Both alive: no row sent by both, none of pay-1's rows taken over by pay-2.
      expect([...ledgerCounts(sandbox).values()].filter((n) => n !== 1)).toEqual([]);
      expect(await takenFrom(journal, 'pay-1', 'pay-2')).toBe(0);
      expect(working.child.exitCode).toBeNull();
      await stopChild(working.child, 'SIGKILL');
      expect(sandbox.ledger().length).toBeLessThan(200);

      // Once the dead host's lock is stale (30 s) and its leases ended, by the database's
      // clock; a row whose request the kill cut off is sent again only after the lease,
      // resendGrace and twice the bound (5 s + 1 s + 20 s) from its send: far below 150 s.
      await waitFor('folha.csv archived by pay-2', () => archived(home, 'folha'), 150_000);
      // pay-1 held rows when it died: the file archived means pay-2 finished them.
      paidOnce(200);
      expect(`${working.log()}${beside.log()}`).not.toMatch(/the clock of host/);
      expect(await stopChild(beside.child)).toBe(0);
    };

    it('a host half the bound ahead works beside the live host, and takes its rows over only once it is dead', async () => {
      const { home, env: homeEnv } = await hosts.home('half_ahead');
      const env = { ...homeEnv, PAYOUTS_MAX_CLOCK_SKEW: `${BOUND_MS}ms` };
      const right = hosts.start(env, 'pay-1');
      const ahead = hosts.start({ ...env, ...skewedClock(BOUND_MS / 2) }, 'pay-2');
      await takeOver(home, homeEnv.PAYOUTS_JOURNAL ?? '', right, ahead);
    });

    it('a host half the bound behind keeps no lock or lease alive past its end: the host beside it takes over once it is dead', async () => {
      const { home, env: homeEnv } = await hosts.home('half_behind');
      const env = { ...homeEnv, PAYOUTS_MAX_CLOCK_SKEW: `${BOUND_MS}ms` };
      const behind = hosts.start({ ...env, ...skewedClock(-BOUND_MS / 2) }, 'pay-1');
      const right = hosts.start(env, 'pay-2');
      await takeOver(home, homeEnv.PAYOUTS_JOURNAL ?? '', behind, right);
    });
  },
);
