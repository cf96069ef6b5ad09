// The cover lookup by reference on a journal of 100,000 payouts: "whatever its age" has no
// time bound, so it must be a range of payouts_by_reference (migration 24), not a read of
// the journal. 100 files of 1,000 rows, every one a year old, with a reference; one
// supplier (a CNPJ) has 10,000 invoices of R$ 4.000,00 among them, the rest go to 9,000
// payees. Weighed as admission and `run --dry-run` weigh a row (weigh): the busy
// supplier's invoice repeated (held), a new invoice of it (new), and a row of it without a
// reference (the window rule), BENCH_LOOKS times each (200); then again with
// payouts_by_reference dropped. Prints one JSON line per measure, and the query plan.
// `npm run build && node test/bench/reference-lookup.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withCheckDigits } from '../../dist/domain/check-digits.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { Database } from '../../dist/journal/sqlite.js';

const FILES = 100;
const ROWS = 1_000;
const LOOKS = Number(process.env.BENCH_LOOKS ?? 200);
const RULES = { duplicateWindowMs: 20 * 24 * 3_600_000, hintFlags: '' };
const cpf = (n) => withCheckDigits(String(100_000_000 + n).slice(-9));
const BUSY = '11222333000181';

function request(i) {
  const busy = i % 10 === 0;
  const document = busy ? BUSY : cpf(i % 9_000);
  return {
    value: busy ? 400_000 : 10_000 + (i % 50) * 100,
    pixKeyType: busy ? 1 : 0,
    pixKey: document,
    cpfCnpj: document,
    person: { name: `Favorecido ${i}`, email: `f${i}@example.com`, phone: '+5511987654321' },
    orderId: `ref-bench-${i}`,
  };
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-reference-lookup-'));
const path = join(folder, 'journal.db');
try {
  // Every payout a year old: only the reference can hold a row, never the window.
  let clock = Date.now() - 365 * 24 * 3_600_000;
  const journal = await openJournal(sqliteJournalAt(path), { now: () => clock });
  for (let file = 0; file < FILES; file++) {
    const { batchId } = await journal.batchForFile({
      name: `fornecedores-${file}.csv`,
      nameKey: `fornecedores-${file}`,
      sha256: file.toString(16).padStart(64, '0'),
      arrived: true,
    });
    const payouts = Array.from({ length: ROWS }, (_, k) => {
      const i = file * ROWS + k;
      return { line: k + 2, request: request(i), reference: `NF${i}` };
    });
    await journal.admitPayouts(batchId, payouts, RULES);
  }
  await journal.close();
  clock = Date.now();

  const measure = async (label) => {
    const open = await openJournal(sqliteJournalAt(path), { now: () => clock });
    const cases = {
      'repeated reference (held)': (n) => [request(10 * n), `NF${10 * n}`],
      'new reference, busy supplier (new)': (n) => [request(10 * n), `NF${FILES * ROWS + n}`],
      'no reference (window rule)': (n) => [request(10 * n), undefined],
    };
    for (const [name, make] of Object.entries(cases)) {
      const kinds = new Set();
      const started = performance.now();
      for (let n = 0; n < LOOKS; n++) {
        const [row, reference] = make(n % ((FILES * ROWS) / 10));
        const weighed = await open.weigh(
          { ...row, orderId: `new-${n}` },
          'outro',
          RULES,
          reference,
        );
        kinds.add(weighed.kind);
      }
      const µs = ((performance.now() - started) * 1000) / LOOKS;
      console.log(
        JSON.stringify({
          bench: 'reference-lookup',
          index: label,
          payouts: FILES * ROWS,
          case: name,
          decided: [...kinds],
          microsPerLookup: Math.round(µs),
        }),
      );
    }
    await open.close();
  };
  await measure('payouts_by_reference');
  const db = new Database(path);
  const plan = db
    .prepare(
      `EXPLAIN QUERY PLAN SELECT order_id FROM payouts WHERE document = ? AND reference = ? AND batch_id < ?`,
    )
    .all(BUSY, 'NF10', 5)
    .map((row) => row.detail);
  console.log(JSON.stringify({ bench: 'reference-lookup', plan }));
  db.exec('DROP INDEX payouts_by_reference');
  db.close();
  await measure('none');
} finally {
  rmSync(folder, { recursive: true, force: true });
}
