/**
 * A connection to the journal file as every connection of ours has it: WAL, a commit on
 * disk before it returns (synchronous=FULL), a bounded page cache, foreign keys, and a
 * wait for another writer's lock. The journal's own (open.ts) and its sending thread's
 * (sending-worker.ts) are both made here, so neither commits with less than the other.
 */
import { Database } from '../sqlite.js';

/** How long a write waits for another connection's write lock before SQLITE_BUSY. */
export const BUSY_WAIT_MS = 10_000;
/**
 * The connection's page cache, in KiB: smaller than better-sqlite3's 16 MB, which a file's
 * admission fills, for the peak's sake at about the same CPU (docs/benchmarks.md).
 */
const CACHE_KIB = 4_000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Opens `path` (made beforehand, owner-only) and sets it up; closed again if that fails. */
export function connect(path: string): Database {
  // The busy time-out first: two processes opening at once must wait for each other,
  // even for switching to WAL.
  const db = new Database(path, { timeout: BUSY_WAIT_MS });
  // A damaged or unreadable file fails here: closed, so that a process that goes on (a
  // daemon, a test running commands in its own process) does not keep it open.
  try {
    switchToWal(db);
    // FULL: a commit is on disk before it returns, so a `sending` mark survives a power cut.
    db.pragma('synchronous = FULL');
    db.pragma(`cache_size = -${CACHE_KIB}`);
    db.pragma('foreign_keys = ON');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Switching a new journal to WAL takes the whole file, and SQLite answers SQLITE_BUSY at
 * once instead of waiting as it does for a write: two processes opening a new journal
 * together (two daemons started at once) would have one fail. So it is tried again, for
 * as long as a write would wait.
 */
function switchToWal(db: Database): void {
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw error;
      Atomics.wait(PAUSE, 0, 0, 20); // a synchronous pause: the open is synchronous
    }
  }
}
