/**
 * The SQLite binding, chosen for the running Node.
 *
 * better-sqlite3 12 aborts a process on Node 24 when the garbage collector frees its
 * statements after the runtime has begun tearing down (`Assertion failed: (env) !=
 * nullptr`, WiseLibs/better-sqlite3#1515): a finished run would exit 134, not with its
 * own code. 13 is built on Node-API 10 and does not, but it cannot load on Node 20
 * (Node-API 9), which we still support. So each runtime loads the newest one it can;
 * both read and write the same journal file.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

const BINDING = Number(process.versions.napi) >= 10 ? 'better-sqlite3-node-api' : 'better-sqlite3';

/**
 * The binding, loaded at the first call: the reader opens a file of its own only past
 * MEMORY_KEYS repeat keys (csv/fingerprints.ts), and a reading that never does never
 * loads it.
 */
export function sqliteBinding(): typeof BetterSqlite3 {
  return require(BINDING) as typeof BetterSqlite3;
}

/** `better-sqlite3 12.11.1`: which binding this Node loaded, as `payouts doctor` reports it. */
export function sqliteBindingName(): string {
  return `better-sqlite3 ${(require(`${BINDING}/package.json`) as { version: string }).version}`;
}
