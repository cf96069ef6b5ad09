/**
 * A home's SQLite journal copied into an empty PostgreSQL database, exactly: every batch,
 * payout, line, audit entry and batch event with its id, the gateway it is bound to and
 * the journal's identity (its id tags orderIds; its audit ids are the high-water mark the
 * loss check reads); no lock, so the copy starts free. The SQLite file is read in one
 * read transaction (one snapshot), a chunk of rows at a time; PostgreSQL is written in one
 * transaction under the migrations' lock, so a copy cut short leaves the database as it
 * was. Before it commits, the copy compares the rows and sums of each state and of each
 * batch on both sides; any difference rolls it back. Once the database is found empty, and
 * before anything is committed there, the SQLite journal is marked moved (every command
 * then refuses it): a copy cut short leaves it refused and the database empty, and is made
 * again; a copy rolled back (a difference, the lock lost) takes the mark off again.
 */
import type pg from 'pg';
import type { Tally } from '../../messages/said.js';
import { failpoint } from '../../runtime/failpoint.js';
import { MIGRATIONS } from '../migrations.js';
import type { RowState } from '../states.js';
import { Database } from '../sqlite.js';
import { connect } from '../sqlite/connection.js';
import { markMoved, movedOf, movedRefusal, unmarkMoved } from '../sqlite/moved.js';
import { inTransaction, poolFor, type Runner } from './connection.js';
import { LATEST_POSTGRES_SCHEMA, migrateWithin, schemaWithin } from './open.js';
import { postgresAddress } from '../location.js';
import { journalErrorOf } from './store-errors.js';

/** Rows read and written at once: a few hundred kilobytes, whatever the journal's size. */
const CHUNK_ROWS = 1000;

/**
 * The tables copied, parents first, each with the key it is read in order of. The columns
 * are PostgreSQL's: each has a twin of its name in SQLite (pix_key and cpf_cnpj are
 * SQLite's virtual columns, made of the `_written` ones it keeps).
 */
const TABLES = [
  { table: 'batches', key: ['id'] },
  { table: 'payouts', key: ['id'] },
  { table: 'batch_lines', key: ['batch_id', 'line'] },
  { table: 'audit', key: ['id'] },
  { table: 'batch_events', key: ['id'] },
  { table: 'gateway', key: ['id'] },
  { table: 'identity', key: ['id'] },
] as const;

type Copied = (typeof TABLES)[number]['table'];

/** SQLite's columns whose facts PostgreSQL keeps in others (its virtual pix_key, cpf_cnpj). */
const KEPT_IN_OTHERS = new Set(['payouts.pix_key_written', 'payouts.cpf_cnpj_written']);

/**
 * Tables of the journal that are not copied: its schema's version, made by the
 * migrations; locks, left free; the mark of the move, which is this file's alone.
 */
const NOT_COPIED = new Set(['schema_version', 'locks', 'moved']);

export interface StateCompared {
  state: RowState;
  sqlite: Tally;
  postgres: Tally;
}

export interface BatchCompared {
  batchId: number;
  sqlite: Tally;
  postgres: Tally;
}

export type CopyOutcome =
  | {
      kind: 'copied';
      address: string;
      journalId: string;
      highWater: number;
      rows: Record<Copied, number>;
      states: StateCompared[];
      batches: number;
    }
  /** The database holds rows (or a journal's schema of another version): nothing written. */
  | { kind: 'not-empty'; address: string; tables: string[]; schema: number }
  /** Both sides read apart after the copy: rolled back, nothing written. */
  | {
      kind: 'differs';
      address: string;
      states: StateCompared[];
      batches: BatchCompared[];
    };

/** A schema this copy does not map: a bug of this payouts, said as one, never the database's. */
class Unmapped extends Error {}

class Differs extends Error {
  constructor(readonly outcome: CopyOutcome & { kind: 'differs' }) {
    super('the copy differs from the journal');
  }
}

/**
 * Copies the SQLite journal at `path` (at the latest schema: a command opens it for work
 * first, which brings it up to date) into the database at `url`. `onStart` is told when
 * the database is found empty and the copy begins; `signal` cuts it short, writing nothing.
 * A journal moved already is copied again only to where it was moved.
 */
