// Bulk admission alone (no parsing): 1,000,000 generated payouts (as the reader makes them
// from a Brazilian payroll file: derived orderIds, CPF keys and e-mail keys, one line in a
// thousand invalid) admitted into a fresh journal through admitPayouts and recordLines, in
// chunks as ingest.ts writes them. Against bare SQLite in the same process: the same rows
// inserted as (orderId, JSON) into a one-table journal with the same pragmas, a
// transaction per chunk. Then where the journal's bytes go (SQLite's dbstat), per payout,
// with and without the audit rows, and after VACUUM. And the floor of admission: the same
// payouts written by the journal's own insert and audit entry into a fresh journal, with
// no rule's lookup, as admission commits its chunks: what no change to the rules can go
// under. Prints one JSON line per measure.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { Database } from '../../dist/journal/sqlite.js';
import { withCheckDigits } from '../../dist/domain/check-digits.js';
import { connect } from '../../dist/journal/sqlite/connection.js';
import { INSERT_PAYOUT, payoutParams } from '../../dist/journal/sqlite/admitting.js';

const ROWS = Number(process.env.BENCH_ADMIT_ROWS ?? 1_000_000);
const CHUNK = Number(process.env.BENCH_ADMIT_CHUNK ?? 1_000);
const NAMES = ['Ana Souza', 'João Conceição', 'Maria das Graças', 'Açougue São Jorge Ltda'];
const RULES = { duplicateWindowMs: 3 * 24 * 3_600_000, hintFlags: '' };

/** A valid CPF (its check digits computed) for person n. */
const cpf = (n) => withCheckDigits(String(100_000_000 + n).slice(-9));

/** Row i of the file, as ingest.ts gives it to the journal. */
function entry(i) {
  const line = i + 2;
  if (i % 1000 === 999) {
    return {
      line: {
        line,
        kind: 'invalid',
        orderId: null,
        column: 'Valor (R$)',
        message: 'the amount is not a number',
        said: { code: 'english', text: 'the amount is not a number' },
        name: `${NAMES[i % NAMES.length]} ${i}`,
        valueCents: null,
        valueWritten: 'R$ abc',
      },
    };
  }
  // Rows in the file's order, which is not the order of their documents or orderIds.
  const scrambled = (i * 0x9e3779b1) % 2 ** 48;
  const document = cpf(scrambled % 100_000_000);
  const email = `pessoa${i}@example.com`;
  const byEmail = i % 3 === 0;
  return {
    payout: {
      line,
      request: {
        value: 10_000 + ((i * 7919) % 900_000),
        pixKeyType: byEmail ? 2 : 0,
        pixKey: byEmail ? email : document,
        cpfCnpj: document,
        person: {
          name: `${NAMES[i % NAMES.length]} ${i}`,
          email,
          phone: `+55119${String(80_000_000 + (i % 99_999_999)).slice(0, 8)}`,
        },
        orderId: `folha-2026-11-${scrambled.toString(16).padStart(16, '0')}`,
      },
    },
  };
}

const cpuMs = (start) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};

