/**
 * Opens the SQLite journal: a file (WAL, synchronous=FULL) that holds every orderId once
 * and every move of every payout. Rows are claimed inside BEGIN IMMEDIATE with a lease
 * and a fencing token, so two processes on one home folder never send the same row, and
 * a process whose lease was taken over can write nothing more for that row.
 *
 * One prepared statement per query, typed by its row; every state change is guarded by
 * the row's fence and current state, checked against the transition table, and audited.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { JournalError } from '../journal-error.js';
import type { Journal } from '../journal.js';
import { MIGRATIONS } from '../migrations.js';
import { Database, JOURNAL_STORE } from '../sqlite.js';
import { BUSY_WAIT_MS, connect } from './connection.js';
import type { GatewayKind, JournalIdentity, JournalState } from '../types.js';
import { createBatches } from './batches.js';
import { contextOf, type Synchronous } from './context.js';
import { createCorrections } from './corrections.js';
import { createLimits } from './limits.js';
import { createLocks } from './locks.js';
import { createPayouts } from './payouts.js';
import { createReports } from './reports.js';
import { createRows } from './rows.js';
import { sendingThread } from './sending-thread.js';
import { movedOf, movedRefusal, type Moved } from './moved.js';
import { asJournal, journalErrorOf } from './store-errors.js';

// statfs magic numbers of filesystems that share one file between hosts: SQLite's
// locks are not to be trusted there (NFS, SMB/CIFS, FUSE mounts such as sshfs, 9P).
const NETWORK_FILESYSTEMS = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997,
]);

/** The schema version this payouts writes. */
const LATEST = MIGRATIONS.at(-1)?.version ?? 0;

export interface JournalOptions {
  /** Milliseconds since the epoch; injected by tests. */
  now?: () => number;
  /**
   * Told the highest audit id after each commit before which requests leave (claims,
   * re-sends); requests wait for what it returns (see `sendable`). The journal's marker.
   */
  onSending?: (highWater: number) => Promise<void>;
  /** Opened by journal copy: a journal marked moved opens still, so a copy cut short is made again. */
  copying?: boolean;
}

export function openSqliteJournal(path: string, options: JournalOptions = {}): Journal {
  const now = options.now ?? Date.now;
  const folder = dirname(path);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const { type } = statfsSync(folder);
  if (NETWORK_FILESYSTEMS.has(type)) {
    const fsType = `0x${type.toString(16)}`;
    throw new JournalError('refused', `network filesystem ${fsType}`, {
      path,
      refusal: { code: 'journalOnNetworkFilesystem', folder, fsType },
    });
  }
  // Created owner-only before SQLite opens it; its -wal and -shm files take the same mode.
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);

  const db = asJournal(path, () => connect(path));
  try {
    // Before anything is written: a moved journal is left exactly as the copy saw it.
    const moved = movedOf(db);
    if (moved && !options.copying) throw movedRefusal(path, moved);
    migrate(db);
    // A random identity, made once: a journal from elsewhere (or a new one) has another.
    db.prepare<[string, number]>(
      `INSERT OR IGNORE INTO identity (id, journal_id, created_at) VALUES (1, ?, ?)`,
    ).run(randomUUID(), now());
  } catch (error) {
    db.close();
    throw journalErrorOf(error, path);
  }
  const { journal, recoverySince, sending } = journalOn(db, path, now, LATEST, options);
  // The sending path's writes, committed on a thread of their own (see sending-thread.ts).
  const thread = sendingThread(path, now, recoverySince);
  // Whether any open batch has a queued row: none, and a claim has nothing to take.
  const anyToSend = db.prepare<[], 1>(`
    SELECT 1 FROM batches b WHERE b.state = 'open'
      AND EXISTS (SELECT 1 FROM payouts p WHERE p.state = 'queued' AND p.batch_id = b.id)`);
  return {
    ...answering(journal, path),
    claimToSend: async (...args) => {
      // Without answers to write, the thread (a heap of its own) waits for a row to claim:
      // a run whose files all wait for approval never starts it.
      if ((args[4]?.length ?? 0) === 0 && anyToSend.get() === undefined) return [];
      const claims = await thread.call('claimToSend', args);
      if (claims.length > 0) sending.committed();
      return claims;
    },
    moveMany: (...args) => thread.call('moveMany', args),
    unclaim: (...args) => thread.call('unclaim', args),
    close: async () => {
      try {
        await thread.close();
      } finally {
        db.close();
      }
    },
  };
}

