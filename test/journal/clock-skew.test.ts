/**
 * Leases and the home's lock on PostgreSQL are judged by the database's clock: another
 * process, its clock ten minutes off (test/support/faketime.ts), opens the journal as a
 * command does (its own clock given) and neither takes a live lease or lock nor leaves a
 * dead one standing.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Claim, Journal } from '../../src/journal/journal.js';
import { clockReading, hostClockOff, offsetOf } from '../../src/journal/clock-skew.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { CLUSTER_NOW } from '../../src/journal/postgres/sql.js';
import { TEN_MINUTES_MS, faketimeMissing, skewedClock } from '../support/faketime.js';
import { cashOutRequest } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { useTranspiledSrc } from '../support/transpiled.js';
import { batch } from './conformance.js';

const run = promisify(execFile);

const missing = postgresMissing() ?? faketimeMissing();
(missing ? describe.skip : describe)(
  `leases and the home's lock on PostgreSQL, beside a process whose clock is off${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const postgres = usePostgres();
    const moduleUrl = useTranspiledSrc();
    const opened: Journal[] = [];
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });

    /** This process's journal, on this machine's clock as a command's, with three rows claimed for `leaseMs`. */
    const claimedFor = async (url: string, leaseMs: number) => {
      const journal = await openPostgresJournal({ kind: 'postgres', url }, { now: Date.now });
      opened.push(journal);
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        [1, 2, 3].map((n) => ({
          line: n + 1,
          request: cashOutRequest(`p-${n}`),
        })),
        { duplicateWindowMs: 0 },
      );
      // The lock first: its heartbeat is no later than the leases' start.
      const me = { holder: 'pay-1-a', host: 'pay-1', pid: process.pid, command: 'watch' };
      expect(await journal.takeLock('home', me, 30_000, () => true)).toEqual({ taken: true });
      expect(await journal.claimToSend('pay-1', 3, leaseMs)).toHaveLength(3);
      return journal;
    };

    /**
     * Another host, its clock `skewMs` off, opening the journal with its clock as a command
     * does: the rows it takes over and whether it takes the home, at `staleMs`.
     */
    const otherHost = async (url: string, skewMs: number, staleMs: number) => {
      const script = `
        const { openPostgresJournal } = await import(${JSON.stringify(moduleUrl('journal/postgres/open.js'))});
        const journal = await openPostgresJournal({ kind: 'postgres', url: process.argv[1] }, { now: Date.now });
        const me = { holder: 'pay-2-a', host: 'pay-2', pid: process.pid, command: 'watch' };
        const claims = await journal.claimAbandoned('pay-2', 10, 60_000);
        const lock = await journal.takeLock('home', me, ${staleMs}, () => true);
        await journal.close();
        process.stdout.write(JSON.stringify({ clock: Date.now(), claims, taken: lock.taken }));`;
      const { stdout } = await run(
        process.execPath,
        ['--input-type=module', '--eval', script, url],
        { env: { ...process.env, ...skewedClock(skewMs) } },
      );
      const seen = JSON.parse(stdout) as { clock: number; claims: Claim[]; taken: boolean };
      // That process really read its clock that far off.
      expect(Math.abs(seen.clock - Date.now() - skewMs)).toBeLessThan(60_000);
      return seen;
    };

    it('a host ten minutes ahead takes neither rows leased to a live host nor its home lock', async () => {
      const url = await postgres.made('ahead');
      const journal = await claimedFor(url, 60_000);
      const ahead = await otherHost(url, TEN_MINUTES_MS, 30_000);
      expect(ahead.claims).toEqual([]);
      expect(ahead.taken).toBe(false);
      expect((await journal.payout('p-1'))?.leaseOwner).toBe('pay-1');
    });

    it('a host ten minutes behind takes over rows and the home lock once their lease and heartbeat end by the database clock', async () => {
      const url = await postgres.made('behind');
      const journal = await claimedFor(url, 1_000);
      const leaseUntil = (await journal.payout('p-3'))?.leaseUntil ?? 0;
      // The leases and the heartbeat (1 s stale) running out: a wait on the database's clock.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const until = Date.now() + 30_000;
        const past = async () =>
          Number((await client.query<{ at: string }>(`SELECT ${CLUSTER_NOW} AS at`)).rows[0]?.at) >
          leaseUntil;
        while (!(await past())) {
          if (Date.now() > until) throw new Error('timed out waiting for the leases to end');
          await delay(20);
        }
      } finally {
        await client.end();
      }
      const behind = await otherHost(url, -TEN_MINUTES_MS, 1_000);
      expect(behind.claims.map((claim) => [claim.orderId, claim.state])).toEqual([
        ['p-1', 'unknown'],
        ['p-2', 'unknown'],
        ['p-3', 'unknown'],
      ]);
      expect(behind.taken).toBe(true);
    });

    it('a clock off, read over a round trip slow enough to hide it, is not taken as right', async () => {
      const url = new URL(await postgres.made('slow'));
      const proxy = await startTcpProxy(Number(url.port));
      url.port = String(proxy.port);
      try {
        const journal = await openPostgresJournal(
          { kind: 'postgres', url: url.href },
          { now: Date.now },
        );
        opened.push(journal);
        await journal.hostsSeen(0); // a pooled connection open before the cut
        // 3 s ahead, 2 s allowed: a reading held 1 s to 5 s on its way in reads 2 s or less.
        const offMs = 3_000;
        const boundMs = 2_000;
        const reads: number[] = [];
        const now = () => {
          reads.push(Date.now());
          return Date.now() + offMs;
        };
        proxy.cut();
        const said = hostClockOff(journal, 'pay-9', now, boundMs, true);
        // Held until the store reads its clock about `offMs` after the host read its own.
        for (let i = 0; i < 600 && (reads[0] === undefined || Date.now() < reads[0] + offMs); i++)
          await delay(20);
        proxy.resume();
        expect(await said).toMatchObject({ code: 'hostClockOff', way: 'ahead', boundMs });
        const { hosts } = await journal.hostsSeen(600_000);
        expect(hosts).toHaveLength(1);
        expect(hosts[0]?.clockOffsetMs).toBeGreaterThan(boundMs);
      } finally {
        await proxy.close();
      }
    });

    it('a reading too slow to tell is kept as its round trip, in place of the offset before it', async () => {
      const url = new URL(await postgres.made('untold'));
      const proxy = await startTcpProxy(Number(url.port));
      url.port = String(proxy.port);
      try {
        const journal = await openPostgresJournal(
          { kind: 'postgres', url: url.href },
          { now: Date.now },
        );
        opened.push(journal);
        const boundMs = 1_000;
        expect(await journal.clockOffset('pay-9', Date.now, boundMs)).toEqual({ offsetMs: 0 });
        const told = (await journal.hostsSeen(600_000)).hosts[0];
        expect(told).toMatchObject({ host: 'pay-9', clockOffsetMs: 0 });
        expect(told?.clockRoundTripMs).toBeLessThan(boundMs);
        // Held 3 s on its way in: the clock read right, or up to 3 s behind.
        const holdMs = 3_000;
        const reads: number[] = [];
        const now = () => {
          reads.push(Date.now());
          return Date.now();
        };
        proxy.cut();
        const reading = journal.clockOffset('pay-9', now, boundMs);
        for (let i = 0; i < 600 && (reads[0] === undefined || Date.now() < reads[0] + holdMs); i++)
          await delay(20);
        proxy.resume();
        const slow = await reading;
        expect(slow).toMatchObject({ roundTripMs: expect.any(Number) });
        const roundTripMs = slow !== null && 'roundTripMs' in slow ? slow.roundTripMs : 0;
        expect(roundTripMs).toBeGreaterThanOrEqual(holdMs);
        const { hosts } = await journal.hostsSeen(600_000);
        expect(hosts).toEqual([
          {
            host: 'pay-9',
            seenAt: expect.any(Number),
            clockOffsetMs: null,
            clockRoundTripMs: roundTripMs,
          },
        ]);
      } finally {
        await proxy.close();
      }
    });
  },
);

