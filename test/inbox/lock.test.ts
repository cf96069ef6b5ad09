import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { lockHome } from '../../src/inbox/lock.js';
import { type Journal } from '../../src/journal/journal.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { openSqliteJournal } from '../../src/journal/sqlite/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { useTempFolder } from '../support/files.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

describe('the home folder lock in the journal', () => {
  const folder = useTempFolder();
  let journal: Journal;
  let clock = 1_000_000;
  afterEach(async () => await journal.close());
  const open = () =>
    (journal = openSqliteJournal(join(folder(), 'journal.db'), { now: () => clock }));
  const running = () => true;
  const gone = () => false;
  const a = { holder: 'a', host: 'h1', pid: 1, command: 'run' };
  const b = { holder: 'b', host: 'h1', pid: 2, command: 'run' };

  it('is held by one holder at a time, and says who holds it', async () => {
    open();
    expect(await journal.takeLock('home', a, 30_000, running)).toEqual({ taken: true });
    expect(await journal.takeLock('home', b, 30_000, running)).toMatchObject({
      taken: false,
      heldBy: { holder: 'a', pid: 1, host: 'h1', command: 'run' },
    });
    await journal.releaseLock('home', 'a');
    expect(await journal.takeLock('home', b, 30_000, running)).toEqual({ taken: true });
  });

  it('is taken over when its holder is silent past the stale time, and the holder learns it lost it', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    clock += 29_999;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(false);
    clock += 1;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(true);
    expect(await journal.renewLock('home', 'a')).toBe(false); // a stalled holder wakes: not its lock
    expect(await journal.renewLock('home', 'b')).toBe(true);
  });

  it('is taken over at once when its holder on this host is no longer running', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    expect((await journal.takeLock('home', b, 30_000, gone)).taken).toBe(true);
    // A holder on another host is never judged by a pid of ours.
    clock += 30_000;
    expect(
      (
        await journal.takeLock(
          'home',
          { holder: 'c', host: 'h2', pid: 3, command: 'run' },
          30_000,
          gone,
        )
      ).taken,
    ).toBe(true);
    expect((await journal.takeLock('home', a, 30_000, gone)).taken).toBe(false);
  });

  it('a renewed lock stays held', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    clock += 20_000;
    await journal.renewLock('home', 'a');
    clock += 20_000;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(false);
  });
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `the home folder lock on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();

    it(
      'a renewal answered after the lock was released says nothing of it',
      { timeout: 60_000 },
      async () => {
        const url = await postgres.made('renewal');
        const journal = await openPostgresJournal({ kind: 'postgres', url });
        const other = new pg.Client({ connectionString: url });
        await other.connect();
        const said: string[] = [];
        try {
          const lock = await lockHome(journal, {
            command: 'watch',
            host: 'h1',
            perHost: true,
            waitMs: 0,
            signal: new AbortController().signal,
            clock: systemClock,
            onLost: (why) => said.push(`lost: ${why}`),
            onAway: (why) => said.push(`away: ${why}`),
          });
          if ('heldBy' in lock) throw new Error('the lock was not taken');
          // Another session holds the lock's row: the next heartbeat's renewal waits for it
          // (the journal's only session waiting here), as one a stalled network holds does.
          await other.query('BEGIN');
          await other.query(`SELECT 1 FROM locks WHERE name = 'home@h1' FOR UPDATE`);
          await waitFor(
            'a renewal waiting for the row',
            async () =>
              (
                await other.query<{ n: number }>(
                  `SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND datname = current_database()`,
                )
              ).rows[0]?.n === 1,
            30_000,
          );
          // Released meanwhile (a stop, the clock off), the row gone when the renewal lands.
          const released = lock.release();
          await other.query(`DELETE FROM locks WHERE name = 'home@h1'`);
          await other.query('COMMIT');
          await released;
          // The pool ends once the renewal's connection is back; what it said follows at once.
          await journal.close();
          await new Promise((resolve) => setImmediate(resolve));
          expect(said).toEqual([]);
        } finally {
          await other.end();
          await journal.close();
        }
      },
    );
  },
);
