/**
 * Hosts sharing one journal on PostgreSQL date its entries by their own clocks: a host
 * whose clock is off from the database's by more than `maxClockSkew` pays nothing and says
 * so, and a host on the right clock is never stopped by entries a host within the bound wrote.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { runCli } from '../support/cli.js';
import { ledgerCounts } from '../support/gateway.js';
import { usePendingSandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';

const MINUTE_MS = 60_000;

/** The system's clock read `skewMs` off, as a host whose clock NTP does not keep. */
const offBy = (skewMs: number): Clock => ({ ...systemClock, now: () => Date.now() + skewMs });

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a host's clock measured against the database's${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();
    const made = usePendingSandboxHome();

    /** A home on the database `name`, as the host `host` runs it, with `settings`. */
    const hostOf = async (name: string, settings: Record<string, string> = {}) => {
      const { env } = made();
      const journal = await postgres.made(name);
      return (host: string) => ({
        ...env,
        ...settings,
        PAYOUTS_JOURNAL: journal,
        PAYOUTS_HOST_NAME: host,
      });
    };
    const drop = (name: string, prefix: string, rows: number) =>
      writeFileSync(join(made().home, 'inbox', name), payrollFile(prefix, rows));

    it.each([
      ['ahead', 10 * MINUTE_MS],
      ['behind', -10 * MINUTE_MS],
    ])(
      'a host ten minutes %s pays nothing and says so; the host on the right clock pays every row once',
      async (way, skewMs) => {
        const env = await hostOf(way);
        drop('folha.csv', 'f', 3);
        const off = await runCli(['run'], { env: env('pay-2'), clock: offBy(skewMs) });
        expect(off.code, off.stderr).toBe(1);
        expect(off.stderr).toMatch(
          new RegExp(
            `payouts run: the clock of host pay-2 reads (59\\d|60\\d) s ${way} of the journal's database, more than maxClockSkew \\(30 s\\) allows: it pays nothing until its clock is set right\\. Keep it by NTP \\(chrony or systemd-timesyncd\\), then run again`,
          ),
        );
        expect(made().sandbox.ledger()).toHaveLength(0);

        const right = await runCli(['run'], { env: env('pay-1') });
        expect(right.stderr).not.toContain('the latest time in the journal');
        expect(right.code, right.stderr).toBe(3);
        const counts = ledgerCounts(made().sandbox);
        expect([...counts.entries()].sort()).toEqual([
          ['f-0', 1],
          ['f-1', 1],
          ['f-2', 1],
        ]);
      },
    );

    it('a host four minutes ahead, within a bound of five, pays; the host on the right clock then pays the next file, not stopped by its entries', async () => {
      const env = await hostOf('within', { PAYOUTS_MAX_CLOCK_SKEW: '5m' });
      drop('folha.csv', 'f', 2);
      const ahead = await runCli(['run'], { env: env('pay-2'), clock: offBy(4 * MINUTE_MS) });
      expect(ahead.code, ahead.stderr).toBe(3);
      expect(ledgerCounts(made().sandbox).size).toBe(2);

      drop('ferias.csv', 'v', 2);
      const right = await runCli(['run'], { env: env('pay-1') });
      expect(right.stderr).not.toContain('the latest time in the journal');
      expect(right.code, right.stderr).toBe(3);
      const counts = ledgerCounts(made().sandbox);
      expect(counts.size).toBe(4);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    });
  },
);
