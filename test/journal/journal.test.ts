import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/journal/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { contextOf } from '../../src/journal/sqlite/context.js';
import { JournalError, type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { batch, describeJournal } from './conformance.js';

const requestOf = (n: number, cpfCnpj: string): CashOutRequest => ({
  value: 1000,
  pixKeyType: 0,
  pixKey: cpfCnpj,
  cpfCnpj,
  person: { name: `Pessoa ${n}`, email: `p${n}@example.com`, phone: '+5511987654321' },
  orderId: `o-${n}`,
});
import { useTempFolder } from '../support/files.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { openSqliteJournal } from '../../src/journal/sqlite/open.js';
import { LATEST_POSTGRES_SCHEMA, openPostgresJournal } from '../../src/journal/postgres/open.js';
import { CLUSTER_NOW } from '../../src/journal/postgres/sql.js';
import { createServer, type AddressInfo } from 'node:net';
import pg from 'pg';
import { cashOutRequest } from '../support/gateway.js';
import { roundTripProxy } from '../support/round-trips.js';
import { useTranspiledSrc } from '../support/transpiled.js';

// The journal's modules as a worker thread loads them (see journal-thread.ts).
const moduleUrl = useTranspiledSrc();

describe('the SQLite journal', () => {
  const folder = useTempFolder();
  describeJournal('conforms to the Journal interface', {
    open: (store, now) => openJournal(sqliteJournalAt(join(folder(), 'home', store)), { now }),
    elsewhere: (store) => ({
      module: moduleUrl('journal/open.js'),
      opener: 'openJournal',
      location: sqliteJournalAt(join(folder(), 'home', store)),
    }),
  });

  describe('as a file', () => {
    const opened: Journal[] = [];
    const open = () => {
      // The adapter itself: what is SQLite's own is tested on it, at once.
      const journal = openSqliteJournal(join(folder(), 'home', 'journal.db'));
      opened.push(journal);
      return journal;
    };
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });
    /** A journal with one payout, o-1, queued. */
    const openWithOneQueued = async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(id, [{ line: 2, request: cashOutRequest('o-1') }], {
        duplicateWindowMs: 0,
      });
      return journal;
    };

    // A run whose files all wait for approval claims nothing: the thread and its own
    // connection would be a second heap for nothing (issue 34: `run`'s peak memory).
    it('starts no sending thread for a claim that finds nothing to send', async () => {
      const workers = () => (process.report.getReport() as { workers: unknown[] }).workers.length;
      const before = workers();
      const journal = open();
      const id = await journal.recordBatch({ ...batch, state: 'awaiting-approval' }, []);
      await journal.admitPayouts(id, [{ line: 2, request: cashOutRequest('o-1') }], {
        duplicateWindowMs: 0,
      });
      expect(await journal.claimToSend('run-1', 10, 60_000)).toEqual([]);
      expect(workers()).toBe(before);
      await journal.setBatchState(id, 'open');
      expect((await journal.claimToSend('run-1', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'o-1',
      ]);
      expect(workers()).toBe(before + 1);
    });

    it('is created owner-only, in WAL mode with synchronous FULL, and migrates once', async () => {
      const journal = open();
      const path = journal.path;
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(folder(), 'home')).mode & 0o777).toBe(0o700);
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
      raw.close();
      open(); // a second open finds the schema in place
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    });

    it("reads the English sentences an earlier version kept as a batch's problems", async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      const path = journal.path;
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      raw
        .prepare('UPDATE batches SET problems = ? WHERE id = ?')
        .run('["control total mismatch"]', id);
      raw.close();
      expect((await open().batch(id))?.problems).toEqual([
        { code: 'english', text: 'control total mismatch' },
      ]);
    });

    it("keeps an audit entry's reason as a value, and reads the English an earlier version kept", async () => {
      const journal = await openWithOneQueued();
      await journal.claimToSend('run-1', 1, 60_000);
      const path = journal.path;
      expect((await journal.history('o-1')).map((entry) => entry.reason)).toEqual([
        { code: 'auditJournaled', batchId: 1, line: 2 },
        { code: 'auditClaimed', owner: 'run-1', attempt: 1 },
      ]);
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      const reasons = raw.prepare('SELECT reason FROM audit ORDER BY id').pluck().all();
      expect(reasons.map((reason) => JSON.parse(String(reason)) as unknown)).toEqual([
        { code: 'auditJournaled', batchId: 1, line: 2 },
        { code: 'auditClaimed', owner: 'run-1', attempt: 1 },
      ]);
      raw.prepare('UPDATE audit SET reason = ? WHERE id = 1').run('journaled from batch 1, line 2');
      raw.close();
      expect((await open().history('o-1'))[0]?.reason).toEqual({
        code: 'english',
        text: 'journaled from batch 1, line 2',
      });
    });

    it('gives every request back as it was journaled, to the byte, though kept as columns', async () => {
      const person = { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' };
      // In the reader's key order (toCashOutRequest), as every journaled request is.
      const request = (
        orderId: string,
        pixKeyType: number,
        pixKey: string,
        cpfCnpj = '52998224725',
        who = person,
      ): CashOutRequest => ({ value: 1234, pixKeyType, pixKey, cpfCnpj, person: who, orderId });
      const requests: CashOutRequest[] = [
        request('cpf-key', 0, '52998224725'),
        request('another-cpf-key', 0, '11144477735'),
        request('cnpj-key', 1, '12ABC34501DE35', '12.ABC.345/01DE-35'),
        request('email-key', 2, 'ana@example.com'),
        request('other-email-key', 2, 'other@example.com'),
        request('phone-key', 3, '+5511987654321'),
        request('random-key-as-cpf', 4, '52998224725'),
        request('random-key ção', 4, '0c6f1e2a-7f3b-4c1d-9e8a-5b2d', '52998224725', {
          name: 'Zoë "Zé" \\ Araújo \u2028 \t 😀 \u0001',
          email: '',
          phone: '+55',
        }),
      ];
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        requests.map((request, i) => ({ line: i + 2, request })),
        { duplicateWindowMs: 0 },
      );
      const claims = await journal.claimToSend('run-1', 100, 60_000);
      expect(claims.map((claim) => JSON.stringify(claim.request))).toEqual(
        requests.map((request) => JSON.stringify(request)),
      );
    });

    it("leaves a file's admissions in the write-ahead log, copied into the database by the next other commit", async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      const empty = statSync(journal.path).size;
      for (let chunk = 0; chunk < 20; chunk++) {
        const payouts = Array.from({ length: 1_000 }, (_, i) => ({
          line: chunk * 1_000 + i + 2,
          request: cashOutRequest(`order-${chunk}-${i}`),
        }));
        await journal.admitPayouts(id, payouts, { duplicateWindowMs: 0 });
      }
      // More than the 1,000 pages at which any other commit checkpoints.
      expect(statSync(`${journal.path}-wal`).size).toBeGreaterThan(1_000 * 4_096);
      expect(statSync(journal.path).size).toBe(empty);
      await journal.recordBatch({ ...batch, sha256: 'cd' }, []);
      expect(statSync(journal.path).size).toBeGreaterThan(20_000 * 100);
      // 20,000 admissions: about 1 s of CPU on Node 20, 6 s on Node 24, whose SQLite 3.54
      // (better-sqlite3 13) spends about 20 µs on each cover lookup's ORDER BY; 27-36 s at
      // load 15 on two cores, where the default 30 s ended it.
    }, 120_000);

    it("gives a connection back its own sync and checkpoint after a file's admission, even one that fails", () => {
      const db = new Database(join(folder(), 'sync.db'));
      try {
        db.pragma('journal_mode = WAL');
        // Not the FULL the journal opens with: what is given back is the connection's own.
        db.pragma('synchronous = EXTRA');
        const context = contextOf(db, () => 0);
        const seen = context.admitting(() => db.pragma('synchronous', { simple: true }))();
        expect(seen).toBe(1); // NORMAL while a file is admitted
        expect(() =>
          context.admitting(() => {
            throw new Error('a chunk failed');
          })(),
        ).toThrow('a chunk failed');
        // Never less than it had: the next claim's commit is on disk before its request leaves.
        expect(db.pragma('synchronous', { simple: true })).toBe(3);
        expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      } finally {
        db.close();
      }
    });

    it("waits for a claim's commit off the event loop: answers and timers are heard meanwhile", async () => {
      const journal = await openWithOneQueued();
      // Another process holds the write lock, as a slow disk would hold the commit.
      const other = new Database(journal.path);
      try {
        other.exec('BEGIN IMMEDIATE');
        let settled = false;
        const claiming = journal.claimToSend('run-1', 10, 60_000).finally(() => {
          settled = true;
        });
        // The event loop turns while the claim waits for the lock.
        for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
        expect(settled).toBe(false);
        other.exec('COMMIT');
        expect((await claiming).map((claim) => claim.orderId)).toEqual(['o-1']);
        expect((await journal.payout('o-1'))?.state).toBe('sending');
      } finally {
        other.close();
      }
    });

    it("fails a claim as the journal unavailable, with its path and SQLite's code, when its thread cannot open the journal, every later one too, and still closes", async () => {
      const journal = await openWithOneQueued();
      // The file is gone from its folder before the first claim starts the thread, which
      // opens it then: a folder stands in its place.
      rmSync(journal.path);
      mkdirSync(journal.path);
      const failure: unknown = await journal.claimToSend('run-1', 10, 60_000).catch((e) => e);
      expect(failure).toBeInstanceOf(JournalError);
      expect(failure).toMatchObject({
        kind: 'unavailable',
        storeCode: 'SQLITE_CANTOPEN',
        path: journal.path,
        message: expect.stringMatching(/unable to open/),
      });
      await expect(journal.unclaim([], { code: 'auditClaimTooOld' })).rejects.toMatchObject({
        kind: 'unavailable',
        storeCode: 'SQLITE_CANTOPEN',
      });
      await journal.close();
      await journal.close();
      opened.pop();
    });

    it('holds again every row a failed payout covered, through copies of copies, each for payouts retry of that payout', async () => {
      const journal = open();
      const raw = new Database(journal.path);
      try {
        await holdsAgainThroughCopies(journal, {
          cover: (orderId, by) => {
            raw
              .prepare(`UPDATE payouts SET state = 'covered', covered_by = ? WHERE order_id = ?`)
              .run(by, orderId);
          },
          done: (id) => {
            raw.prepare(`UPDATE batches SET state = 'done' WHERE id = ?`).run(id);
          },
          coverOf: (orderId) =>
            raw
              .prepare(`SELECT state, hold_reason, covered_by FROM payouts WHERE order_id = ?`)
              .get(orderId),
        });
      } finally {
        raw.close();
      }
    });

    it('refuses a journal written by a newer version', async () => {
      const journal = open();
      await journal.close();
      opened.pop();
      const raw = new Database(journal.path);
      raw.pragma('user_version = 99');
      raw.close();
      expect(() => open()).toThrow(
        expect.objectContaining({
          kind: 'newer-schema',
          path: journal.path,
          schema: { found: 99, latest: MIGRATIONS.at(-1)?.version },
        }) as JournalError,
      );
    });

    it('holds at claim exactly the rows the cover rule written plainly holds, and weighs a new row as it does', async () => {
      let clock = 1_000_000;
      const journal = await openJournal(sqliteJournalAt(join(folder(), 'home', 'journal.db')), {
        now: () => clock,
      });
      opened.push(journal);
      const raw = new Database(journal.path);
      // A fixed, seeded draw: the same journal every run.
      let seed = 19;
      const draw = (n: number) => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
        return ((t ^ (t >>> 14)) >>> 0) % n;
      };
      const rules = { duplicateWindowMs: 40, hintFlags: '' };
      const documents = ['52998224725', '11144477735'];
      // Five files paying two people eight amounts, admitted over shared milliseconds and out
      // of the clock's order, some rows answered or held since, one file turned down.
      const batchIds: number[] = [];
      let n = 0;
      for (let file = 0; file < 5; file += 1) {
        const id = await journal.recordBatch({ ...batch, fileName: `folha-${file}.csv` }, []);
        batchIds.push(id);
        for (let line = 2; line < 32; line += 1, n += 1) {
          clock = 1_000_000 + 10 * draw(6);
          const cpfCnpj = documents[draw(2)] ?? '';
          await journal.admitPayouts(
            id,
            [{ line, request: { ...requestOf(n, cpfCnpj), value: 1000 + draw(8) } }],
            { duplicateWindowMs: 0 },
          );
        }
      }
      const states = ['queued', 'queued', 'queued', 'paid', 'pending', 'sending', 'failed'];
      const others = ['rejected', 'held', 'covered', 'canceled', 'unknown'];
      for (let row = 0; row < n; row += 1) {
        const state = draw(3) === 0 ? others[draw(others.length)] : states[draw(states.length)];
        raw
          .prepare(
            `UPDATE payouts SET state = ?, covered_by = ?, released_at = ? WHERE order_id = ?`,
          )
          .run(
            state,
            state === 'held' || state === 'covered' ? `o-${draw(n)}` : null,
            state === 'queued' && draw(8) === 0 ? clock : null,
            `o-${row}`,
          );
      }
      raw.prepare(`UPDATE batches SET state = 'refused' WHERE id = ?`).run(batchIds[3]);
      clock = 1_000_050; // rows last moved at 1_000_000 are outside the window
      // The cover rule written plainly, the reference: within the window from each payout's
      // own time, journaled before the row or sent since, the first in the journal.
      const before = raw.prepare<
        { document: string; value: number; batchId: number; orderId: string; id: number },
        { order_id: string }
      >(`
        SELECT p.order_id FROM payouts p JOIN batches b ON b.id = p.batch_id
        WHERE p.document = @document AND p.value_cents = @value
          AND MAX(COALESCE(p.last_sent_at, 0), p.updated_at) >= ${clock - rules.duplicateWindowMs}
          AND p.batch_id <> @batchId AND p.order_id <> @orderId
          AND (p.id < @id OR p.state IN ('paid', 'pending', 'unknown', 'sending', 'covered'))
          AND p.state IN ('paid', 'pending', 'unknown', 'sending', 'covered', 'queued', 'held')
          AND b.state NOT IN ('refused', 'unusable')
          AND NOT EXISTS (
            SELECT 1 FROM payouts c WHERE c.covered_by = p.order_id AND c.state IN ('held', 'covered'))
        ORDER BY p.id LIMIT 1`);
      const nextQueued = raw.prepare<
        [],
        {
          id: number;
          order_id: string;
          batch_id: number;
          document: string;
          value_cents: number;
          released_at: number | null;
        }
      >(`
        SELECT p.id, p.order_id, p.batch_id, p.document, p.value_cents, p.released_at
        FROM payouts p JOIN batches b ON b.id = p.batch_id
        WHERE p.state = 'queued' AND b.state = 'open' ORDER BY p.batch_id, p.line LIMIT 1`);

      // A new row of each person and amount, in no batch yet: covered by the same payout.
      const pairs = documents.flatMap((d) => [1000, 1001].map((value) => [d, value] as const));
      for (const [document, value] of pairs) {
        const request = { ...requestOf(n + 1, document), value };
        const weighed = await journal.weigh(request, 'outra', rules);
        const expected = before.get({
          document,
          value,
          batchId: 0,
          orderId: request.orderId,
          id: Number.MAX_SAFE_INTEGER,
        });
        expect(expected).toBeDefined();
        expect(weighed.kind === 'duplicate' ? weighed.covering.orderId : undefined).toBe(
          expected?.order_id,
        );
      }

      const coverOf = raw.prepare<[string], { state: string; covered_by: string | null }>(
        `SELECT state, covered_by FROM payouts WHERE order_id = ?`,
      );
      // One row a claim, each weighed by the reference first: a held row names the same cover.
      let held = 0;
      let sent = 0;
      for (let claim = 0; claim <= n; claim += 1) {
        const row = nextQueued.get();
        if (!row) break;
        const cover =
          row.released_at === null
            ? before.get({
                document: row.document,
                value: row.value_cents,
                batchId: row.batch_id,
                orderId: row.order_id,
                id: row.id,
              })
            : undefined;
        const claims = await journal.claimToSend('w', 1, 60_000, rules);
        if (cover) {
          expect(claims).toEqual([]);
          expect(coverOf.get(row.order_id)).toEqual({ state: 'held', covered_by: cover.order_id });
          held += 1;
        } else {
          expect(claims.map((c) => c.orderId)).toEqual([row.order_id]);
          sent += 1;
        }
      }
      expect(nextQueued.get()).toBeUndefined();
      // Both answers were given, many times over.
      expect(held).toBeGreaterThan(5);
      expect(sent).toBeGreaterThan(5);
      raw.close();
    });
  });
});

