/**
 * Opens the PostgreSQL journal: one database that several hosts share, reached through a
 * pool. It is brought up to date under an advisory lock (two hosts starting at once
 * migrate once), refused when a newer payouts wrote it, and given an identity once.
 *
 * What it keeps so far: the journal as a store, batches as recorded, admission, claims,
 * answers, claims given back, retries, recovery after a loss, locks and the reports. The
 * members not kept yet refuse (a JournalError 'refused' naming them): the conformance
 * suite lists them (test/journal/journal.test.ts), so the list shows what is left.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { canMoveBatch } from '../batch-states.js';
import { JournalError } from '../journal-error.js';
import type { Journal, JournalDescription } from '../journal.js';
import type { GatewayKind, JournalIdentity, JournalState, LockHolder } from '../types.js';
import { postgresAddress } from '../location.js';
import type { RowState } from '../states.js';
import { inTransaction, onPool, poolFor, type Runner } from './connection.js';
import { listenTo, POSTBACK_CHANNEL, QUEUED_CHANNEL, type Heard } from './listen.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { createBatches } from './batches.js';
import { createLimits } from './limits.js';
import { createPayouts } from './payouts.js';
import { createClaims } from './claims.js';
import { createReports } from './reports.js';
import { createRetries } from './retries.js';
import { reasonOf, toBatch } from '../sqlite/context.js';
import { rowsOn } from './rows.js';
import { AT, CLUSTER_NOW, statement } from './sql.js';
import { journalErrorOf } from './store-errors.js';
import { clockReading } from '../clock-skew.js';

/** The schema version this payouts writes. */
export const LATEST_POSTGRES_SCHEMA = POSTGRES_MIGRATIONS.at(-1)?.version ?? 0;

/** Where a PostgreSQL journal is: its database's URL (`postgres://host/db`). */
export interface PostgresLocation {
  kind: 'postgres';
  url: string;
}

export interface PostgresJournalOptions {
  /**
   * The business's clock, in milliseconds since the epoch (a command's, which tests move):
   * given, it dates every record; absent, the database's `now()` does. Leases and the home
   * lock's heartbeats are the database's `now()` whatever is given: one clock for every host.
   */
  now?: () => number;
  /** Requests in flight at once: the pool is sized from it. */
  concurrency?: number;
  /** Told the high-water mark after each commit that claims rows to send (the marker). */
  onSending?: (highWater: number) => Promise<void>;
}

