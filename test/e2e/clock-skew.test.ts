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
        const { home, env } = await hosts.home(way);
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
      const { home, env } = await hosts.home('set_right');
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

    it('a working host whose clock steps ten minutes behind gives the home up, and a host on the right clock takes it', async () => {
      const { home, env } = await hosts.home('stepped');
      const skewFile = join(folder(), 'skew');
      const stepped = hosts.start({ ...env, ...clockSetBy(skewFile, 0) }, 'pay-1');
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 10));
      await waitFor('folha.csv archived', () => archived(home, 'folha'), 120_000);
      const standing = hosts.start(env, 'pay-2');
      await waitFor('pay-2 waiting for the working host', () =>
        /is working on this home folder: waiting for it/.test(standing.log()),
      );

      setSkew(skewFile, -TEN_MINUTES_MS);
      await waitFor('pay-1 saying its clock is off', () =>
        clockOff('pay-1', 'behind').test(stepped.log()),
      );
      writeFileSync(join(home, 'inbox', 'ferias.csv'), payrollFile('v', 10));
      await waitFor('ferias.csv archived', () => archived(home, 'ferias'), 120_000);
      paidOnce(20);
      // Paid by the host that waited: the one whose clock is off sends nothing.
      expect(standing.log()).toContain('ferias.csv: journaled');
      expect(stepped.log().match(clockOff('pay-1', 'behind'))).toHaveLength(1);
      expect(await stopChild(stepped.child)).toBe(0);
      expect(await stopChild(standing.child)).toBe(0);
    });

    /**
     * `working` takes the home and pays some of a file's rows while `waiting` stands by;
     * then `working` is killed, and `waiting` finishes the file: each row paid once.
     */
    const takeOver = async (home: string, working: WatchHost, waiting: WatchHost) => {
      const sandbox = hosts.sandbox();
      await waitFor('pay-1 waited for by the other host', () =>
        /is working on this home folder: waiting for it/.test(waiting.log()),
      );
      expect(waiting.log()).toContain('on pay-1');

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 200));
      await waitFor('some payouts sent by the working host', () => sandbox.ledger().length > 20);
      // Alive and holding: neither its lock nor its rows were taken from it.
      expect(working.log()).not.toContain('taken over');
      expect(working.child.exitCode).toBeNull();
      await stopChild(working.child, 'SIGKILL');
      expect(sandbox.ledger().length).toBeLessThan(200);

      // Once the dead host's lock is stale (30 s) and its leases ended, by the database's
      // clock; a row whose request the kill cut off is sent again only after the lease,
      // resendGrace and twice the bound (5 s + 1 s + 20 s) from its send: far below 150 s.
      await waitFor(
        'folha.csv archived by the host that waited',
        () => archived(home, 'folha'),
        150_000,
      );
      paidOnce(200);
      expect(`${working.log()}${waiting.log()}`).not.toMatch(/the clock of host/);
      expect(await stopChild(waiting.child)).toBe(0);
    };

    it('a host half the bound ahead waits for the live host, and takes its rows over only once it is dead', async () => {
      const { home, env: homeEnv } = await hosts.home('half_ahead');
      const env = { ...homeEnv, PAYOUTS_MAX_CLOCK_SKEW: `${BOUND_MS}ms` };
      const right = hosts.start(env, 'pay-1');
      await waitFor('pay-1 working', () => right.log().includes('"msg"'));
      const ahead = hosts.start({ ...env, ...skewedClock(BOUND_MS / 2) }, 'pay-2');
      await takeOver(home, right, ahead);
    });

    it('a host half the bound behind keeps no lock or lease alive past its end: the host beside it takes over once it is dead', async () => {
      const { home, env: homeEnv } = await hosts.home('half_behind');
      const env = { ...homeEnv, PAYOUTS_MAX_CLOCK_SKEW: `${BOUND_MS}ms` };
      const behind = hosts.start({ ...env, ...skewedClock(-BOUND_MS / 2) }, 'pay-1');
      await waitFor('pay-1 working', () => behind.log().includes('"msg"'));
      const right = hosts.start(env, 'pay-2');
      await takeOver(home, behind, right);
    });
  },
);
