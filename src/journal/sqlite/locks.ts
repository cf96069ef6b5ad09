/** The locks aggregate of the SQLite journal: who holds the home folder. */
import type { JournalLocks } from '../journal.js';
import type { HostsSeen, LockHolder } from '../types.js';
import type { Context, Synchronous } from './context.js';
import { movedOf, movedRefusal } from './moved.js';

interface LockRow {
  holder: string;
  host: string;
  pid: number;
  command: string | null;
  since: number;
  heartbeat_at: number;
}

/**
 * `copying`: the journal was opened by journal copy, which takes the home of a journal it
 * moved already (a copy cut short is made again).
 */
export function createLocks(
  { db, now, writing }: Context,
  copying: boolean,
): Synchronous<JournalLocks> {
  const statements = {
    lock: db.prepare<[string], LockRow>(`SELECT * FROM locks WHERE name = ?`),
    setLock: db.prepare<{
      name: string;
      holder: string;
      host: string;
      pid: number;
      command: string;
      now: number;
    }>(`
      INSERT OR REPLACE INTO locks (name, holder, host, pid, command, since, heartbeat_at)
      VALUES (@name, @holder, @host, @pid, @command, @now, @now)`),
    renewLock: db.prepare<[number, string, string]>(
      `UPDATE locks SET heartbeat_at = ? WHERE name = ? AND holder = ?`,
    ),
    releaseLock: db.prepare<[string, string]>(`DELETE FROM locks WHERE name = ? AND holder = ?`),
    lockHolders: db.prepare<
      [],
      Pick<LockRow, 'holder' | 'host' | 'heartbeat_at'> & { name: string }
    >(`SELECT name, holder, host, heartbeat_at FROM locks`),
    liveLeases: db.prepare<[number], { owner: string; rows: number; until: number }>(
      `SELECT lease_owner AS owner, COUNT(*) AS rows, MAX(lease_until) AS until FROM payouts
       WHERE lease_owner IS NOT NULL AND lease_until > ? GROUP BY lease_owner`,
    ),
  };

  return {
    takeLock: writing(
      (
        name: string,
        me: { holder: string; host: string; pid: number; command: string },
        staleMs: number,
        isRunning: (pid: number) => boolean,
      ): { taken: true } | { taken: false; heldBy: LockHolder } => {
        const row = statements.lock.get(name);
        const at = now();
        const gone =
          !row || row.heartbeat_at <= at - staleMs || (row.host === me.host && !isRunning(row.pid));
        if (!gone) {
          return {
            taken: false,
            heldBy: {
              holder: row.holder,
              host: row.host,
              pid: row.pid,
              command: row.command,
              since: row.since,
              heartbeatAt: row.heartbeat_at,
            },
          };
        }
        // Read once the home is free: a command that opened the journal before journal copy
        // moved it, and waited for the home meanwhile, finds the mark here.
        const moved = movedOf(db);
        if (moved && !copying) throw movedRefusal(db.name, moved);
        statements.setLock.run({ name, ...me, now: at });
        return { taken: true };
      },
    ),

    renewLock: writing(
      (name: string, holder: string): boolean =>
        statements.renewLock.run(now(), name, holder).changes === 1,
    ),

    releaseLock: writing((name: string, holder: string): void => {
      statements.releaseLock.run(name, holder);
    }),

    // One host works on a SQLite journal: it is seen by its lock's heartbeat.
    hostsSeen: (withinMs: number): HostsSeen => {
      const at = now();
      const locks = statements.lockHolders.all().map((row) => ({
        name: row.name,
        holder: row.holder,
        host: row.host,
        heartbeatAt: row.heartbeat_at,
      }));
      return {
        now: at,
        hosts: locks
          .filter((lock) => lock.heartbeatAt >= at - withinMs)
          .map(({ host, heartbeatAt }) => ({
            host,
            seenAt: heartbeatAt,
            clockOffsetMs: null,
            clockRoundTripMs: null,
          })),
        locks,
        leases: statements.liveLeases.all(at),
      };
    },
    // One host works on a SQLite journal, the home's lock holder: every claim is its own.
    takeClaim: () => ({ taken: true }),
    releaseClaim: () => undefined,
    // One host: its clock is the journal's.
    clockOffset: (): null => null,
  };
}