const statements = {
  // One key for the journal's schema: hosts starting at once migrate one after another.
  migrationLock: statement('migration-lock', `SELECT pg_advisory_xact_lock(31, 0)`),
  schemaKept: statement('schema-kept', `SELECT to_regclass('schema_version') IS NOT NULL AS kept`),
  schemaVersion: statement('schema-version', `SELECT version FROM schema_version WHERE id = 1`),
  identity: statement('identity', `SELECT * FROM identity WHERE id = 1`),
  makeIdentity: statement<{ journalId: string; now: number | null }>(
    'make-identity',
    `INSERT INTO identity (id, journal_id, created_at) VALUES (1, @journalId, ${AT})
     ON CONFLICT (id) DO NOTHING`,
  ),
  highWater: statement('high-water', `SELECT COALESCE(MAX(id), 0) AS id FROM audit`),
  latestAt: statement('latest-at', `SELECT at FROM audit ORDER BY id DESC LIMIT 1`),
  startRecovery: statement<{ now: number | null; reason: string }>(
    'start-recovery',
    `UPDATE identity SET recovery_since = ${AT}, recovery_reason = @reason WHERE id = 1
     RETURNING recovery_since`,
  ),
  bindGateway: statement<{ kind: GatewayKind }>(
    'bind-gateway',
    `INSERT INTO gateway (id, kind) VALUES (1, @kind) ON CONFLICT (id) DO NOTHING`,
  ),
  boundGateway: statement('bound-gateway', `SELECT kind FROM gateway WHERE id = 1`),
  serverVersion: statement('server-version', `SHOW server_version`),
  history: statement<{ orderId: string }>(
    'history',
    `SELECT a.at, a.from_state, a.to_state, a.reason FROM audit a
     JOIN payouts p ON p.id = a.payout_id WHERE p.order_id = @orderId ORDER BY a.id`,
  ),
  // COUNT is bigint and SUM of bigint numeric in PostgreSQL: both read back as numbers.
  countsByState: statement(
    'counts-by-state',
    `SELECT state, COUNT(*)::bigint AS count, SUM(value_cents)::bigint AS cents
     FROM payouts GROUP BY state`,
  ),
  countsOfStates: statement<{ states: string[] }>(
    'counts-of-states',
    `SELECT state, COUNT(*)::bigint AS count, SUM(value_cents)::bigint AS cents
     FROM payouts WHERE state = ANY(@states::text[]) GROUP BY state`,
  ),
  lock: statement<{ name: string }>('lock', `SELECT * FROM locks WHERE name = @name FOR UPDATE`),
  // Two hosts taking a free lock at once: the key's row is locked while it is decided.
  lockKey: statement<{ name: string }>(
    'lock-key',
    `SELECT pg_advisory_xact_lock(31, hashtext(@name))`,
  ),
  setLock: statement<{
    name: string;
    holder: string;
    host: string;
    pid: number;
    command: string;
    now: number | null;
  }>(
    'set-lock',
    `INSERT INTO locks (name, holder, host, pid, command, since, heartbeat_at)
     VALUES (@name, @holder, @host, @pid, @command, ${AT}, ${CLUSTER_NOW})
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, host = excluded.host,
       pid = excluded.pid, command = excluded.command, since = excluded.since,
       heartbeat_at = excluded.heartbeat_at`,
  ),
  staleBefore: statement<{ staleMs: number }>(
    'stale-before',
    `SELECT ${CLUSTER_NOW} - @staleMs AS at`,
  ),
  // The holder's host seen in the same statement: a renewal is a sight of it.
  renewLock: statement<{ name: string; holder: string }>(
    'renew-lock',
    `WITH renewed AS (
       UPDATE locks SET heartbeat_at = ${CLUSTER_NOW} WHERE name = @name AND holder = @holder
       RETURNING host, heartbeat_at)
     INSERT INTO hosts (name, seen_at) SELECT host, heartbeat_at FROM renewed
     ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at`,
  ),
  seeHost: statement<{ host: string }>(
    'see-host',
    `INSERT INTO hosts (name, seen_at) VALUES (@host, ${CLUSTER_NOW})
     ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at`,
  ),
  // Hosts and leases are seen by the database's clock, as they are judged.
  clock: statement('clock', `SELECT ${CLUSTER_NOW} AS at`),
  // The moment the statement runs, not its transaction's start: a host's clock is measured by it.
  clockNow: statement(
    'clock-now',
    `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS at`,
  ),
  seeHostClock: statement<{ host: string; offsetMs: number | null; roundTripMs: number }>(
    'see-host-clock',
    `INSERT INTO hosts (name, seen_at, clock_offset_ms, clock_round_trip_ms)
     VALUES (@host, ${CLUSTER_NOW}, @offsetMs, @roundTripMs)
     ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at,
       clock_offset_ms = excluded.clock_offset_ms,
       clock_round_trip_ms = excluded.clock_round_trip_ms`,
  ),
  hostsSince: statement<{ now: number | null; withinMs: number }>(
    'hosts-since',
    `SELECT name AS host, seen_at, clock_offset_ms, clock_round_trip_ms FROM hosts
     WHERE seen_at >= ${AT} - @withinMs`,
  ),
  lockHolders: statement('lock-holders', `SELECT name, holder, host, heartbeat_at FROM locks`),
  // Read for doctor only: a scan of the payouts, not of an index kept on every claim.
  liveLeases: statement<{ now: number | null }>(
    'live-leases',
    `SELECT lease_owner AS owner, COUNT(*)::bigint AS leased, MAX(lease_until) AS until
     FROM payouts WHERE lease_owner IS NOT NULL AND lease_until > ${AT} GROUP BY lease_owner`,
  ),
  releaseLock: statement<{ name: string; holder: string }>(
    'release-lock',
    `DELETE FROM locks WHERE name = @name AND holder = @holder`,
  ),
};

