// `payouts journal compact` on a journal of 1,000,000 finished payouts, each with the four
// audit entries a run writes (put straight in SQL, as periodic.mjs builds its journals):
// the journal's bytes before and after (the file, its WAL, the pages in use), the bytes a
// payout keeps for ever, the time it took, and the longest the write lock was held at once.
// Prints one JSON line. `BENCH_COMPACT_PAYOUTS=100000` for another size (`npm run build` first).
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { compactJournal } from '../../dist/app/compact.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { sqliteBinding } from '../../dist/runtime/sqlite.js';
import { addPayouts } from './support/old-payouts.mjs';

const PAYOUTS = Number(process.env.BENCH_COMPACT_PAYOUTS ?? 1_000_000);

/** Bytes of the pages that hold data (not free), as the journal's file has them. */
function inUse(path) {
  const db = new (sqliteBinding())(path, { readonly: true });
  try {
    const pages =
      db.pragma('page_count', { simple: true }) - db.pragma('freelist_count', { simple: true });
    return pages * db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-compact-'));
const journal = join(folder, 'journal.db');
try {
  await (await openJournal(sqliteJournalAt(journal))).close();
  const db = new (sqliteBinding())(journal);
  const built = performance.now();
  for (let added = 0; added < PAYOUTS; added += 1_000_000) {
    addPayouts(db, { count: Math.min(1_000_000, PAYOUTS - added), state: 'paid', history: true });
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const buildMs = performance.now() - built;
  const usedBefore = inUse(journal);
  mkdirSync(join(folder, 'archive'));
  const began = performance.now();
  const done = await compactJournal(
    sqliteJournalAt(journal),
    join(folder, 'archive'),
    '2026-01-01',
    {
      format: { dialect: 'excel', timeZone: 'America/Sao_Paulo', language: 'pt-BR' },
      now: Date.now(),
    },
  );
  const seconds = (performance.now() - began) / 1000;
  const usedAfter = inUse(journal);
  console.log(
    JSON.stringify({
      bench: 'compact',
      payouts: PAYOUTS,
      entries: done.entries,
      fileBytesBefore: done.bytesBefore.file,
      walBytesBefore: done.bytesBefore.wal,
      fileBytesAfter: done.bytesAfter.file,
      walBytesAfter: done.bytesAfter.wal,
      usedBytesBefore: usedBefore,
      usedBytesAfter: usedAfter,
      bytesPerPayoutBefore: Math.round(usedBefore / PAYOUTS),
      bytesPerPayoutKept: Math.round(usedAfter / PAYOUTS),
      archiveBytes: statSync(done.archive).size,
      seconds: Number(seconds.toFixed(1)),
      entriesPerSecond: Math.round(done.entries / seconds),
      longestHoldMs: Number(done.longestHoldMs.toFixed(1)),
      buildSeconds: Number((buildMs / 1000).toFixed(1)),
    }),
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
