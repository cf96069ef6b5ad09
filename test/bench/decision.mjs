// The whole per-row decision on who is paid (issue 17, rule 13), timed as a whole: a
// 10,000-row file taken in by `ingestFile` (reading, the identity, cover and same-name
// rules, journaling, finishing the batch) on a journal of 1,000,000 payouts spread over
// 1,000 batches of 100 names and 100,000 documents over two years, beside the same file
// taken into an empty journal (the baseline, in the same process). A third of the file
// repeats recent payouts (covered: held as possible duplicates), a tenth repeats payouts
// older than duplicateWindow, the rest are new; its name is that of earlier batches, a
// month after the last (the same-name rule runs, and finds no repeat: every row is
// looked at). Then the same file again two hours later, taken as its corrected copy (its
// rows take over the first's, none of which was sent). Prints one JSON line per file,
// then the query plans of the statements the rules lean on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../dist/config/load.js';
import { ingestFile } from '../../dist/engine/ingest.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { Database } from '../../dist/journal/sqlite.js';
import { withCheckDigits } from '../../dist/domain/check-digits.js';

const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 1_000_000);
const BATCHES = 1_000;
const NAMES = 100;
const PEOPLE = 100_000;
const FILE_ROWS = 10_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Our clock: the file arrives now; the journal's batches reach back two years.
const NOW = Date.parse('2026-11-23T12:00:00Z');
const SPAN = 730 * DAY;

/** A valid CPF (its check digits computed) for person n. */
const cpf = (n) => withCheckDigits(String(100_000_000 + n).slice(-9));
/** A fixed salary per person: the same person, the same amount, every month. */
const centsOf = (person) => 10_000 + (person % 5_000) * 10;
const batchAt = (batch) => NOW - SPAN + Math.round((batch * SPAN) / BATCHES);
// Batches of a name come every NAMES-th batch: name n's last batch is the highest such.
const nameOf = (batch) => `fornecedores-${batch % NAMES}`;

/** A journal of PAYOUTS payouts, written in one transaction through SQL (bulk, fast). */
async function buildJournal(path) {
  await (await openJournal(sqliteJournalAt(path), { now: () => NOW - SPAN })).close();
  const db = new Database(path);
  db.pragma('synchronous = OFF');
  const insertBatch = db.prepare(`
    INSERT INTO batches (id, file_name, sha256, received_at, state, rows, valid, invalid,
      total_cents, problems, name_key, name_number, result_name)
    VALUES (?, ?, ?, ?, 'done', ?, ?, 0, 0, '[]', ?, ?, ?)`);
  const insertPayout = db.prepare(`
    INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, document, name,
      email, phone, payload_hash, admitted_at, state, attempts, transaction_id, updated_at)
    VALUES (?, ?, ?, ?, 0, ?, ?, ?, '+5511987654321', ?, ?, 'paid', 1, ?, ?)`);
  const hash = Buffer.alloc(8);
  const perBatch = PAYOUTS / BATCHES;
  db.transaction(() => {
    for (let batch = 1; batch <= BATCHES; batch++) {
      const at = batchAt(batch);
      const name = nameOf(batch);
      insertBatch.run(
        batch,
        `${name}.csv`,
        `sha-${batch}`,
        at,
        perBatch,
        perBatch,
        name,
        Math.ceil(batch / NAMES),
        `${name}.${batch}.result.csv`,
      );
      for (let line = 0; line < perBatch; line++) {
        const person = (batch * perBatch + line) % PEOPLE;
        const orderId = `${name}-${batch}-${line}`;
        insertPayout.run(
          orderId,
          batch,
          line + 2,
          centsOf(person),
          cpf(person),
          `Pessoa ${person}`,
          `p${person}@example.com`,
          hash,
          at,
          batch * perBatch + line,
          at,
        );
      }
    }
  })();
  db.close();
}

/** The file: recent payouts again, old ones again, and new people. */
function writeFile(path) {
  const perBatch = PAYOUTS / BATCHES;
  const lines = ['Nome,CPF,E-mail,Celular,Chave Pix,Valor'];
  for (let row = 0; row < FILE_ROWS; row++) {
    let person;
    if (row < FILE_ROWS * 0.3) {
      // People of the last batches (within duplicateWindow), at their usual amount.
      person = ((BATCHES - (row % 10)) * perBatch + Math.floor(row / 10)) % PEOPLE;
    } else if (row < FILE_ROWS * 0.4) {
      // People of batches a year ago, and not since.
      person = ((BATCHES / 2) * perBatch + row) % PEOPLE;
    } else person = PEOPLE + row; // never paid
    const cents = centsOf(person);
    const amount = `"${Math.trunc(cents / 100)},${String(cents % 100).padStart(2, '0')}"`;
    lines.push(
      `Pessoa ${person},${cpf(person)},p${person}@example.com,(11) 98765-4321,p${person}@example.com,${amount}`,
    );
  }
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
}