/**
 * A journal file opened for reading only (the journal's own, or its view: see view.ts),
 * for `status`, `run --dry-run`, `doctor` and `validate`: nothing is made, migrated or
 * written, and a method that writes fails (SQLITE_READONLY). A journal of an older schema
 * is read from a copy in memory brought up to date, the file left for a run to migrate.
 */
export function openSqliteJournalReadOnly(path: string, now: () => number): Journal {
  const file = reading(path);
  let db = file;
  let schema: number;
  try {
    schema = file.pragma('user_version', { simple: true }) as number;
    if (schema > LATEST) throw newerSchema(path, schema);
    if (schema < LATEST) {
      const image = file.serialize();
      // Bytes 18 and 19 say WAL: a copy in memory has no -wal, and reads as a rollback journal.
      image[18] = 1;
      image[19] = 1;
      db = new Database(image);
      file.close();
      migrate(db);
      db.pragma('query_only = ON');
    }
  } catch (error) {
    if (file.open) file.close();
    if (db.open) db.close();
    throw journalErrorOf(error, path);
  }
  return answering(journalOn(db, path, now, schema, {}).journal, path);
}

/**
 * Whether the file holds a journal, read without writing or leaving a file beside it (see
 * openSqliteJournalReadOnly): none, or empty (0 bytes, or a database no migration ever
 * committed to: schema version 0), or one.
 */
export function sqliteJournalState(path: string): JournalState {
  const size = statSync(path, { throwIfNoEntry: false })?.size;
  if (size === undefined) return 'absent';
  if (size === 0) return 'empty';
  const file = reading(path);
  try {
    return file.pragma('user_version', { simple: true }) === 0 ? 'empty' : 'present';
  } catch (error) {
    throw journalErrorOf(error, path);
  } finally {
    file.close();
  }
}

/** Where journal copy moved the journal in the file, read without writing; undefined if not. */
export function sqliteJournalMoved(path: string): Moved | undefined {
  if (sqliteJournalState(path) !== 'present') return undefined;
  const file = reading(path);
  try {
    return movedOf(file);
  } catch (error) {
    throw journalErrorOf(error, path);
  } finally {
    file.close();
  }
}

/**
 * A connection that reads the file and refuses writes. Opened as SQLite opens a file it
 * may write: a read-only connection cannot remove the -wal and -shm files it makes beside
 * a WAL journal, and would leave them behind (root's, after a look as root); this one,
 * the last to close, removes them.
 */
function reading(path: string): Database {
  const db = asJournal(
    path,
    () => new Database(path, { fileMustExist: true, timeout: BUSY_WAIT_MS }),
  );
  try {
    db.pragma('query_only = ON');
  } catch (error) {
    db.close();
    throw journalErrorOf(error, path);
  }
  return db;
}