/**
 * A failed payout holds again every row it covered, through copies of copies, and one
 * retry of it covers them again: rows covered and files done written by `raw`, the
 * store's own connection (no member of the interface covers a row directly).
 */
async function holdsAgainThroughCopies(
  journal: Journal,
  raw: {
    cover(orderId: string, by: string): unknown;
    done(batchId: number): unknown;
    coverOf(orderId: string): unknown;
  },
): Promise<void> {
  const rules = { duplicateWindowMs: 0 };
  const ids: number[] = [];
  for (const [n, fileName] of ['folha.csv', 'folha_2.csv', 'folha_3.csv'].entries()) {
    const id = await journal.recordBatch({ ...batch, fileName }, []);
    await journal.admitPayouts(id, [{ line: 2, request: cashOutRequest(`o-${n}`) }], rules);
    ids.push(id);
  }
  // o-0 in flight; its copy o-1 covered by it, o-1's copy o-2 by o-1, their files done.
  await raw.cover('o-1', 'o-0');
  await raw.cover('o-2', 'o-1');
  for (const id of ids.slice(1)) await raw.done(id);
  const [claim] = await journal.claimToSend('w', 1, 60_000);
  expect(claim?.orderId).toBe('o-0');
  expect(await journal.move('o-0', claim?.fence ?? 0, 'failed', 'the gateway said so')).toBe(true);
  for (const orderId of ['o-1', 'o-2']) {
    expect(await raw.coverOf(orderId)).toEqual({
      state: 'held',
      hold_reason: 'failed-before',
      covered_by: 'o-0',
    });
  }
  expect((await journal.batch(ids[1] ?? 0))?.state).toBe('open');
  expect((await journal.batch(ids[2] ?? 0))?.state).toBe('open');
  // One retry of the payout that failed covers both again, by the payout it sends.
  expect(await journal.retryPayouts(['o-2'], 'maria', rules)).toMatchObject([
    { kind: 'retried', orderId: 'o-0-r2' },
  ]);
  for (const orderId of ['o-1', 'o-2']) {
    expect(await raw.coverOf(orderId)).toMatchObject({ state: 'covered', covered_by: 'o-0-r2' });
  }
}

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `the PostgreSQL journal${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();
    // The store the suite's threads open: made before each test, as a SQLite file would be.
    beforeEach(async () => {
      await postgres.made('journal.db');
    });
    describeJournal('conforms to the Journal interface', {
      open: async (store, now) =>
        openPostgresJournal({ kind: 'postgres', url: await postgres.made(store) }, { now }),
      elsewhere: (store) => ({
        module: moduleUrl('journal/postgres/open.js'),
        opener: 'openPostgresJournal',
        location: { kind: 'postgres', url: postgres.url(store) },
      }),
      sharedByHosts: true,
      // The store judges leases by the database's clock, whatever it is opened with.
      leaseNow: async () => {
        const client = new pg.Client({ connectionString: postgres.url('journal.db') });
        await client.connect();
        try {
          const { rows } = await client.query<{ at: string }>(`SELECT ${CLUSTER_NOW} AS at`);
          return Number(rows[0]?.at);
        } finally {
          await client.end();
        }
      },
    });

    describe('as a database', () => {
      const opened: Journal[] = [];
      const open = async (url: string) => {
        const journal = await openPostgresJournal({ kind: 'postgres', url });
        opened.push(journal);
        return journal;
      };
      afterEach(async () => {
        for (const journal of opened.splice(0)) await journal.close();
      });
      const schemaOf = async (url: string) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query<{ version: number }>('SELECT version FROM schema_version'))
            .rows[0]?.version;
        } finally {
          await client.end();
        }
      };

      it('is brought up to date once by hosts opening a new database at once', async () => {
        const url = await postgres.made('shared');
        const journals = await Promise.all(Array.from({ length: 4 }, () => open(url)));
        expect(await schemaOf(url)).toBe(LATEST_POSTGRES_SCHEMA);
        const ids = await Promise.all(journals.map(async (j) => (await j.identity())?.journalId));
        expect(new Set(ids).size).toBe(1);
        expect(await journals[0]?.describe()).toMatchObject({
          kind: 'postgres',
          schema: LATEST_POSTGRES_SCHEMA,
          latestSchema: LATEST_POSTGRES_SCHEMA,
          store: expect.stringMatching(/^PostgreSQL \d+/),
        });
      });

      it('holds again every row a failed payout covered, through copies of copies, each for payouts retry of that payout', async () => {
        const url = await postgres.made('uncover');
        const journal = await open(url);
        const raw = new pg.Client({ connectionString: url });
        await raw.connect();
        try {
          await holdsAgainThroughCopies(journal, {
            cover: async (orderId, by) => {
              await raw.query(
                `UPDATE payouts SET state = 'covered', covered_by = $1 WHERE order_id = $2`,
                [by, orderId],
              );
            },
            done: async (id) => {
              await raw.query(`UPDATE batches SET state = 'done' WHERE id = $1`, [id]);
            },
            coverOf: async (orderId) =>
              (
                await raw.query(
                  `SELECT state, hold_reason, covered_by FROM payouts WHERE order_id = $1`,
                  [orderId],
                )
              ).rows[0] as unknown,
          });
        } finally {
          await raw.end();
        }
      });

      it('refuses a database written by a newer version, naming both versions', async () => {
        const url = await postgres.made('newer');
        await (await open(url)).close();
        opened.pop();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query('UPDATE schema_version SET version = 99');
        await client.end();
        await expect(open(url)).rejects.toMatchObject({
          kind: 'newer-schema',
          message: expect.stringContaining(
            `schema version 99, newer than this program knows (${LATEST_POSTGRES_SCHEMA})`,
          ),
        });
      });

      it('writes a set of answers in the round trips of one, each as if written alone', async () => {
        const proxy = await roundTripProxy(await postgres.made('answers'));
        const journal = await openPostgresJournal({ kind: 'postgres', url: proxy.url });
        try {
          const id = await journal.recordBatch(batch, []);
          const orderIds = Array.from({ length: 20 }, (_, i) => `a-${i + 1}`);
          await journal.admitPayouts(
            id,
            orderIds.map((orderId, i) => ({ line: i + 2, request: cashOutRequest(orderId) })),
            { duplicateWindowMs: 0 },
          );
          const answers = (await journal.claimToSend('a', orderIds.length, 60_000)).map(
            (claim, i) => ({
              orderId: claim.orderId,
              fence: claim.fence,
              to: 'pending' as const,
              reason: 'created',
              details: { transactionId: i + 1 },
            }),
          );
          const [first, ...others] = answers;
          // An answer to a claim taken over since: its fence is no longer the row's.
          const fenced = { ...first!, fence: first!.fence - 1 };
          proxy.take();
          expect(await journal.moveMany([fenced, ...others])).toEqual([
            false,
            ...others.map(() => true),
          ]);
          // BEGIN, the rows read, the moves and their audit written, COMMIT.
          expect(proxy.take()).toBeLessThanOrEqual(4);
          expect((await journal.history('a-1')).map((h) => h.to)).toEqual(['queued', 'sending']);
          expect((await journal.history('a-2')).map((h) => h.to)).toEqual([
            'queued',
            'sending',
            'pending',
          ]);
          expect(await journal.payout('a-2')).toMatchObject({ state: 'pending', transactionId: 2 });
          // One row answered twice in a set: the second sees the first, as one after another.
          const paid = { ...others[1]!, to: 'paid' as const, reason: 'settled' };
          expect(await journal.moveMany([paid, paid])).toEqual([true, true]);
          expect((await journal.history('a-3')).map((h) => h.to)).toEqual([
            'queued',
            'sending',
            'pending',
            'paid',
          ]);
        } finally {
          await journal.close();
          await proxy.close();
        }
      });

      it('claims rows weighing the cover rule in the round trips of one row', async () => {
        const proxy = await roundTripProxy(await postgres.made('claims'));
        const journal = await openPostgresJournal({ kind: 'postgres', url: proxy.url });
        try {
          const id = await journal.recordBatch(batch, []);
          await journal.admitPayouts(
            id,
            Array.from({ length: 21 }, (_, i) => ({
              line: i + 2,
              request: cashOutRequest(`c-${i + 1}`),
            })),
            { duplicateWindowMs: 0 },
          );
          const rules = { duplicateWindowMs: 20 * 86_400_000 };
          proxy.take();
          expect(await journal.claimToSend('a', 1, 60_000, rules)).toHaveLength(1);
          const one = proxy.take();
          expect(await journal.claimToSend('a', 20, 60_000, rules)).toHaveLength(20);
          expect(proxy.take()).toBe(one);
        } finally {
          await journal.close();
          await proxy.close();
        }
      });

      it('claims by reading the rows it takes, not the queue, before any statistics', async () => {
        const url = await postgres.made('claim-reads');
        const raw = new pg.Client({ connectionString: url });
        await raw.connect();
        // Rows read from payouts by the server's sessions that have ended: a session's
        // counts reach the statistics when it ends, so the journal is closed and its
        // sessions waited for (bounded) before they are read.
        const readSoFar = async (): Promise<number> => {
          const until = Date.now() + 30_000;
          const others = `SELECT COUNT(*)::integer AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()`;
          while ((await raw.query<{ n: number }>(others)).rows[0]?.n !== 0) {
            if (Date.now() > until) throw new Error('the journal sessions did not end');
            await new Promise((resolve) => setImmediate(resolve));
          }
          await raw.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await raw.query<{ n: string }>(
            `SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) AS n
             FROM pg_stat_user_tables WHERE relname = 'payouts'`,
          );
          return Number(rows[0]?.n);
        };
        try {
          let journal = await openPostgresJournal({ kind: 'postgres', url });
          // As a file just admitted meets tables whose statistics predate it: autovacuum has
          // not analyzed them yet (it waits for its minute and for a tenth of the rows).
          await raw.query('ALTER TABLE payouts SET (autovacuum_enabled = false)');
          const id = await journal.recordBatch(batch, []);
          const queue = 3_000;
          await journal.admitPayouts(
            id,
            Array.from({ length: queue }, (_, i) => ({
              line: i + 2,
              request: cashOutRequest(`q-${i + 1}`),
            })),
            { duplicateWindowMs: 0 },
          );
          await journal.close();
          const before = await readSoFar();
          journal = await openPostgresJournal({ kind: 'postgres', url });
          await journal.close();
          const opening = (await readSoFar()) - before;
          journal = await openPostgresJournal({ kind: 'postgres', url });
          const claimed = await journal.claimToSend('a', 16, 60_000);
          await journal.close();
          expect(claimed.map((claim) => claim.orderId)).toEqual(
            Array.from({ length: 16 }, (_, i) => `q-${i + 1}`),
          );
          // The candidates and their claim: each row a few times at most, never the queue.
          expect((await readSoFar()) - before - 2 * opening).toBeLessThanOrEqual(16 * 4);
        } finally {
          await raw.end();
        }
      });

      it("is unavailable, never a file's failure, when its server does not answer", async () => {
        // A loopback port nobody listens on: the cluster's own, once stopped, is not ours to stop.
        const server = createServer();
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as AddressInfo;
        await new Promise((resolve) => server.close(resolve));
        const failure: unknown = await open(`postgres://postgres@127.0.0.1:${port}/none`).catch(
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(JournalError);
        expect(failure).toMatchObject({ kind: 'unavailable', storeCode: 'ECONNREFUSED' });
      });
    });
  },
);