export async function copyJournal(
  path: string,
  url: string,
  options: {
    now: () => number;
    onStart?: (address: string) => void;
    signal?: AbortSignal;
    chunkRows?: number;
  },
): Promise<CopyOutcome> {
  const address = postgresAddress(url);
  const chunkRows = options.chunkRows ?? CHUNK_ROWS;
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  const pool = poolFor(url, 1);
  pool.on('error', () => undefined);
  let marker: Database | undefined;
  let committing = false;
  try {
    const moved = movedOf(sqlite);
    if (moved && moved.address !== address) throw movedRefusal(path, moved);
    const version = sqlite.pragma('user_version', { simple: true }) as number;
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    if (version !== latest) {
      throw new Unmapped(`the journal ${path} is at schema ${version}, the copy reads ${latest}`);
    }
    const unknown = (
      sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as {
        name: string;
      }[]
    ).filter(({ name }) => !NOT_COPIED.has(name) && !TABLES.some((t) => t.table === name));
    if (unknown.length > 0) {
      throw new Unmapped(`${unknown.map((t) => t.name).join(', ')}: tables the copy does not know`);
    }
    // One snapshot of the file for every read below.
    sqlite.exec('BEGIN');
    return await inTransaction(pool, async (tx) => {
      const taken = await takenTables(tx);
      const schema = await schemaWithin(tx);
      if (taken.length > 0 || (schema !== 0 && schema !== LATEST_POSTGRES_SCHEMA)) {
        return { kind: 'not-empty' as const, address, tables: taken, schema };
      }
      await migrateWithin(tx, address);
      if (!moved) {
        marker = connect(path);
        markMoved(marker, { address, at: options.now() });
      }
      options.onStart?.(address);
      const rows = {} as Record<Copied, number>;
      for (const { table, key } of TABLES) {
        const columns = await columnsOf(tx, sqlite, table);
        rows[table] = await copyTable(tx, sqlite, table, key, columns, chunkRows, options.signal);
      }
      await moveSequences(tx);
      const states = (await tallies<RowState>(tx, sqlite, 'state')).map(({ key, ...both }) => ({
        state: key,
        ...both,
      }));
      const batches = (await tallies<number>(tx, sqlite, 'batch_id')).map(({ key, ...both }) => ({
        batchId: key,
        ...both,
      }));
      const apart = batches.filter((batch) => !same(batch.sqlite, batch.postgres));
      if (apart.length > 0 || states.some((state) => !same(state.sqlite, state.postgres))) {
        throw new Differs({ kind: 'differs', address, states, batches: apart });
      }
      const identity = sqlite.prepare('SELECT journal_id FROM identity WHERE id = 1').get() as
        { journal_id: string } | undefined;
      const highWater = (
        sqlite.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM audit').get() as { id: number }
      ).id;
      // From here a failure may be the commit's own: the database may hold the copy.
      committing = true;
      return {
        kind: 'copied' as const,
        address,
        journalId: identity?.journal_id ?? '',
        highWater,
        rows,
        states,
        batches: batches.length,
      };
    });
  } catch (error) {
    // Rolled back for sure: the home is left as it was, its journal worked with again.
    if (marker && !committing) unmarkMoved(marker);
    if (error instanceof Differs) return error.outcome;
    if (error instanceof Unmapped) throw error;
    throw journalErrorOf(error, address);
  } finally {
    marker?.close();
    sqlite.close();
    await pool.end();
  }
}

const same = (a: Tally, b: Tally): boolean => a.count === b.count && a.cents === b.cents;

