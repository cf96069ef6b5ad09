/**
 * The SQL statements this process runs, recorded with their first arguments, and how
 * SQLite plans each: for tests that hold periodic work to an index (EXPLAIN QUERY PLAN).
 */
import { sqliteBinding } from '../../src/runtime/sqlite.js';

export interface Ran {
  sql: string;
  args: unknown[];
}

type Method = (this: { source: string }, ...args: unknown[]) => unknown;

/** Records every statement run while `use` runs, in the order first run. */
export async function recordStatements(use: () => Promise<void>): Promise<Ran[]> {
  const Database = sqliteBinding();
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, Method>;
  probe.close();
  const ran = new Map<string, Ran>();
  const methods = ['run', 'get', 'all', 'iterate'] as const;
  const originals = methods.map((name) => prototype[name] as Method);
  methods.forEach((name, i) => {
    const original = originals[i] as Method;
    prototype[name] = function (this: { source: string }, ...args: unknown[]) {
      if (!ran.has(this.source)) ran.set(this.source, { sql: this.source, args });
      return original.apply(this, args);
    };
  });
  try {
    await use();
  } finally {
    methods.forEach((name, i) => (prototype[name] = originals[i] as Method));
  }
  return [...ran.values()];
}

/** How SQLite reads for `ran` in the journal at `path`: its plan's lines. */
export function planOf(path: string, ran: Ran): string[] {
  const Database = sqliteBinding();
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${ran.sql}`)
      .all(...ran.args)
      .map((row) => row.detail);
  } finally {
    db.close();
  }
}
