/**
 * The journal's stores as the end-to-end tests (crashes, a lost journal, the daemon) use
 * them: how a home keeps its journal in the store, how a test reads what the journal
 * holds (through the Journal interface, opened read only), and the damage a loss test
 * does to it in the store's own way. Those tests run once per entry of JOURNAL_STORES, so
 * a second store is one more entry; only its entry here touches a store by its own means.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, cpSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Journal, JournalLocation, PayoutRecord } from '../../src/journal/journal.js';
import type { RowState } from '../../src/journal/states.js';
import {
  journalState,
  openJournal,
  openJournalReadOnly,
  sqliteJournalAt,
  type JournalOptions,
} from '../../src/journal/open.js';
import { Database } from '../../src/journal/sqlite.js';
import pg from 'pg';
import { addPaidPayoutsPostgres, addPayouts } from '../bench/support/old-payouts.mjs';
import { sandboxHome } from './home.js';
import { postgresBinaries, postgresMissing, usePostgres } from './postgres.js';

export interface JournalStore {
  readonly name: string;
  /** Hosts sharing the home work at once, each holding a lock of its own (homeLockName). */
  readonly hostsAtOnce: boolean;
  /** A home on the gateway at `gatewayUrl` whose journal this store keeps, and its commands' environment. */
  home(
    folder: string,
    gatewayUrl: string,
    settings?: Record<string, string>,
  ): { home: string; env: Record<string, string> };
  /** What the home's journal holds, read through the interface; undefined while there is none. */
  read<T>(home: string, look: (journal: Journal) => Promise<T>): Promise<T | undefined>;
  /** The home's journal opened for writing, for a state a test sets up. */
  open(home: string, options?: JournalOptions): Promise<Journal>;
  /** The journal gone, as a careless `rm` or a disk cleanup leaves it. */
  lose(home: string): void;
  /** What a refusal calls the journal after `lose`, with what to do first. */
  lostSaid: RegExp;
  /** What that refusal asks a person to do before recovering: the store made again, if it can be lost. */
  remake(home: string): void;
  /** The journal emptied, as a failed restore leaves it. */
  empty(home: string): void;
  /** In the journal's place, a store of nothing journaled (for SQLite, a database of no tables). */
  blank(home: string): void;
  /** A copy of the home's journal at `to`, taken by the store's own online backup. */
  backup(home: string, to: string): Promise<void>;
  /** The copy at `from` put in the place of the home's journal, the store's own right way. */
  restore(from: string, home: string): Promise<void>;
  /** The home folder and its journal copied together to `to`, as a nightly backup takes them. */
  backupHome(home: string, to: string): void;
  /** The home folder and its journal put back from such a copy. */
  restoreHome(from: string, home: string): void;
  /** How a refusal tells the operator to copy this store's journal the right way. */
  backupSaid: string;
  /** What a refusal calls the journal after `blank`. */
  blankSaid: RegExp;
  /** Ways the journal is damaged in place, each by its name. */
  damages: readonly (readonly [string, (home: string) => void])[];
  /** The rows of a SELECT both stores read alike, run on the home's journal by its own means. */
  select<T>(home: string, sql: string): Promise<T[]>;
  /** A change both stores take alike, as another process would write it. */
  execute(home: string, sql: string): Promise<void>;
  /** Where the home's journal is. */
  location(home: string): JournalLocation;
  /** `count` payouts paid long ago with their history, in a finished batch of their own. */
  addPaidHistory(home: string, count: number): Promise<void>;
}

const sqliteAt = (home: string) => sqliteJournalAt(join(home, 'journal.db'));

/** SQLite's online backup, the only right way to copy a live journal. */
async function sqliteBackup(from: string, to: string): Promise<void> {
  const db = new Database(from, { readonly: true });
  try {
    await db.backup(to);
  } finally {
    db.close();
  }
}

