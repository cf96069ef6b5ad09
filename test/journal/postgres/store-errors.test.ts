import { describe, expect, it } from 'vitest';
import { explainJournalFailure } from '../../../src/journal/failures.js';
import { JournalError } from '../../../src/journal/journal-error.js';
import { journalErrorOf, kindOfSqlState } from '../../../src/journal/postgres/store-errors.js';

describe("PostgreSQL's failures as the journal's", () => {
  it.each([
    ['53100', 'full'], // disk_full
    ['3D000', 'missing'], // invalid_catalog_name: the database dropped, or never made
    ['XX001', 'damaged'], // data_corrupted
    ['XX002', 'damaged'], // index_corrupted
    ['42P01', 'damaged'], // undefined_table: a table of the migrated schema dropped
    ['42703', 'damaged'], // undefined_column
    ['23505', 'refused'], // unique_violation
    ['22P02', 'refused'], // invalid_text_representation
    ['57P01', 'unavailable'], // admin_shutdown: the server restarting
    ['08006', 'unavailable'], // connection_failure
    ['57014', 'unavailable'], // query_canceled: statement_timeout
    ['53300', 'unavailable'], // too_many_connections
    ['40001', 'unavailable'], // serialization_failure
  ] as const)('SQLSTATE %s is %s', (code, kind) => {
    expect(kindOfSqlState(code)).toBe(kind);
    expect(
      journalErrorOf(Object.assign(new Error('said'), { code }), 'postgres://h/db'),
    ).toMatchObject({ kind, storeCode: code, path: 'postgres://h/db', message: 'said' });
  });

  it('says a dropped database as missing: which database, made again by whom, with what', () => {
    const dropped = journalErrorOf(
      Object.assign(new Error('database "payroll" does not exist'), { code: '3D000' }),
      'postgres://payouts@db.example:5432/payroll',
    );
    expect(explainJournalFailure(dropped, 'nothing')).toBe(
      `the journal's database postgres://payouts@db.example:5432/payroll does not exist (3D000: database "payroll" does not exist): nothing was sent, and every file stays where it was. The database payroll does not exist on its server, and payouts may not make one: make it, empty, as PostgreSQL's administrator (createdb --owner=payouts payroll). Then run again: payouts makes the journal in it.`,
    );
  });

  it("keeps the journal's own as they are, and says a socket's failure as unavailable", () => {
    const own = new JournalError('refused', 'a move not allowed');
    expect(journalErrorOf(own, 'postgres://h/db')).toBe(own);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(journalErrorOf(reset, 'postgres://h/db')).toMatchObject({
      kind: 'unavailable',
      storeCode: 'ECONNRESET',
    });
    expect(journalErrorOf('the pool ended', 'postgres://h/db').kind).toBe('unavailable');
  });

  it.each([
    ['timeout expired', 'no answer from the server within 10 s'], // a connect
    ['Query read timeout', 'no answer from the server within 35 s'], // a statement
  ])("says node-postgres's time-out %j as the server out of reach, with its bound", (said, as) => {
    const failure = journalErrorOf(new Error(said), 'postgres://u@h:5432/db');
    expect(failure).toMatchObject({ kind: 'unavailable', message: as, storeCode: undefined });
    expect(explainJournalFailure(failure, 'nothing')).toMatch(
      new RegExp(
        `^the journal's database postgres://u@h:5432/db cannot be reached \\(${as}\\): nothing was sent`,
      ),
    );
  });
});