async function migrate(pool: pg.Pool, address: string): Promise<number> {
  await inTransaction(pool, (tx) => migrateWithin(tx, address));
  return LATEST_POSTGRES_SCHEMA;
}

/**
 * Brings the schema up to date inside the caller's transaction, under the migrations' lock
 * (held until it ends): a newer schema refused. A copy creates the schema and fills it in
 * one transaction this way.
 */
export async function migrateWithin(
  tx: Runner & { client: pg.PoolClient },
  address: string,
): Promise<void> {
  const version = await schemaWithin(tx);
  if (version > LATEST_POSTGRES_SCHEMA) throw newerSchema(address, version);
  for (const migration of POSTGRES_MIGRATIONS.filter((m) => m.version > version)) {
    await tx.client.query(migration.sql);
    await tx.client.query('UPDATE schema_version SET version = $1 WHERE id = 1', [
      migration.version,
    ]);
  }
}

/** The schema version of the database (0: no journal's schema), read under the migrations' lock. */
export async function schemaWithin(tx: Runner): Promise<number> {
  await tx.rows(statements.migrationLock, {});
  return schemaOf(tx);
}

function newerSchema(address: string, found: number): JournalError {
  return new JournalError(
    'newer-schema',
    `the journal ${address} is at schema version ${found}, newer than this program knows (${LATEST_POSTGRES_SCHEMA}): use a newer payouts (payouts --version says which this is). Nothing was sent`,
    { path: address, schema: { found, latest: LATEST_POSTGRES_SCHEMA } },
  );
}

/** The schema version the database holds, 0 for none (a database payouts never opened). */
async function schemaOf(runner: Runner): Promise<number> {
  const [{ kept } = { kept: false }] = await runner.rows<{ kept: boolean }, object>(
    statements.schemaKept,
    {},
  );
  if (!kept) return 0;
  const [{ version } = { version: 0 }] = await runner.rows<{ version: number }, object>(
    statements.schemaVersion,
    {},
  );
  return version;
}

/**
 * Whether the database holds a journal, read without writing: none (no schema), empty
 * (a schema without an identity, as a failed restore leaves it), or one.
 */
export async function postgresJournalState(location: PostgresLocation): Promise<JournalState> {
  const address = postgresAddress(location.url);
  const pool = poolFor(location.url, 1, { readOnly: true });
  pool.on('error', () => undefined);
  try {
    const pooled = onPool(pool);
    if ((await schemaOf(pooled)) === 0) return 'absent';
    const identity = await pooled.rows(statements.identity, {});
    return identity.length === 0 ? 'empty' : 'present';
  } catch (error) {
    const failure = journalErrorOf(error, address);
    if (failure.kind === 'missing') return 'no-store';
    throw failure;
  } finally {
    await pool.end();
  }
}

/** Each method of `journal` failing as the JournalError of its kind (store-errors.ts). */
function answering(journal: Journal, address: string): Journal {
  const entries = Object.entries(journal).map(([name, value]: [string, unknown]) => [
    name,
    typeof value === 'function'
      ? async (...args: unknown[]): Promise<unknown> => {
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>)(...args);
          } catch (error) {
            throw journalErrorOf(error, address);
          }
        }
      : value,
  ]);
  return Object.fromEntries(entries) as Journal;
}

export function openPostgresJournal(
  location: PostgresLocation,
  options: PostgresJournalOptions = {},
): Promise<Journal> {
  return openOn(location, options, false);
}

/**
 * The journal in the database read only (status, doctor, a dry run): nothing is made,
 * migrated or written (every transaction is read only, so a write fails on the server).
 */
export function openPostgresJournalReadOnly(location: PostgresLocation): Promise<Journal> {
  return openOn(location, {}, true);
}

