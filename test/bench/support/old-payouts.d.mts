import type { Database } from 'better-sqlite3';

/** test/bench/support/old-payouts.mjs: payouts put straight into a journal in SQL. */
export function addPayouts(
  db: Database,
  options: { count: number; state: 'paid' | 'pending'; now?: number; history?: boolean },
): number;

/** The same on a PostgreSQL journal: paid payouts with their history, in a finished batch. */
export function addPaidPayoutsPostgres(
  client: import('pg').Client,
  options: { count: number; now?: number },
): Promise<number>;
