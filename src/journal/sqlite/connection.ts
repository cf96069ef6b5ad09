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
 * The connection's page cache, in KiB: 4 MiB, not the 16 MB better-sqlite3 builds SQLite
 * with (DEFAULT_CACHE_SIZE=-16000), which a file's admission fills, and which also bounds
 * a sort's memory (a batch's totals, grouped by state, sorted its million rows in 16 MB
 * more). Taking the 1M-row csv-validate file in peaked at 137-141 MB instead of 164-167,
 * for 2% more CPU (26.5 s against 25.3-26.4; the index pages a chunk dirties are read
 * back from the OS's cache), and claims cost the same (21.0 µs a row against 21.3).
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