/** Every table of the database's own schemas that holds a row, but the schema's version. */
async function takenTables(tx: Runner & { client: pg.PoolClient }): Promise<string[]> {
  const { rows } = await tx.client.query<{ schema: string; name: string }>(
    `SELECT schemaname AS schema, tablename AS name FROM pg_tables
     WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
  );
  const taken: string[] = [];
  for (const { schema, name } of rows) {
    if (schema === 'public' && name === 'schema_version') continue;
    const table = `${quoted(schema)}.${quoted(name)}`;
    const { rows: any } = await tx.client.query(`SELECT 1 FROM ${table} LIMIT 1`);
    if (any.length > 0) taken.push(schema === 'public' ? name : `${schema}.${name}`);
  }
  return taken;
}

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * PostgreSQL's columns of `table`, with whether each is boolean (SQLite keeps 0 or 1);
 * a column of SQLite without a twin there is a schema this copy would lose a fact of.
 */
async function columnsOf(
  tx: Runner & { client: pg.PoolClient },
  sqlite: Database,
  table: Copied,
): Promise<{ name: string; boolean: boolean }[]> {
  const { rows } = await tx.client.query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  const twins = new Set(rows.map((row) => row.name));
  const lost = (sqlite.pragma(`table_info(${table})`) as { name: string }[])
    .map((column) => column.name)
    .filter((name) => !twins.has(name) && !KEPT_IN_OTHERS.has(`${table}.${name}`));
  if (lost.length > 0) {
    throw new Unmapped(`${table}.${lost.join(', ')}: no column of the PostgreSQL journal keeps it`);
  }
  return rows.map((row) => ({ name: row.name, boolean: row.type === 'boolean' }));
}

/** Copies `table` a chunk at a time, in the order of its key; the rows copied. */
async function copyTable(
  tx: Runner & { client: pg.PoolClient },
  sqlite: Database,
  table: Copied,
  key: readonly string[],
  columns: readonly { name: string; boolean: boolean }[],
  chunkRows: number,
  signal: AbortSignal | undefined,
): Promise<number> {
  const names = columns.map((column) => column.name);
  const list = names.join(', ');
  const order = key.join(', ');
  const first = sqlite.prepare(`SELECT ${list} FROM ${table} ORDER BY ${order} LIMIT ?`).raw();
  const after = sqlite
    .prepare(
      `SELECT ${list} FROM ${table} WHERE (${order}) > (${key.map(() => '?').join(', ')})
       ORDER BY ${order} LIMIT ?`,
    )
    .raw();
  const at = key.map((name) => names.indexOf(name));
  let copied = 0;
  let last: unknown[] | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const chunk = (
      last === undefined
        ? first.all(chunkRows)
        : after.all(...at.map((index) => last?.[index]), chunkRows)
    ) as unknown[][];
    if (chunk.length === 0) return copied;
    const values = chunk.flatMap((row) =>
      row.map((value, index) => (columns[index]?.boolean && value !== null ? value === 1 : value)),
    );
    const tuples = chunk.map(
      (_, row) =>
        `(${names.map((__, column) => `$${row * names.length + column + 1}`).join(', ')})`,
    );
    await tx.client.query(`INSERT INTO ${table} (${list}) VALUES ${tuples.join(', ')}`, values);
    failpoint('copying-chunk');
    copied += chunk.length;
    last = chunk.at(-1);
  }
}

/**
 * Each id sequence past the ids copied, and the claim epochs past every fence: a new
 * batch, payout, audit entry or event follows the copied ones, and a row's fence only grows.
 */
async function moveSequences(tx: Runner & { client: pg.PoolClient }): Promise<void> {
  for (const table of ['batches', 'payouts', 'audit', 'batch_events']) {
    await tx.client.query(
      `SELECT setval(pg_get_serial_sequence('${table}', 'id'), COALESCE(MAX(id), 0) + 1, false)
       FROM ${table}`,
    );
  }
  await tx.client.query(
    `SELECT setval('claim_epochs', COALESCE(MAX(fence), 0) + 1, false) FROM payouts`,
  );
}

interface TallyRow {
  count: number;
  cents: number | null;
}

const tallyOf = (row: TallyRow | undefined): Tally => ({
  count: Number(row?.count ?? 0),
  cents: Number(row?.cents ?? 0),
});

/** Payouts' rows and sums by `column` on both sides; a key one side lacks counts none there. */
async function tallies<K extends string | number>(
  tx: Runner & { client: pg.PoolClient },
  sqlite: Database,
  column: 'state' | 'batch_id',
): Promise<{ key: K; sqlite: Tally; postgres: Tally }[]> {
  const query = `SELECT ${column} AS key, COUNT(*) AS count, SUM(value_cents) AS cents
    FROM payouts GROUP BY ${column} ORDER BY ${column}`;
  const left = sqlite.prepare(query).all() as (TallyRow & { key: K })[];
  const right = (await tx.client.query<TallyRow & { key: K }>(query)).rows;
  const [lefts, rights] = [left, right].map((rows) => new Map(rows.map((row) => [row.key, row])));
  const keys = [...new Set([...left, ...right].map((row) => row.key))];
  return keys.map((key) => ({
    key,
    sqlite: tallyOf(lefts?.get(key)),
    postgres: tallyOf(rights?.get(key)),
  }));
}