describe("a host's clock measured against the store's over one round trip", () => {
  it.each([
    // sent, the store's clock, answered (the host's clock): the least the host is off by
    [1_000, 1_000, 1_010, 0],
    [601_000, 1_000, 601_010, 600_000], // ten minutes ahead
    [1_000, 601_000, 1_010, -599_990], // ten minutes behind
    // Held 20 s by a network that stalled: the store read its clock somewhere in between,
    // which tells nothing of this host's (the middle of the round trip said 10 s behind).
    [0, 20_000, 20_010, 0],
    [0, 0, 20_010, 0],
    [0, 50_000, 20_010, -29_990], // behind beyond any stall
  ])('sent at %i, read %i, answered at %i: off by %i', (sent, store, answered, offset) => {
    expect(offsetOf(sent, store, answered)).toBe(offset);
  });
});

describe("a reading that cannot tell which side of the bound a host's clock is on", () => {
  it.each([
    // sent, the store's clock, answered, the bound: what the reading says
    [0, 0, 10, 1_000, { offsetMs: 0 }], // within, whatever moment the store read
    [5_000, 0, 5_010, 1_000, { offsetMs: 5_000 }], // ahead, whatever moment
    [0, 5_000, 10, 1_000, { offsetMs: -4_990 }], // behind, whatever moment
    // Held 5 s: from 0 (right) to 5 s ahead (off), so it cannot tell.
    [0, 0, 5_000, 1_000, { roundTripMs: 5_000 }],
    [0, 5_000, 5_000, 1_000, { roundTripMs: 5_000 }],
  ])('sent at %i, read %i, answered at %i, bound %i: %o', (sent, store, answered, bound, said) => {
    expect(clockReading(sent, store, answered, bound)).toEqual(said);
  });
});