async function timeIngest(folder, journalPath, file, at) {
  const { config } = loadConfig({ env: { PAYOUTS_HOME: folder } });
  const journal = await openJournal(sqliteJournalAt(journalPath), { now: () => at });
  try {
    const started = performance.now();
    const result = await ingestFile(file, journal, config, 'open', true);
    const ms = performance.now() - started;
    const totals = await journal.rowTotalsOfBatch(result.batchId);
    return { ms, rows: totals.rows };
  } finally {
    await journal.close();
  }
}

/** The file, then the same file again two hours later: its corrected copy (rule 4). */
async function timeBoth(folder, journalPath, file) {
  const first = await timeIngest(folder, journalPath, file, NOW);
  const copy = await timeIngest(folder, journalPath, file, NOW + 2 * HOUR);
  return { first, copy };
}

function plans(journalPath) {
  const db = new Database(journalPath, { readonly: true });
  const plan = (sql, params) =>
    db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(params)
      .map((row) => row.detail);
  try {
    return {
      // As rows.ts asks it: earlier files and later ones, two ranges of payouts_by_cover.
      covering: plan(
        ['<', '>']
          .map(
            (side) => `SELECT p.order_id, p.batch_id, p.line, p.admitted_at
             FROM payouts p JOIN batches b ON b.id = p.batch_id
             WHERE p.document = @document AND p.value_cents = @value AND p.batch_id ${side} @batchId
               AND p.admitted_at >= @since AND p.admitted_at <= @admittedAt AND p.order_id <> @orderId
               AND p.state IN ('paid', 'pending') AND b.state NOT IN ('refused', 'unusable')
               AND NOT EXISTS (SELECT 1 FROM payouts c WHERE c.covered_by = p.order_id
                 AND c.state IN ('held', 'covered'))`,
          )
          .join(' UNION ALL ') + ' ORDER BY admitted_at, batch_id, line LIMIT 1',
        { document: cpf(1), value: 100, since: 0, batchId: 0, orderId: '', admittedAt: NOW },
      ),
      repeatsEarlierOfName: plan(
        `SELECT 1 FROM payouts p WHERE p.batch_id = @batchId AND EXISTS (
           SELECT 1 FROM payouts q JOIN batches qb ON qb.id = q.batch_id
           WHERE q.document = p.document AND q.value_cents = p.value_cents
             AND qb.name_key = @nameKey AND qb.id < @batchId
             AND qb.state NOT IN ('unusable', 'refused')) LIMIT 1`,
        { batchId: 1, nameKey: 'x' },
      ),
      sentOfDocument: plan(
        `SELECT p.order_id FROM payouts p JOIN batches b ON b.id = p.batch_id
         WHERE +p.batch_id = ? AND p.document = ? AND p.state IN ('paid', 'pending')
         ORDER BY p.line LIMIT 1`,
        [1, cpf(1)],
      ),
    };
  } finally {
    db.close();
  }
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-decision-'));
try {
  // A name whose last batch came about 30 days ago (41 batches of 0.73 days).
  const file = join(folder, `${nameOf(BATCHES - 41)}.csv`);
  writeFile(file);
  const empty = await timeBoth(folder, join(folder, 'empty.db'), file);
  const bigPath = join(folder, 'big.db');
  const building = performance.now();
  await buildJournal(bigPath);
  const buildMs = performance.now() - building;
  const big = await timeBoth(folder, bigPath, file);
  const perRow = (ms) => Number((ms / FILE_ROWS).toFixed(4));
  for (const stage of ['first', 'copy']) {
    console.log(
      JSON.stringify({
        bench: 'decision',
        file: stage === 'first' ? 'the file' : 'its corrected copy, 2 hours later',
        rows: FILE_ROWS,
        emptyJournal: { ms: Math.round(empty[stage].ms), msPerRow: perRow(empty[stage].ms) },
        journal: {
          payouts: PAYOUTS,
          buildSeconds: Number((buildMs / 1000).toFixed(1)),
          ms: Math.round(big[stage].ms),
          msPerRow: perRow(big[stage].ms),
          outcome: big[stage].rows,
        },
        vsEmpty: Number((big[stage].ms / empty[stage].ms).toFixed(2)),
        underOneMsPerRow: big[stage].ms / FILE_ROWS < 1,
      }),
    );
  }
  console.log(JSON.stringify({ bench: 'decision', plans: plans(bigPath) }));
} finally {
  rmSync(folder, { recursive: true, force: true });
}
