import { describe, expect, it } from 'vitest';
import { JournalError } from '../../src/journal/journal.js';
import { Database } from '../../src/journal/sqlite.js';
import { failureOf, failureShape } from '../../src/journal/sqlite/sending-thread.js';

/** What a failure of the sending thread is on this side, after the copy between threads. */
const across = (error: unknown) => failureOf(structuredClone(failureShape(error)));

describe("a failure of the journal's sending thread, as its caller receives it", () => {
  it('keeps a JournalError a JournalError, with its message', () => {
    const received = across(new JournalError('p-1: not queued any more'));
    expect(received).toBeInstanceOf(JournalError);
    expect(received.message).toBe('p-1: not queued any more');
  });

  it("keeps SQLite's result code and message, which say a full disk or a damaged file", () => {
    const db = new Database(':memory:');
    let thrown: unknown;
    try {
      db.exec('SELECT * FROM nowhere');
    } catch (error) {
      thrown = error;
    } finally {
      db.close();
    }
    expect(across(thrown)).toMatchObject({
      name: 'SqliteError',
      code: 'SQLITE_ERROR',
      message: 'no such table: nowhere',
    });
  });

  it('names the thread, and the code it has, for what is not an Error', () => {
    expect(across({ code: 'SQLITE_CANTOPEN' })).toMatchObject({
      message: "the journal's sending thread failed (SQLITE_CANTOPEN)",
      code: 'SQLITE_CANTOPEN',
    });
    expect(across('out of memory').message).toBe('out of memory');
  });
});
