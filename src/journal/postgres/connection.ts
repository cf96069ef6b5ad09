/**
 * The PostgreSQL journal's connections: one pool, sized from `concurrency`, every session
 * bounded on the server (a statement, a transaction left idle) and on this side (a
 * connect, a statement's answer), bigint read as a number (times in
 * milliseconds and ids stay far below 2^53), and transactions that give their connection
 * back whatever happens.
 */
import pg from 'pg';
import { valuesOf, type Statement } from './sql.js';

/** A statement that runs longer is cancelled: the journal is then unavailable, not stuck. */
export const STATEMENT_TIMEOUT_MS = 30_000;
/** A transaction its process stopped answering (paused, cut off) gives its locks back. */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;
/**
 * The server's bounds never reach it across a network that stops answering (a cut cable,
 * a firewall dropping packets, a frozen server): the client's own bounds end the wait
 * long before TCP's would (minutes to hours). A connection is made in milliseconds when the
 * server answers at all.
 */
const CONNECT_TIMEOUT_MS = 10_000;
/** Beyond the statement's own bound, so that a server that answers cancels it first. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5_000;
/** An idle connection whose peer is gone is found by TCP's probes from this long on. */
const KEEPALIVE_IDLE_MS = 10_000;

/**
 * What node-postgres says of its own time-outs, which carry no code (the one place their
 * words are read): what each means, with its figure.
 */
const TIMEOUTS: ReadonlyMap<string, string> = new Map([
  ['timeout expired', `no answer from the server within ${CONNECT_TIMEOUT_MS / 1000} s`],
  ['Query read timeout', `no answer from the server within ${QUERY_TIMEOUT_MS / 1000} s`],
]);

/** What a time-out of the client meant, or undefined when `error` is none. */
export function timeoutOf(error: unknown): string | undefined {
  return error instanceof Error && !('code' in error) ? TIMEOUTS.get(error.message) : undefined;
}

/**
 * A connection bounded on this side: made within CONNECT_TIMEOUT_MS, each statement
 * answered within QUERY_TIMEOUT_MS, probed when idle. The pool makes its connections so:
 * given to the pool itself, the connect bound would also end a wait for a free
 * connection, which is no sign of a cut.
 */
export class BoundedClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super({
      ...config,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    });
  }
}

const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary'
      ? (text: string) => Number(text)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A pool for `concurrency` requests in flight: their answers are written in groups, so a
 * few connections serve them, plus one for claims and one for everything else.
 */
export function poolFor(
  url: string,
  concurrency: number,
  { readOnly = false }: { readOnly?: boolean } = {},
): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    // Read only, every transaction refuses a write on the server itself.
    ...(readOnly && { options: '-c default_transaction_read_only=on' }),
    max: Math.max(2, Math.ceil(concurrency / 8) + 2),
    statement_timeout: STATEMENT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    Client: BoundedClient,
    types,
  });
}

/** Something statements run on: the pool (each its own transaction) or one transaction. */
export interface Runner {
  rows<R, P extends object>(sql: Statement<P>, params: P): Promise<R[]>;
  /** How many rows the statement changed. */
  count<P extends object>(sql: Statement<P>, params: P): Promise<number>;
}

const send = <P extends object>(
  client: pg.Pool | pg.PoolClient,
  sql: Statement<P>,
  params: P,
): Promise<pg.QueryResult> =>
  client.query({ name: sql.name, text: sql.text, values: valuesOf(sql, params) });

function runnerWith(
  run: <P extends object>(sql: Statement<P>, params: P) => Promise<pg.QueryResult>,
): Runner {
  return {
    rows: async <R, P extends object>(sql: Statement<P>, params: P) =>
      (await run(sql, params)).rows as R[],
    count: async (sql, params) => (await run(sql, params)).rowCount ?? 0,
  };
}

/**
 * A transaction's runner: its connection runs one query at a time, so a second one while
 * the first runs is a bug (node-postgres would queue it, deprecated), refused unsent.
 */
function serialOn(client: pg.PoolClient): Runner {
  let running: string | undefined;
  return runnerWith(async (sql, params) => {
    if (running !== undefined)
      throw new Error(
        `query ${sql.name} sent on a transaction's connection still running ${running}`,
      );
    running = sql.name;
    try {
      return await send(client, sql, params);
    } finally {
      running = undefined;
    }
  });
}

export const onPool = (pool: pg.Pool): Runner =>
  runnerWith((sql, params) => send(pool, sql, params));

/**
 * `work` in one transaction on a connection of its own: committed when it resolves,
 * rolled back when it throws (so a call that fails writes nothing).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (tx: Runner & { client: pg.PoolClient }) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  // Lost while checked out (a restart, a cut), it fails the statement on it; unheard, the
  // error event would end the process.
  const lost = (error: Error) => (broken = error);
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const result = await work({ ...serialOn(client), client });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A statement left unanswered holds its connection: a rollback would wait behind it.
    // Ended instead, the server rolls back (at once, or when the session's bounds end it).
    if (timeoutOf(error) !== undefined) broken = error;
    else {
      try {
        await client.query('ROLLBACK');
      } catch (rollback) {
        // A connection that cannot roll back is not given back to the pool.
        broken = rollback;
      }
    }
    throw error;
  } finally {
    client.off('error', lost);
    client.release(broken instanceof Error ? broken : undefined);
  }
}
