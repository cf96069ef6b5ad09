import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalError } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { Database } from '../../src/journal/sqlite.js';
import { failureOf, failureShape } from '../../src/journal/sqlite/sending-thread.js';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest } from '../support/gateway.js';

const PATH = '/srv/payouts/journal.db';

/** What a failure of the sending thread is on this side, after the copy between threads. */
const across = (error: unknown) => failureOf(structuredClone(failureShape(error, PATH)));

describe("a failure of the journal's sending thread, as its caller receives it", () => {
  it('keeps a JournalError a JournalError, with its kind and message', () => {
    const received = across(new JournalError('refused', 'p-1: not queued any more'));
    expect(received).toBeInstanceOf(JournalError);
    expect(received).toMatchObject({ kind: 'refused', message: 'p-1: not queued any more' });
  });

  it('keeps what a person reads of a refusal, its Said', () => {
    const refusal = { code: 'retryIdTaken', orderId: 'p-1', retryId: 'p-1-r2' } as const;
    expect(across(new JournalError('refused', 'p-1-r2 taken', { refusal }))).toMatchObject({
      kind: 'refused',
      refusal,
    });
  });

  it("is the journal's failure of SQLite's kind, with its code, message and the journal's path", () => {
    const db = new Database(':memory:');
    let thrown: unknown;
    try {
      db.exec('SELECT * FROM nowhere');
    } catch (error) {
      thrown = error;
    } finally {
      db.close();
    }
    const received = across(thrown);
    expect(received).toBeInstanceOf(JournalError);
    expect(received).toMatchObject({
      kind: 'unavailable',
      storeCode: 'SQLITE_ERROR',
      message: 'no such table: nowhere',
      path: PATH,
    });
  });

  it('names the thread, and the code it has, for what is not an Error', () => {
    expect(across({ code: 'SQLITE_CANTOPEN' })).toMatchObject({
      kind: 'unavailable',
      message: "the journal's sending thread failed (SQLITE_CANTOPEN)",
      storeCode: 'SQLITE_CANTOPEN',
    });
    expect(across('out of memory')).toMatchObject({
      kind: 'unavailable',
      message: 'out of memory',
    });
  });
});

describe("the journal's sending thread under the tests", () => {
  const folder = useTempFolder();

  it('runs the source under test, not a build of it: its failure is thrown from src/', async () => {
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    try {
      const batchId = await recordOpenBatch(journal, 'payroll.csv', 1);
      await journal.admitPayouts(batchId, [{ line: 2, request: cashOutRequest('t-1') }], {
        duplicateWindowMs: 0,
      });
      const [claim] = await journal.claimToSend('test', 1, 60_000);
      // A move the thread refuses: the stack it sends back is where it was thrown.
      const refused = await journal
        .moveMany([{ orderId: 't-1', fence: claim?.fence ?? 0, to: 'held', reason: 'a test' }])
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(JournalError);
      const thrownAt = (refused as Error).stack ?? '';
      expect(thrownAt).toMatch(/\/src\/journal\/sqlite\/[\w-]+\.ts:\d+/);
      expect(thrownAt).not.toContain('/dist/');
    } finally {
      await journal.close();
    }
  });
});