/** The journal of a home: the file `journal.db` in it. */
const sqlite: JournalStore = {
  name: 'SQLite',
  hostsAtOnce: false,
  home: sandboxHome,
  read: async (home, look) => {
    const location = sqliteAt(home);
    if ((await journalState(location)) !== 'present') return undefined;
    const journal = await openJournalReadOnly(location, Date.now);
    try {
      return await look(journal);
    } finally {
      await journal.close();
    }
  },
  open: (home, options) => openJournal(sqliteAt(home), options),
  lose: (home) => {
    for (const suffix of ['', '-wal', '-shm'])
      rmSync(`${sqliteAt(home).path}${suffix}`, { force: true });
  },
  lostSaid: /is missing/,
  // The first run with --recover makes the file.
  remake: () => undefined,
  empty: (home) => {
    sqlite.lose(home);
    writeFileSync(sqliteAt(home).path, '');
  },
  blank: (home) => {
    // What `sqlite3 journal.db 'PRAGMA journal_mode=WAL'` leaves.
    const blank = new Database(sqliteAt(home).path);
    blank.pragma('journal_mode = WAL');
    blank.close();
  },
  backup: (home, to) => sqliteBackup(sqliteAt(home).path, to),
  restore: (from, home) => sqliteBackup(from, sqliteAt(home).path),
  backupHome: (home, to) => cpSync(home, to, { recursive: true }),
  restoreHome: (from, home) => {
    rmSync(home, { recursive: true });
    cpSync(from, home, { recursive: true });
  },
  backupSaid: 'online backup',
  blankSaid: /is empty/,
  select: async <T>(home: string, sql: string) => {
    const db = new Database(sqliteAt(home).path, { readonly: true });
    try {
      return db.prepare<[], T>(sql).all();
    } finally {
      db.close();
    }
  },
  execute: async (home, sql) => {
    const db = new Database(sqliteAt(home).path);
    try {
      db.prepare(sql).run();
    } finally {
      db.close();
    }
  },
  location: sqliteAt,
  addPaidHistory: async (home, count) => {
    const db = new Database(sqliteAt(home).path);
    try {
      addPayouts(db, { count, state: 'paid', history: true });
    } finally {
      db.close();
    }
  },
  damages: [
    [
      'not a database',
      (home) => writeFileSync(sqliteAt(home).path, 'this is not a journal at all, '.repeat(200)),
    ],
    [
      'damaged half-way',
      (home) => {
        const { path } = sqliteAt(home);
        // Page 2 onwards overwritten: the header still says SQLite, the tables do not.
        const db = new Database(path);
        const pageSize = db.pragma('page_size', { simple: true }) as number;
        db.close();
        const fd = openSync(path, 'r+');
        writeSync(fd, Buffer.alloc(pageSize * 3, 0x5a), 0, pageSize * 3, pageSize);
        closeSync(fd);
      },
    ],
  ],
};

