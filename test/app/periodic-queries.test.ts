/**
 * What a daemon does every few seconds reads from an index: a following pass does the
 * same journal work on a journal of 10,000 finished payouts as on one of 1,000,000, no
 * statement of it reading every payout; the health line reads the state index's ranges
 * of the unfinished rows.
 */
import { describe, expect, it } from 'vitest';
import { healthOf } from '../../src/app/serve.js';
import { newPassMemory } from '../../src/app/pass.js';
import { sqliteBinding } from '../../src/runtime/sqlite.js';
import { addPayouts } from '../bench/support/old-payouts.mjs';
import { passHome, type PassHome } from '../support/pass-home.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';
import { planOf, recordStatements, type Ran } from '../support/statements.js';

function addPaid(home: PassHome, count: number): void {
  const db = new (sqliteBinding())(home.folders.journal);
  try {
    addPayouts(db, { count, state: 'paid' });
  } finally {
    db.close();
  }
}

/** Each statement with how SQLite reads for it, in this journal. */
const plansOf = (home: PassHome, ran: readonly Ran[]) =>
  ran.map((statement) => ({
    sql: statement.sql.replace(/\s+/g, ' ').trim(),
    plan: planOf(home.folders.journal, statement),
  }));

describe("a daemon's periodic journal work", () => {
  it('is the same on a million finished payouts as on ten thousand, and reads no payout it does not need', async () => {
    // Three payouts left pending at the gateway: each following pass polls them.
    const home = await passHome({ settleDelayMs: 3_600_000 });
    await home.withJournal(() => undefined);
    addPaid(home, 10_000);
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', 3)]);
    const memory = newPassMemory();
    const first = await home.run({}, { followMs: 200, memory });
    expect(first.files.map((file) => file.rows)).toEqual([{ pending: 3 }]);
    // Each a pass that also looks up unclear rows, as one does every 15 s.
    const pass = async () => {
      memory.resolvedAt = 0;
      const ran = await recordStatements(async () => {
        await home.run({}, { followMs: 200, memory });
      });
      return plansOf(home, ran);
    };

    // The pass after the file's first finishes it once more as resumed; the next ones find
    // nothing of it moved, as a daemon's passes do while its payouts wait at the gateway.
    await pass();
    const small = await pass();
    addPaid(home, 990_000);
    const large = await pass();

    expect(large.filter(({ plan }) => plan.some((line) => /^SCAN payouts\b/.test(line)))).toEqual(
      [],
    );
    // Nor every batch ever finished: a home of years has tens of thousands.
    expect(large.filter(({ plan }) => plan.some((line) => /^SCAN batches\b/.test(line)))).toEqual(
      [],
    );
    expect(new Set(large.map(({ sql, plan }) => `${sql}: ${plan.join('; ')}`))).toEqual(
      new Set(small.map(({ sql, plan }) => `${sql}: ${plan.join('; ')}`)),
    );
    expect(home.sandbox.ledger().filter((entry) => entry.object === 'cashout')).toHaveLength(3);
  }, 120_000);

  it("reads the health line's counts from the unfinished rows' ranges of the state index alone", async () => {
    const home = await passHome();
    await home.withJournal(() => undefined);
    addPaid(home, 1_000);
    const db = new (sqliteBinding())(home.folders.journal);
    try {
      addPayouts(db, { count: 2, state: 'pending' });
    } finally {
      db.close();
    }
    let rows: Record<string, number> = {};
    const ran = await recordStatements(async () => {
      rows = await home.withJournal(
        async (journal) => (await healthOf(journal, home.folders)).rows,
      );
    });
    // The paid ones are history (`payouts status` says them): only what is in flight.
    expect(rows).toEqual({ pending: 2 });
    const counts = plansOf(home, ran).filter(({ sql }) => /\bFROM payouts\b/.test(sql));
    expect(counts.length).toBeGreaterThan(0);
    // A SCAN reads every payout ever journaled, its index or its row: only ranges of it.
    const read = counts.flatMap(({ plan }) => plan.filter((line) => / payouts\b/.test(line)));
    expect(
      read.filter(
        (line) => !/^SEARCH payouts USING COVERING INDEX payouts_by_state \(state=\?\)$/.test(line),
      ),
    ).toEqual([]);
  });
});
