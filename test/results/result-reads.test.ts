/**
 * A result file's cost per line is what the line shows: its columns read as they are kept,
 * no request made as JSON for each row by SQLite and parsed again (issue 34: most of the
 * 20 s a 200,000-row result took past `run --follow-timeout`).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { writeResultFile } from '../../src/results/result-file.js';
import { sqliteBinding } from '../../src/runtime/sqlite.js';
import { addPayouts } from '../bench/support/old-payouts.mjs';
import { useTempFolder } from '../support/files.js';
import { recordStatements } from '../support/statements.js';

const folder = useTempFolder('payouts-result-reads-');
const ROWS = 3_000;

describe("a result file's reads", () => {
  it('make no JSON for its rows', async () => {
    const path = join(folder(), 'journal.db');
    await (await openJournal(sqliteJournalAt(path))).close();
    const db = new (sqliteBinding())(path);
    const batchId = addPayouts(db, { count: ROWS, state: 'pending', now: 1_000 });
    db.close();
    const journal = await openJournal(sqliteJournalAt(path));
    let written = false;
    const ran = await recordStatements(async () => {
      const batch = await journal.batch(batchId);
      written = await writeResultFile(journal, batch!, join(folder(), 'result.csv'), {
        dialect: 'rfc4180',
        timeZone: 'UTC',
      });
    });
    await journal.close();
    expect(written).toBe(true);
    // Each statement that read the batch's lines, again on a connection that counts the JSON
    // SQLite makes (the journal's generated `request` column is made by json_object).
    const reads = ran.filter(({ sql }) => /\bFROM payouts p\b/.test(sql) && /@after/.test(sql));
    expect(reads.length).toBeGreaterThan(0);
    const counting = new (sqliteBinding())(path, { readonly: true });
    let made = 0;
    counting.function('json_object', { deterministic: true, varargs: true }, () => {
      made += 1;
      return '{}';
    });
    let lines = 0;
    for (const { sql } of reads) {
      lines += counting.prepare(sql).all({ batchId, after: 0, limit: ROWS }).length;
    }
    counting.close();
    expect(lines).toBe(ROWS * reads.length);
    expect(made).toBe(0);
  });
});