/** The SQLite journal on an open database, but for its sending thread. */
function journalOn(
  db: Database,
  path: string,
  now: () => number,
  schema: number,
  { onSending, copying = false }: JournalOptions,
) {
  const context = contextOf(db, now);
  const { writing } = context;
  const statements = {
    identity: db.prepare<
      [],
      {
        journal_id: string;
        created_at: number;
        recovery_since: number | null;
        recovery_reason: string | null;
      }
    >(`SELECT * FROM identity WHERE id = 1`),
    startRecovery: db.prepare<{ now: number; reason: string }>(
      `UPDATE identity SET recovery_since = @now, recovery_reason = @reason WHERE id = 1`,
    ),
    highWater: db.prepare<[], { id: number }>(`SELECT COALESCE(MAX(id), 0) AS id FROM audit`),
    latestAt: db.prepare<[], { at: number }>(`SELECT at FROM audit ORDER BY id DESC LIMIT 1`),
    bindGateway: db.prepare<[GatewayKind]>(
      `INSERT OR IGNORE INTO gateway (id, kind) VALUES (1, ?)`,
    ),
    boundGateway: db.prepare<[], { kind: GatewayKind }>(`SELECT kind FROM gateway WHERE id = 1`),
  };

  const identity = (): JournalIdentity | undefined => {
    const row = statements.identity.get();
    return (
      row && {
        journalId: row.journal_id,
        createdAt: row.created_at,
        recoverySince: row.recovery_since,
        recoveryReason: row.recovery_reason,
      }
    );
  };
  let recoverySince = identity()?.recoverySince ?? null;
  const highWater = (): number => statements.highWater.get()?.id ?? 0;
  // What requests must wait for: the marker saying what the last sending commit wrote.
  let sendingSaved: Promise<void> = Promise.resolve();
  const sending = {
    recoverySince: () => recoverySince,
    committed: (): void => {
      if (!onSending) return;
      sendingSaved = onSending(highWater());
      // A failed write reaches the requests that wait for it; rows claimed ahead may wait
      // for it later, or be given back unsent: meanwhile it must not end the process.
      sendingSaved.catch(() => undefined);
    },
  };

  const rows = createRows(context);
  const corrections = createCorrections(context, rows);
  const journal: SqliteJournal = {
    path,
    describe: () => ({
      kind: 'sqlite',
      address: path,
      store: JOURNAL_STORE,
      schema,
      latestSchema: LATEST,
    }),
    identity,
    highWater,
    latestAt: () => statements.latestAt.get()?.at,
    startRecovery: writing((reason: string): void => {
      const at = now();
      statements.startRecovery.run({ now: at, reason });
      recoverySince = at;
    }),
    sendable: () => sendingSaved,
    bindGateway: writing((kind: GatewayKind): GatewayKind => {
      statements.bindGateway.run(kind);
      return statements.boundGateway.get()?.kind ?? kind;
    }),
    gatewayKind: () => statements.boundGateway.get()?.kind,
    close: () => {
      db.close();
    },
    ...createBatches(context, rows, corrections),
    ...createPayouts(context, rows, sending),
    ...createLocks(context, copying),
    ...createLimits(),
    ...createReports(context),
  };
  return { journal, recoverySince: () => recoverySince, sending };
}

/**
 * The journal as SQLite answers it on this thread: at once, but for `sendable` (the
 * marker's write); the sending path's writes are then handed to the sending thread.
 */
type SqliteJournal = Omit<Synchronous<Journal>, 'sendable'> & Pick<Journal, 'sendable'>;

/** Each method of `T` answering through a promise; its other properties as they are. */
type Answering<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : T[K];
};

/**
 * Where the SQLite journal's own methods become the async `Journal`'s: each answers at
 * once, through a promise, and what it throws is that promise's rejection, as a store
 * that answers later would fail, as the JournalError of its kind (store-errors.ts). A
 * method's transaction is still one synchronous call.
 */
function answering<T extends object>(journal: T, path: string): Answering<T> {
  const entries = Object.entries(journal).map(([name, value]: [string, unknown]) => [
    name,
    typeof value === 'function'
      ? async (...args: unknown[]): Promise<unknown> =>
          asJournal(path, () => (value as (...a: unknown[]) => unknown)(...args))
      : value,
  ]);
  return Object.fromEntries(entries) as Answering<T>;
}

function migrate(db: Database): void {
  for (const migration of MIGRATIONS) {
    db.transaction(() => {
      // Read inside the write lock: another process may have migrated meanwhile.
      const current = db.pragma('user_version', { simple: true }) as number;
      if (current > LATEST) throw newerSchema(db.name, current);
      if (migration.version <= current) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}

function newerSchema(path: string, found: number): JournalError {
  return new JournalError('newer-schema', `schema ${found} > ${LATEST}`, {
    path,
    schema: { found, latest: LATEST },
  });
}
