/** The SQLite binding the journal opens its files with (chosen in runtime/sqlite.ts). */
import type BetterSqlite3 from 'better-sqlite3';
import { sqliteBinding, sqliteBindingName } from '../runtime/sqlite.js';

export const Database: typeof BetterSqlite3 = sqliteBinding();

/** `better-sqlite3 12.11.1`: which binding this Node loaded, as `payouts doctor` reports it. */
export const SQLITE_BINDING = sqliteBindingName();
export type Database = BetterSqlite3.Database;

/** Which store holds the journal, in words. */
export const JOURNAL_STORE = `SQLite through ${SQLITE_BINDING}`;
