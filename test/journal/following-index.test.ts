/**
 * Following a large batch reads only what is due: the follow loop's journal reads search
 * the index on poll times, soonest first, a bounded batch; never every pending payout.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { sqliteBinding } from '../../src/runtime/sqlite.js';
import { addPayouts } from '../bench/support/old-payouts.mjs';
import { useTempFolder } from '../support/files.js';
import { planOf, recordStatements } from '../support/statements.js';

const folder = useTempFolder('payouts-following-');

describe('following pending payouts', () => {
  it('reads what is due from the index on poll times, soonest first, never every pending payout', async () => {
    const path = join(folder(), 'journal.db');
    await (await openJournal(sqliteJournalAt(path))).close();
    const db = new (sqliteBinding())(path);
    // 2,000 pending, their polls spread over ten minutes from 1,000 ms: one due every 300 ms.
    const batchId = addPayouts(db, { count: 2_000, state: 'pending', now: 1_000 });
    db.close();
    const journal = await openJournal(sqliteJournalAt(path), { now: () => 1_000 + 300_000 });
    let next: number | undefined;
    let claimed: string[] = [];
    const ran = await recordStatements(async () => {
      next = await journal.nextPollAt();
      claimed = (await journal.claimDue('follower', 3, 60_000)).map((claim) => claim.orderId);
    });
    await journal.close();
    expect(next).toBe(1_300);
    expect(claimed).toEqual([1, 2, 3].map((i) => `antigo-${batchId}-${i}`));
    const reads = ran
      .map((statement) => ({ sql: statement.sql, plan: planOf(path, statement) }))
      .filter(({ sql }) => /\bFROM payouts\b/.test(sql));
    expect(reads.length).toBeGreaterThan(0);
    // A scan, a sort, or a search of every payout in a state reads the whole batch.
    const whole = reads.filter(({ plan }) =>
      plan.some(
        (line) =>
          /^SCAN payouts\b/.test(line) || /TEMP B-TREE/.test(line) || /\(state=\?\)$/.test(line),
      ),
    );
    expect(whole).toEqual([]);
  });
});