async function openOn(
  location: PostgresLocation,
  options: PostgresJournalOptions,
  readOnly: boolean,
): Promise<Journal> {
  const address = postgresAddress(location.url);
  const pool = poolFor(location.url, options.concurrency ?? 1, { readOnly });
  // A connection lost while idle in the pool is the pool's to replace, not the process's end.
  pool.on('error', () => undefined);
  const clock = (): number | null => options.now?.() ?? null;
  const pooled = onPool(pool);
  let schema: number;
  try {
    if (readOnly) {
      schema = await schemaOf(pooled);
      if (schema > LATEST_POSTGRES_SCHEMA) throw newerSchema(address, schema);
    } else {
      schema = await migrate(pool, address);
      await pooled.count(statements.makeIdentity, { journalId: randomUUID(), now: clock() });
    }
  } catch (error) {
    await pool.end();
    throw journalErrorOf(error, address);
  }
  const one = async <R>(sql: Parameters<Runner['rows']>[0], params: object) =>
    (await pooled.rows<R, object>(sql, params))[0];

  const identity = async (): Promise<JournalIdentity | undefined> => {
    const row = await one<{
      journal_id: string;
      created_at: number;
      recovery_since: number | null;
      recovery_reason: string | null;
    }>(statements.identity, {});
    return (
      row && {
        journalId: row.journal_id,
        createdAt: row.created_at,
        recoverySince: row.recovery_since,
        recoveryReason: row.recovery_reason,
      }
    );
  };

  // What requests must wait for: the marker saying what the last sending commit wrote.
  let sendingSaved: Promise<void> = Promise.resolve();
  const committed = (): void => {
    const { onSending } = options;
    if (!onSending) return;
    sendingSaved = one<{ id: number }>(statements.highWater, {}).then((row) =>
      onSending(row?.id ?? 0),
    );
    // A failed write reaches the requests that wait for it; meanwhile it must not end the process.
    sendingSaved.catch(() => undefined);
  };
  const payouts = createPayouts(pool, pooled, clock);
  const listening = new Set<() => Promise<void>>();
  /** Listens on `channel` until the stop it gives, or the journal's close. */
  const listen = async (channel: string, heard: Heard): Promise<() => Promise<void>> => {
    const stop = await listenTo(location.url, channel, heard);
    const stopOnce = async (): Promise<void> => {
      if (listening.delete(stopOnce)) await stop();
    };
    listening.add(stopOnce);
    return stopOnce;
  };

  const journal: Journal = {
    path: address,
    describe: async (): Promise<JournalDescription> => {
      const version = await one<{ server_version: string }>(statements.serverVersion, {});
      return {
        kind: 'postgres',
        address,
        store: `PostgreSQL ${version?.server_version ?? ''} through node-postgres`,
        schema,
        latestSchema: LATEST_POSTGRES_SCHEMA,
      };
    },
    identity,
    highWater: async () => (await one<{ id: number }>(statements.highWater, {}))?.id ?? 0,
    latestAt: async () => (await one<{ at: number }>(statements.latestAt, {}))?.at,
    startRecovery: async (reason) => {
      await pooled.count(statements.startRecovery, { now: clock(), reason });
    },
    sendable: () => sendingSaved,
    bindGateway: async (kind) => {
      await pooled.count(statements.bindGateway, { kind });
      return (await one<{ kind: GatewayKind }>(statements.boundGateway, {}))?.kind ?? kind;
    },
    gatewayKind: async () => (await one<{ kind: GatewayKind }>(statements.boundGateway, {}))?.kind,
    close: async () => {
      await Promise.all([...listening].map((stop) => stop()));
      if (!pool.ended) await pool.end();
    },

    history: async (orderId) =>
      (
        await pooled.rows<
          { at: number; from_state: RowState | null; to_state: RowState; reason: string },
          { orderId: string }
        >(statements.history, { orderId })
      ).map((row) => ({
        at: row.at,
        from: row.from_state,
        to: row.to_state,
        reason: reasonOf(row.reason),
      })),

    countsByState: async (states) =>
      Object.fromEntries(
        (states === undefined
          ? await pooled.rows<{ state: RowState; count: number; cents: number }, object>(
              statements.countsByState,
              {},
            )
          : await pooled.rows<
              { state: RowState; count: number; cents: number },
              { states: string[] }
            >(statements.countsOfStates, { states: [...states] })
        ).map((row) => [row.state, { count: row.count, cents: row.cents }]),
      ),

    takeLock: (name, me, staleMs, isRunning) =>
      inTransaction(pool, async (tx) => {
        await tx.rows(statements.lockKey, { name });
        await tx.count(statements.seeHost, { host: me.host });
        const [row] = await tx.rows<
          {
            holder: string;
            host: string;
            pid: number;
            command: string | null;
            since: number;
            heartbeat_at: number;
          },
          { name: string }
        >(statements.lock, { name });
        const [stale] = await tx.rows<{ at: number }, { staleMs: number }>(statements.staleBefore, {
          staleMs,
        });
        const gone =
          !row ||
          row.heartbeat_at <= (stale?.at ?? 0) ||
          (row.host === me.host && !isRunning(row.pid));
        if (!gone) {
          const heldBy: LockHolder = {
            holder: row.holder,
            host: row.host,
            pid: row.pid,
            command: row.command,
            since: row.since,
            heartbeatAt: row.heartbeat_at,
          };
          return { taken: false as const, heldBy };
        }
        await tx.count(statements.setLock, { name, ...me, now: clock() });
        return { taken: true as const };
      }),
    renewLock: async (name, holder) =>
      (await pooled.count(statements.renewLock, { name, holder })) === 1,
    releaseLock: async (name, holder) => {
      await pooled.count(statements.releaseLock, { name, holder });
    },
    hostsSeen: async (withinMs) => {
      const [{ at } = { at: 0 }] = await pooled.rows<{ at: number }, object>(statements.clock, {});
      const hosts = await pooled.rows<
        {
          host: string;
          seen_at: number;
          clock_offset_ms: number | null;
          clock_round_trip_ms: number | null;
        },
        { now: number; withinMs: number }
      >(statements.hostsSince, { now: at, withinMs });
      const locks = await pooled.rows<
        { name: string; holder: string; host: string; heartbeat_at: number },
        object
      >(statements.lockHolders, {});
      const leases = await pooled.rows<
        { owner: string; leased: number; until: number },
        { now: number }
      >(statements.liveLeases, { now: at });
      return {
        now: at,
        hosts: hosts.map((row) => ({
          host: row.host,
          seenAt: row.seen_at,
          clockOffsetMs: row.clock_offset_ms,
          clockRoundTripMs: row.clock_round_trip_ms,
        })),
        locks: locks.map((row) => ({
          name: row.name,
          holder: row.holder,
          host: row.host,
          heartbeatAt: row.heartbeat_at,
        })),
        leases: leases.map(({ owner, leased, until }) => ({ owner, rows: leased, until })),
      };
    },

    clockOffset: async (host, now, boundMs) => {
      const sentMs = now();
      const [{ at } = { at: 0 }] = await pooled.rows<{ at: number }, object>(
        statements.clockNow,
        {},
      );
      const answeredMs = now();
      const reading = clockReading(sentMs, at, answeredMs, boundMs);
      // A reading that cannot tell replaces the last offset: doctor must not show a stale one.
      await pooled.count(statements.seeHostClock, {
        host,
        offsetMs: 'offsetMs' in reading ? reading.offsetMs : null,
        roundTripMs: Math.round(answeredMs - sentMs),
      });
      return reading;
    },

    ...payouts,
    claimToSend: async (...args) => {
      const claims = await payouts.claimToSend(...args);
      if (claims.length > 0) committed();
      return claims;
    },
    markResending: async (...args) => {
      const changed = await payouts.markResending(...args);
      if (changed) committed();
      return changed;
    },
    onPollNow: (woken) =>
      listen(POSTBACK_CHANNEL, {
        payload: (orderId) => woken(orderId),
        again: () => woken(),
      }),
    onRowsQueued: (woken) => listen(QUEUED_CHANNEL, { payload: () => woken(), again: woken }),
    ...createBatches(pool, pooled, clock),
    ...createRetries(pool, pooled, clock),
    ...createLimits(pooled),
    ...createReports(pooled),
    ...createClaims(pool, pooled, clock),
  };
  return answering(journal, address);
}