/** A PostgreSQL client tool: the installed one, or the one on PATH. */
function postgresTool(tool: string, args: readonly string[]): void {
  const bin = postgresBinaries();
  execFileSync(bin ? join(bin, tool) : tool, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * The journal of a home: a database of its own on the test file's throwaway cluster,
 * named by PAYOUTS_JOURNAL in the home's environment.
 */
function postgresStore(): JournalStore {
  const postgres = usePostgres();
  const databases = new Map<string, string>();
  const databaseOf = (home: string): string => {
    const database = databases.get(home);
    if (!database) throw new Error(`no PostgreSQL journal for ${home}`);
    return database;
  };
  const urlOf = (home: string) => postgres.cluster().url(databaseOf(home));
  const at = (home: string) => ({ kind: 'postgres' as const, url: urlOf(home) });
  const sql = (database: string, statement: string) =>
    postgresTool('psql', [
      ...['-v', 'ON_ERROR_STOP=1', '-q'],
      ...['-d', postgres.cluster().url(database), '-c', statement],
    ]);
  /** The home's database dropped, as `DROP DATABASE` by a careless hand leaves it. */
  const lose = (home: string) =>
    sql('postgres', `DROP DATABASE IF EXISTS ${databaseOf(home)} WITH (FORCE)`);
  /** A database of no journal schema in its place, as a DBA makes one. */
  const blank = (home: string) => {
    lose(home);
    sql('postgres', `CREATE DATABASE ${databaseOf(home)}`);
  };
  /** pg_dump's copy of a live database, consistent while runs write to it. */
  const backup = (home: string, to: string) =>
    postgresTool('pg_dump', ['--format=custom', '--file', to, '--dbname', urlOf(home)]);
  const restore = (from: string, home: string) => {
    blank(home);
    postgresTool('pg_restore', ['--no-owner', '--dbname', urlOf(home), from]);
  };
  const dumpBeside = (folder: string) => `${folder}.journal.dump`;
  return {
    name: 'PostgreSQL',
    hostsAtOnce: true,
    home: (folder, gatewayUrl, settings = {}) => {
      const { home, env } = sandboxHome(folder, gatewayUrl, settings);
      databases.set(home, `journal_${databases.size + 1}`);
      blank(home);
      return { home, env: { ...env, PAYOUTS_JOURNAL: urlOf(home) } };
    },
    read: async (home, look) => {
      if ((await journalState(at(home))) !== 'present') return undefined;
      const journal = await openJournalReadOnly(at(home), Date.now);
      try {
        return await look(journal);
      } finally {
        await journal.close();
      }
    },
    open: (home, options) => openJournal(at(home), options),
    lose,
    lostSaid: /is missing[^]*createdb --owner=postgres journal_\d+\)\. Then either restore/,
    remake: (home) => sql('postgres', `CREATE DATABASE ${databaseOf(home)}`),
    // Every table but the schema's version emptied: a schema without an identity.
    empty: (home) =>
      sql(
        databaseOf(home),
        `DO $$ BEGIN EXECUTE (SELECT 'TRUNCATE ' || string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_version'); END $$`,
      ),
    blank,
    backup: async (home, to) => backup(home, to),
    restore: async (from, home) => restore(from, home),
    backupHome: (home, to) => {
      cpSync(home, to, { recursive: true });
      backup(home, dumpBeside(to));
    },
    restoreHome: (from, home) => {
      rmSync(home, { recursive: true });
      cpSync(from, home, { recursive: true });
      restore(dumpBeside(from), home);
    },
    backupSaid: 'pg_dump and pg_restore',
    select: (home, statement) =>
      onClient(urlOf(home), async (client) => (await client.query(statement)).rows),
    execute: (home, statement) =>
      onClient(urlOf(home), async (client) => {
        await client.query(statement);
      }),
    location: at,
    addPaidHistory: (home, count) =>
      onClient(urlOf(home), async (client) => {
        await addPaidPayoutsPostgres(client, { count });
      }),
    // A database with no journal schema is what a new one is: none there, not an empty one.
    blankSaid: /is missing/,
    damages: [
      ['with a table dropped', (home) => sql(databaseOf(home), 'DROP TABLE payouts CASCADE')],
    ],
  };
}

/** `work` on a connection of its own to the database at `url`, bigints read as numbers. */
async function onClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)),
    },
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const postgresAbsent = postgresMissing();
if (postgresAbsent) console.log(`The end-to-end tests run on SQLite only: ${postgresAbsent}`);

/** Every store a journal may be kept in: the end-to-end tests run once for each. */
export const JOURNAL_STORES: readonly (readonly [string, JournalStore])[] = [
  [sqlite.name, sqlite],
  ...(postgresAbsent ? [] : [['PostgreSQL', postgresStore()] as const]),
];

/** How many payouts the journal has in each state (none absent). */
export async function countsOf(journal: Journal): Promise<Partial<Record<RowState, number>>> {
  return Object.fromEntries(
    Object.entries(await journal.countsByState()).map(([state, { count }]) => [state, count]),
  );
}

/** Every payout of the journal, batch by batch, in file order. */
export async function payoutsOf(journal: Journal): Promise<PayoutRecord[]> {
  const payouts: PayoutRecord[] = [];
  for (const { id } of await journal.batches()) {
    for (let after = 0; ;) {
      const page = await journal.resultEntries(id, after, 500);
      if (page.length === 0) break;
      // A result line shows no lease: the payout itself has it.
      for (const entry of page) {
        const payout = entry.kind === 'payout' && (await journal.payout(entry.orderId ?? ''));
        if (payout) payouts.push(payout);
      }
      after = page.at(-1)?.line ?? after;
    }
  }
  return payouts;
}