async function admitAll(path) {
  const journal = await openJournal(sqliteJournalAt(path));
  const batch = await journal.batchForFile({
    name: 'folha-2026-11.csv',
    nameKey: 'folha-2026-11',
    sha256: 'f'.repeat(64),
    arrived: true,
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let payouts = [];
  let lines = [];
  const flush = async () => {
    if (payouts.length > 0) await journal.admitPayouts(batch.batchId, payouts, RULES);
    if (lines.length > 0) await journal.recordLines(batch.batchId, lines);
    payouts = [];
    lines = [];
  };
  for (let i = 0; i < ROWS; i++) {
    const { payout, line } = entry(i);
    if (payout) payouts.push(payout);
    else lines.push(line);
    if (payouts.length + lines.length >= CHUNK) await flush();
  }
  await flush();
  const ms = performance.now() - started;
  const cpuUsed = cpuMs(cpu);
  await journal.close();
  return { ms, cpuMs: cpuUsed };
}

/** The floor: each row's orderId and JSON into one table, a transaction per chunk. */
function bareAll(path) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE payouts (order_id TEXT PRIMARY KEY, request TEXT NOT NULL) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO payouts (order_id, request) VALUES (?, ?)');
  const chunk = db.transaction((rows) => {
    for (const row of rows) insert.run(row.orderId, JSON.stringify(row));
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let rows = [];
  for (let i = 0; i < ROWS; i++) {
    const { payout } = entry(i);
    if (payout) rows.push(payout.request);
    if (rows.length >= CHUNK) {
      chunk(rows);
      rows = [];
    }
  }
  chunk(rows);
  const ms = performance.now() - started;
  const cpuUsed = cpuMs(cpu);
  db.close();
  return { ms, cpuMs: cpuUsed };
}

/**
 * The journal's writes alone: each payout inserted and audited as admission does, in a
 * fresh journal (every index), a transaction a chunk at admission's pragmas, no lookup.
 */
async function floorAll(path) {
  const journal = await openJournal(sqliteJournalAt(path));
  const { batchId } = await journal.batchForFile({
    name: 'folha-2026-11.csv',
    nameKey: 'folha-2026-11',
    sha256: 'f'.repeat(64),
    arrived: true,
  });
  await journal.close();
  const db = connect(path);
  // As context.ts's `admitting` commits a file's chunks.
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 20000');
  const insert = db.prepare(INSERT_PAYOUT);
  const audit = db.prepare(
    `INSERT INTO audit (payout_id, at, from_state, to_state, reason) VALUES (?, ?, NULL, 'queued', ?)`,
  );
  const chunk = db.transaction((payouts) => {
    const now = Date.now();
    for (const { line, request } of payouts) {
      const id = insert.run(payoutParams(request, batchId, line, now)).lastInsertRowid;
      audit.run(id, now, JSON.stringify({ code: 'auditJournaled', batchId, line }));
    }
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let payouts = [];
  for (let i = 0; i < ROWS; i++) {
    const { payout } = entry(i);
    if (payout) payouts.push(payout);
    if (payouts.length >= CHUNK) {
      chunk(payouts);
      payouts = [];
    }
  }
  chunk(payouts);
  const ms = performance.now() - started;
  const cpuUsed = cpuMs(cpu);
  db.close();
  return { ms, cpuMs: cpuUsed };
}

/** Bytes of each table and index (whole pages, as the file pays for them). */
function bytesOf(path, vacuum = false) {
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  if (vacuum) db.exec('VACUUM');
  const parts = db
    .prepare(`SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC`)
    .all();
  const payouts = db.prepare('SELECT COUNT(*) AS n FROM payouts').get().n;
  db.close();
  const file = statSync(path).size;
  const audit = parts.filter((p) => p.name.startsWith('audit')).reduce((s, p) => s + p.bytes, 0);
  return {
    payouts,
    fileBytes: file,
    bytesPerPayout: Math.round(file / payouts),
    bytesPerPayoutWithoutAudit: Math.round((file - audit) / payouts),
    perPayout: Object.fromEntries(parts.map((p) => [p.name, Math.round(p.bytes / payouts)])),
  };
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-admit-'));
try {
  const bare = bareAll(join(folder, 'bare.db'));
  const admitted = await admitAll(join(folder, 'journal.db'));
  const floor = await floorAll(join(folder, 'floor.db'));
  rmSync(join(folder, 'floor.db'), { force: true });
  const bytes = bytesOf(join(folder, 'journal.db'));
  console.log(
    JSON.stringify({
      bench: 'admit',
      rows: ROWS,
      chunk: CHUNK,
      rowsPerSecond: Math.round(ROWS / (admitted.ms / 1000)),
      cpuUsPerRow: Number(((admitted.cpuMs * 1000) / ROWS).toFixed(2)),
      bareRowsPerSecond: Math.round(ROWS / (bare.ms / 1000)),
      bareCpuUsPerRow: Number(((bare.cpuMs * 1000) / ROWS).toFixed(2)),
      vsBare: Number((admitted.ms / bare.ms).toFixed(2)),
      floorRowsPerSecond: Math.round(ROWS / (floor.ms / 1000)),
      floorCpuUsPerRow: Number(((floor.cpuMs * 1000) / ROWS).toFixed(2)),
      // By CPU, which the machine's load moves least.
      floorVsBareCpu: Number((floor.cpuMs / bare.cpuMs).toFixed(2)),
      admitVsFloorCpu: Number((admitted.cpuMs / floor.cpuMs).toFixed(2)),
    }),
  );
  console.log(JSON.stringify({ bench: 'admit-bytes', ...bytes }));
  // VACUUM writes each table and index again in key order, its pages full.
  const vacuumed = bytesOf(join(folder, 'journal.db'), true);
  console.log(JSON.stringify({ bench: 'admit-bytes-after-vacuum', ...vacuumed }));
} finally {
  rmSync(folder, { recursive: true, force: true });
}
