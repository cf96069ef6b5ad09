import { describe, expect, it } from 'vitest';
import { JournalError } from '../../src/journal/journal.js';
import { journalErrorOf, kindOfSqliteCode } from '../../src/journal/sqlite/store-errors.js';

describe("SQLite's failures, as the journal's kinds", () => {
  it.each([
    ['SQLITE_CORRUPT', 'damaged'],
    ['SQLITE_CORRUPT_INDEX', 'damaged'],
    ['SQLITE_NOTADB', 'damaged'],
    ['SQLITE_FULL', 'full'],
    ['SQLITE_IOERR_WRITE', 'full'],
    ['SQLITE_IOERR_FSYNC', 'full'],
    ['SQLITE_CANTOPEN', 'unavailable'],
    ['SQLITE_READONLY', 'unavailable'],
    ['SQLITE_READONLY_DBMOVED', 'unavailable'],
    ['SQLITE_PERM', 'unavailable'],
    ['SQLITE_AUTH', 'unavailable'],
    ['SQLITE_IOERR', 'unavailable'],
    ['SQLITE_IOERR_READ', 'unavailable'],
    ['SQLITE_BUSY', 'unavailable'],
    ['SQLITE_LOCKED', 'unavailable'],
    ['SQLITE_ERROR', 'unavailable'],
  ])('%s is %s', (code, kind) => {
    expect(kindOfSqliteCode(code)).toBe(kind);
  });

  it("keeps SQLite's code and words, and names the journal", () => {
    const thrown = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const error = journalErrorOf(thrown, '/srv/payouts/journal.db');
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({
      kind: 'full',
      message: 'database or disk is full',
      storeCode: 'SQLITE_FULL',
      path: '/srv/payouts/journal.db',
      cause: thrown,
    });
  });

  it('keeps its own refusal as it is', () => {
    const refused = new JournalError('refused', 'batch 3 is not in the journal');
    expect(journalErrorOf(refused, '/srv/payouts/journal.db')).toBe(refused);
  });

  it('says what else failed below the journal as the journal unavailable', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(journalErrorOf(reset, '/srv/payouts/journal.db')).toMatchObject({
      kind: 'unavailable',
      message: 'read ECONNRESET',
      storeCode: undefined,
      cause: reset,
    });
  });
});
