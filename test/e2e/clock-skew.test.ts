/**
 * Two hosts on one home and one journal on PostgreSQL, one of them with its clock ten
 * minutes off (test/support/faketime.ts): the home's lock and the claims' leases are
 * judged by the database's clock, so whichever host's clock is off, neither takes the home
 * and the rows of a live host, and a dead host's rows are taken over once its lock and
 * leases end.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stopChild } from '../support/cli.js';
import { TEN_MINUTES_MS, faketimeMissing, skewedClock } from '../support/faketime.js';
import { dated } from '../support/files.js';
import { ledgerCounts } from '../support/gateway.js';
import { useHostsOfOneHome, waitFor, type WatchHost } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';

const missing = postgresMissing() ?? faketimeMissing();
(missing ? describe.skip : describe)(
  `a host whose clock is ten minutes off, beside another on one PostgreSQL journal${missing ? ` (skipped: ${missing})` : ''}`,
  { timeout: 240_000 },
  () => {
    const hosts = useHostsOfOneHome();
    /** `payouts watch` as the host `hostName`, its clock `skewMs` off. */
    const skewedHost = (env: Record<string, string>, hostName: string, skewMs: number) =>
      hosts.start({ ...env, ...skewedClock(skewMs) }, hostName);

    /** How far the clock of the process that wrote `log` is from ours, by its first line's time. */
    const skewOf = (log: string): number => {
      const time = /"time":"([^"]+)"/.exec(log)?.[1];
      return time === undefined ? Number.NaN : Date.parse(time) - Date.now();
    };

    /**
     * `working` takes the home and pays some of a file's rows while `waiting` stands by;
     * then `working` is killed, and `waiting` finishes the file: each row paid once.
     */
    const takeOver = async (
      home: string,
      working: WatchHost,
      waiting: WatchHost,
      workingName: string,
    ) => {
      const sandbox = hosts.sandbox();
      await waitFor(`${workingName} waited for by the other host`, () =>
        /is working on this home folder: waiting for it/.test(waiting.log()),
      );
      expect(waiting.log()).toContain(`on ${workingName}`);

      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('h', 200));
      await waitFor('some payouts sent by the working host', () => sandbox.ledger().length > 20);
      // Alive and holding: neither its lock nor its rows were taken from it.
      expect(working.log()).not.toContain('taken over');
      expect(working.child.exitCode).toBeNull();
      await stopChild(working.child, 'SIGKILL');
      expect(sandbox.ledger().length).toBeLessThan(200);

      // Once the dead host's lock is stale (30 s) and its leases ended, by the database's clock.
      await waitFor(
        'folha.csv archived by the host that waited',
        () => existsSync(join(home, 'archive', dated('folha.csv'))),
        120_000,
      );
      const counts = ledgerCounts(sandbox);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(200);
      expect(await stopChild(waiting.child)).toBe(0);
    };

    it('a host ten minutes ahead waits for the live host, and takes its rows over only once it is dead', async () => {
      const { home, env } = await hosts.home('ahead');
      const right = hosts.start(env, 'pay-1');
      await waitFor('pay-1 working', () => right.log().includes('"msg"'));
      const ahead = skewedHost(env, 'pay-2', TEN_MINUTES_MS);
      await waitFor('pay-2 logging', () => ahead.log().includes('"msg"'));
      // The host's process really reads the clock ten minutes ahead.
      expect(skewOf(ahead.log())).toBeGreaterThan(TEN_MINUTES_MS - 60_000);
      await takeOver(home, right, ahead, 'pay-1');
    });

    it('a host ten minutes behind keeps no lock or lease alive past its end: the host beside it waits while it works, and takes over once it is dead', async () => {
      const { home, env } = await hosts.home('behind');
      const behind = skewedHost(env, 'pay-1', -TEN_MINUTES_MS);
      await waitFor('pay-1 working', () => behind.log().includes('"msg"'));
      expect(skewOf(behind.log())).toBeLessThan(-(TEN_MINUTES_MS - 60_000));
      const right = hosts.start(env, 'pay-2');
      await takeOver(home, behind, right, 'pay-1');
    });
  },
);
