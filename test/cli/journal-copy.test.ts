/**
 * `payouts journal copy --to postgres://…`: a home's SQLite journal, made by real runs
 * against the sandbox (paid, failed, a held repeat, a file waiting for a person, a file
 * set aside), copied into an empty PostgreSQL database, which then answers as the SQLite
 * journal does; a database that is not empty refused with nothing written; a copy killed
 * midway leaving the database as it was.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import type { Journal } from '../../src/journal/journal.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { openJournal, openJournalReadOnly, sqliteJournalAt } from '../../src/journal/open.js';
import { copyJournal } from '../../src/journal/postgres/copy.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { postgresAddress } from '../../src/journal/location.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { everyLine } from '../support/lines.js';
import { TOKEN, cashOutRequest } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';

const missing = postgresMissing();
if (missing) console.warn(`journal copy: ${missing}`);

/** The password the URLs carry: trust authentication ignores it, output must never show it. */
const PASSWORD = 'pw-9f3k2x';
const withPassword = (url: string): string =>
  Object.assign(new URL(url), { password: PASSWORD }).href;

const FAILING = `fail-0,Pessoa F,fail@example.com,11987654321,${withCheckDigits('123456789')},EMAIL,fail@example.com,"7,00"`;

describe.skipIf(missing)('payouts journal copy', () => {
  const postgres = usePostgres();
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: { home: string; env: Record<string, string> };
  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    home = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_FOLLOW_TIMEOUT: '10s',
    });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  const run = async (env: Record<string, string> = {}) => {
    const result = await runCli(['run'], { env: { ...home.env, ...env } });
    expect(result.code, result.stderr).toBeLessThan(3);
    return result;
  };
  const drop = (name: string, lines: readonly string[]) =>
    writeFile(join(home.home, 'inbox'), name, `${lines.join('\n')}\n`);

  /** A home whose journal holds what months of work leave in one. */
  async function workedHome(): Promise<void> {
    const paid = payrollRows('paid', 3, (row) => `${row + 1}0,00`);
    // A CPF that cannot be: an invalid line, kept as a line that is not a payout.
    const invalid = paid[1]!.replace(/^paid-1/, 'bad-1').replace(/,\d{11},/, ',12345678900,');
    drop('folha.csv', [PAYROLL_HEADER, ...paid, FAILING, invalid]);
    await run();
    // paid-0's document and amount again, under another orderId: held as a repeat.
    drop('repete.csv', [
      PAYROLL_HEADER,
      paid[0]!.replace(/^paid-0/, 'again-0'),
      ...payrollRows('new', 1, () => '2,00'),
    ]);
    await run();
    drop('aprovar.csv', [PAYROLL_HEADER, ...payrollRows('wait', 2, () => '3,00')]);
    drop('recusar.csv', [PAYROLL_HEADER, ...payrollRows('no', 1, () => '4,00')]);
    await run({ PAYOUTS_REQUIRE_APPROVAL: 'true' });
    const rejected = await runCli(
      ['reject', 'recusar.csv', '--reason', 'valor errado', '--by', 'ana'],
      {
        env: home.env,
      },
    );
    expect(rejected.code, rejected.stderr).toBe(0);
    drop('ruim.csv', ['isto não é uma folha', 'nem isto']);
    await run();
  }

  const journalPath = () => join(home.home, 'journal.db');
  const orderIds = (): string[] => {
    const db = new Database(journalPath(), { readonly: true });
    try {
      return (
        db.prepare('SELECT order_id FROM payouts ORDER BY id').all() as { order_id: string }[]
      ).map((row) => row.order_id);
    } finally {
      db.close();
    }
  };

  /** A home with a file approved by a person and not sent yet: its rows queued. */
  async function approvedNotSent(): Promise<string[]> {
    drop('aprovada.csv', [PAYROLL_HEADER, ...payrollRows('queued', 2, () => '5,00')]);
    await run({ PAYOUTS_REQUIRE_APPROVAL: 'true' });
    const approved = await runCli(['approve', 'aprovada.csv', '--by', 'ana'], { env: home.env });
    expect(approved.code, approved.stderr).toBe(0);
    const queued = orderIds().filter((id) => id.startsWith('queued-'));
    expect(queued).toHaveLength(2);
    return queued;
  }
  const sentOf = (ids: readonly string[]) =>
    sandbox.ledger().filter((entry) => ids.includes(entry.orderId ?? ''));

  /** `journal copy` in a process of its own, armed with a failpoint (read as it starts). */
  async function copyWithFailpoint(url: string, armed: string) {
    const child = spawn(process.execPath, [BIN, 'journal', 'copy', '--to', url], {
      env: cleanEnv({ ...home.env, PAYOUTS_FAILPOINT: armed }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.resume();
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (...ended) => resolve(ended)),
    );
    return { code, signal, stdout };
  }

  /** The mark journal copy leaves in the SQLite journal: where it moved, if it did. */
  const markOf = (): { address: string } | undefined => {
    const db = new Database(journalPath(), { readonly: true });
    try {
      return db.prepare('SELECT address FROM moved').get() as { address: string } | undefined;
    } finally {
      db.close();
    }
  };

  /** What a journal answers of everything it keeps, through the Journal interface. */
  async function answersOf(journal: Journal, ids: readonly string[]) {
    const batches = await journal.batches();
    return {
      identity: await journal.identity(),
      highWater: await journal.highWater(),
      latestAt: await journal.latestAt(),
      gateway: await journal.gatewayKind(),
      countsByState: await journal.countsByState(),
      batches,
      ofBatches: await Promise.all(
        batches.map(async (batch) => ({
          lines: await everyLine(journal, batch.id),
          events: await journal.batchEvents(batch.id),
          held: await journal.heldRowsOfBatch(batch.id),
          holds: await journal.holdsOfBatch(batch.id),
          superseded: await journal.supersededBy(batch.id),
        })),
      ),
      payouts: await Promise.all(
        ids.map(async (id) => ({
          payout: await journal.payout(id),
          history: await journal.history(id),
        })),
      ),
    };
  }

  async function withJournals<T>(
    url: string,
    use: (sqlite: Journal, postgres: Journal) => Promise<T>,
  ): Promise<T> {
    // Read only: once copied, the SQLite journal is refused to work with.
    const sqlite = await openJournalReadOnly(sqliteJournalAt(journalPath()), Date.now);
    try {
      const copy = await openPostgresJournal({ kind: 'postgres', url });
      try {
        return await use(sqlite, copy);
      } finally {
        await copy.close();
      }
    } finally {
      await sqlite.close();
    }
  }

  /** Every table of the database with the rows it holds. */
  async function tablesOf(url: string): Promise<Record<string, number>> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
      );
      const counts: Record<string, number> = {};
      for (const { name } of rows) {
        const [count] = (await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${name}"`))
          .rows;
        counts[name] = Number(count?.n);
      }
      return counts;
    } finally {
      await client.end();
    }
  }

  it('copies every batch, payout, line, audit entry and event, and the journal answers alike', async () => {
    await workedHome();
    const url = await postgres.made('copy');
    const copied = await runCli(['journal', 'copy', '--to', withPassword(url)], { env: home.env });
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout + copied.stderr).not.toContain(PASSWORD);
    // The per-state comparison: paid, failed and held rows, each with both sides' sums.
    expect(copied.stdout).toMatch(/paid\s+4\s+R\$ 62,00\s+4\s+R\$ 62,00/);
    expect(copied.stdout).toMatch(/failed\s+1\s+R\$ 7,00\s+1\s+R\$ 7,00/);
    expect(copied.stdout).toContain('PAYOUTS_JOURNAL');
    const ids = orderIds();
    expect(ids).toEqual(expect.arrayContaining(['paid-0', 'fail-0', 'again-0', 'wait-0']));
    await withJournals(url, async (sqlite, copy) => {
      const [before, after] = [await answersOf(sqlite, ids), await answersOf(copy, ids)];
      expect(after).toEqual(before);
      const stateOf = (orderId: string) =>
        before.payouts.find(({ payout }) => payout?.orderId === orderId)?.payout?.state;
      expect([stateOf('paid-0'), stateOf('fail-0'), stateOf('again-0')]).toEqual([
        'paid',
        'failed',
        'held',
      ]);
      expect(before.ofBatches.flatMap((batch) => batch.lines)).toHaveLength(1);
      expect(before.ofBatches.flatMap((batch) => batch.events)).toHaveLength(1);
      // Paid and failed; open, a repeat held; waiting for a person; set aside.
      expect(before.batches.map((batch) => batch.state)).toEqual([
        'done',
        'open',
        'awaiting-approval',
        'refused',
        'unusable',
      ]);
      const described = await copy.describe();
      expect(described.schema).toBe(described.latestSchema);
    });
  });

  it('copies a chunk of rows at a time, any chunk size giving the same journal', async () => {
    await workedHome();
    const url = await postgres.made('chunks');
    // Two rows a chunk: every table, batch_lines' two-column key too, read across chunks.
    expect((await copyJournal(journalPath(), url, { now: Date.now, chunkRows: 2 })).kind).toBe(
      'copied',
    );
    const ids = orderIds();
    await withJournals(url, async (sqlite, copy) => {
      expect(await answersOf(copy, ids)).toEqual(await answersOf(sqlite, ids));
    });
  });

  it("keeps a request's own text where its columns cannot give it back", async () => {
    await workedHome();
    const url = await postgres.made('written');
    // As a journal from before SQLite's migration 17 may hold it: a field no column keeps.
    const db = new Database(journalPath());
    const { request } = db
      .prepare(`SELECT request FROM payouts WHERE order_id = 'wait-0'`)
      .get() as {
      request: string;
    };
    const written = JSON.stringify({ ...JSON.parse(request), note: 'escrito à mão' }, null, 1);
    db.prepare(`UPDATE payouts SET request_written = ? WHERE order_id = 'wait-0'`).run(written);
    db.close();
    expect((await runCli(['journal', 'copy', '--to', url], { env: home.env })).code).toBe(0);
    await withJournals(url, async (sqlite, copy) => {
      const kept = (await copy.payout('wait-0'))?.request;
      expect(kept).toEqual((await sqlite.payout('wait-0'))?.request);
      expect(kept).toMatchObject({ note: 'escrito à mão', orderId: 'wait-0' });
    });
  });

  it('brings an older SQLite journal up to date first, as every command does', async () => {
    await workedHome();
    const url = await postgres.made('older');
    // The journal as SQLite's version 25 left it: its poll index before migration 26, no
    // table for the mark of a move (27), no index of approvals by time (28).
    const db = new Database(journalPath());
    db.exec(`DROP TABLE moved;
      DROP INDEX batch_events_approved_by_time;
      DROP INDEX payouts_by_poll_due;
      CREATE INDEX payouts_by_next_poll ON payouts (next_poll_at) WHERE state = 'pending';`);
    db.pragma('user_version = 25');
    db.close();
    const copied = await runCli(['journal', 'copy', '--to', url], { env: home.env });
    expect(copied.code, copied.stderr).toBe(0);
    const after = new Database(journalPath(), { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
    after.close();
    await withJournals(url, async (sqlite, copy) => {
      expect(await copy.countsByState()).toEqual(await sqlite.countsByState());
    });
  });

  it('moves the sequences past the copied ids: new audit entries and batches follow them', async () => {
    await workedHome();
    const url = await postgres.made('next');
    expect((await runCli(['journal', 'copy', '--to', url], { env: home.env })).code).toBe(0);
    await withJournals(url, async (sqlite, copy) => {
      const highWater = await sqlite.highWater();
      const last = Math.max(...(await sqlite.batches()).map((batch) => batch.id));
      const id = await copy.recordBatch(
        {
          fileName: 'nova.csv',
          sha256: 'f'.repeat(64),
          state: 'open',
          rows: 1,
          valid: 1,
          invalid: 0,
          totalCents: 100,
          problems: [],
        },
        [],
      );
      expect(id).toBe(last + 1);
      // A duplicate id would refuse each of these: the sequences start past the copied ones.
      await copy.recordBatchEvent(id, 'approved', 'ana', { code: 'english', text: 'test' });
      await copy.admitPayouts(id, [{ line: 2, request: cashOutRequest('depois-0') }], {
        duplicateWindowMs: 0,
      });
      expect((await copy.batchEvents(id)).map((event) => event.by)).toEqual(['ana']);
      expect(await copy.highWater()).toBe(highWater + 1);
      expect((await copy.history('depois-0')).map((entry) => entry.to)).toEqual(['queued']);
    });
  });

  it('refuses a database that is not empty, writing nothing', async () => {
    await workedHome();
    const url = await postgres.made('taken');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE TABLE notes (text text); INSERT INTO notes VALUES ('keep me')`);
    await client.end();
    const refused = await runCli(['journal', 'copy', '--to', withPassword(url)], { env: home.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('notes');
    expect(refused.stderr).toMatch(/not empty/);
    expect(refused.stdout + refused.stderr).not.toContain(PASSWORD);
    expect(await tablesOf(url)).toEqual({ notes: 1 });
    expect(markOf()).toBeUndefined();
  });

  it('refuses a database holding a journal already, in Portuguese too', async () => {
    await workedHome();
    const url = await postgres.made('twice');
    expect((await runCli(['journal', 'copy', '--to', url], { env: home.env })).code).toBe(0);
    const before = await tablesOf(url);
    const again = await runCli(['journal', 'copy', '--to', url], {
      env: { ...home.env, PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/não está vazi/);
    expect(await tablesOf(url)).toEqual(before);
    // The journal stays moved, and to nowhere else: a second database would be a second journal.
    expect(markOf()).toEqual({ address: url });
    const elsewhere = await postgres.made('elsewhere');
    const refused = await runCli(['journal', 'copy', '--to', elsewhere], { env: home.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`moved to PostgreSQL (${url})`);
    expect(await tablesOf(elsewhere)).toEqual({});
  });

  it('refuses the home to a command that opened the journal before the copy and waited', async () => {
    await approvedNotSent();
    const url = await postgres.made('waited');
    // A run (or the daemon) that opened the journal before the copy, then waited for the home.
    const journal = await openJournal(sqliteJournalAt(journalPath()));
    try {
      const copied = await runCli(['journal', 'copy', '--to', url], { env: home.env });
      expect(copied.code, copied.stderr).toBe(0);
      const me = { holder: 'run-waiting', host: 'this-host', pid: process.pid, command: 'run' };
      await expect(journal.takeLock('home', me, 30_000, () => true)).rejects.toMatchObject({
        kind: 'refused',
        refusal: { code: 'journalMoved', address: url },
      });
    } finally {
      await journal.close();
    }
  });

  it('takes the mark off again when the copy fails and rolls back', async () => {
    const queued = await approvedNotSent();
    const url = await postgres.made('reset');
    // A failure no code says (a connection reset) after the second chunk: rolled back.
    const failed = await copyWithFailpoint(url, 'copying-chunk:2:throw');
    expect([failed.code, failed.signal]).toEqual([1, null]);
    expect(failed.stdout).toContain('Copying');
    expect(await tablesOf(url)).toEqual({});
    expect(markOf()).toBeUndefined();
    // The home is as it was: its SQLite journal pays, once.
    await run();
    expect(sentOf(queued)).toHaveLength(2);
  });

  it('refuses while a run holds the home', async () => {
    await workedHome();
    const url = await postgres.made('busy');
    const journal = await openJournal(sqliteJournalAt(journalPath()));
    try {
      const me = { holder: 'run-elsewhere', host: 'other-host', pid: 1, command: 'run' };
      expect((await journal.takeLock('home', me, 30_000, () => true)).taken).toBe(true);
      const refused = await runCli(['journal', 'copy', '--to', url], { env: home.env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('other-host');
      expect(await tablesOf(url)).toEqual({});
    } finally {
      await journal.close();
    }
  });

  it('leaves the database empty when killed midway, and a second copy succeeds', async () => {
    await workedHome();
    const url = await postgres.made('killed');
    // Killed by its own hand after its second chunk is written, before the commit.
    const { signal, stdout } = await copyWithFailpoint(url, 'copying-chunk:2');
    expect(signal).toBe('SIGKILL');
    expect(stdout).toContain('Copying');
    expect(await tablesOf(url)).toEqual({});
    // Marked before anything was committed: the SQLite journal is refused, though not copied.
    const stale = await runCli(['run'], { env: home.env });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`moved to PostgreSQL (${url})`);
    const again = await runCli(['journal', 'copy', '--to', url], { env: home.env });
    expect(again.code, again.stderr).toBe(0);
    await withJournals(url, async (sqlite, copy) => {
      expect(await copy.countsByState()).toEqual(await sqlite.countsByState());
      expect(await copy.highWater()).toBe(await sqlite.highWater());
    });
  });
  it('refuses the SQLite journal once copied: a run without the setting sends nothing', async () => {
    const queued = await approvedNotSent();
    const url = await postgres.made('moved');
    const copied = await runCli(['journal', 'copy', '--to', withPassword(url)], { env: home.env });
    expect(copied.code, copied.stderr).toBe(0);
    const highWater = await withJournals(url, async (sqlite, copy) => {
      for (const id of queued) expect((await copy.payout(id))?.state).toBe('queued');
      return sqlite.highWater();
    });

    // A host (or a cron line) still on the old settings: the SQLite journal.
    const stale = await runCli(['run'], { env: home.env });
    expect(sentOf(queued)).toEqual([]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`moved to PostgreSQL (${postgresAddress(withPassword(url))})`);
    expect(stale.stderr).toContain('PAYOUTS_JOURNAL');
    expect(stale.stdout + stale.stderr).not.toContain(PASSWORD);
    const ptBR = await runCli(['approve', 'aprovada.csv', '--by', 'ana'], {
      env: { ...home.env, PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(ptBR.code).toBe(1);
    expect(ptBR.stderr).toMatch(/foi movido para o PostgreSQL/);

    // Read only, status still reads it, and says where the journal went.
    const status = await runCli(['status'], { env: home.env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain('moved to PostgreSQL');
    expect(status.stdout).toContain('aprovada.csv');
    const doctor = await runCli(['doctor'], { env: home.env });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout + doctor.stderr).toMatch(/journal.*moved to PostgreSQL/);

    // Nothing was written in the SQLite journal, and PostgreSQL sends each row once.
    const sqlite = new Database(journalPath(), { readonly: true });
    try {
      const last = sqlite.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM audit').get() as {
        id: number;
      };
      expect(last.id).toBe(highWater);
    } finally {
      sqlite.close();
    }
    const copy = await openPostgresJournal({ kind: 'postgres', url });
    try {
      for (const id of queued) expect((await copy.payout(id))?.state).toBe('queued');
    } finally {
      await copy.close();
    }

    // What the copy said to do next, as it said it: the journal set to the database's URL.
    expect(copied.stdout + copied.stderr).toContain('PAYOUTS_JOURNAL=');
    const moved = await runCli(['run'], {
      env: { ...home.env, PAYOUTS_JOURNAL: withPassword(url) },
    });
    expect([0, 3], moved.stderr).toContain(moved.code);
    expect(
      sentOf(queued)
        .map((entry) => entry.orderId)
        .sort(),
    ).toEqual([...queued].sort());
  });
});

describe('payouts journal copy, its command line', () => {
  const folder = useTempFolder();
  const env = () => sandboxHome(folder(), 'http://127.0.0.1:9').env;

  it('says a missing --to as a usage error, in the command line it takes', async () => {
    const missingTo = await runCli(['journal', 'copy'], { env: env() });
    expect(missingTo.code).toBe(64);
    expect(missingTo.stderr).toMatch(/^payouts journal: .*'--to <url>'.*payouts journal --help/);
  });

  it('refuses a --to that is not a PostgreSQL URL, without printing it', async () => {
    const refused = await runCli(['journal', 'copy', '--to', `mysql://ana:${PASSWORD}@db/x`], {
      env: { ...env(), PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('recebe a URL de um banco PostgreSQL');
    expect(refused.stdout + refused.stderr).not.toContain(PASSWORD);
  });
});
