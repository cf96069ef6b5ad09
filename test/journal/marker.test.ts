import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explainJournalFailure } from '../../src/journal/failures.js';
import { JournalError } from '../../src/journal/journal.js';
import { journalErrorOf } from '../../src/journal/sqlite/store-errors.js';
import { judgeBeforeOpen, judgeOpened, restoreOf } from '../../src/journal/loss.js';
import { createMarker, MarkerError, openMarker, readMarker } from '../../src/journal/marker.js';
import { Database } from '../../src/journal/sqlite.js';
import { useTempFolder } from '../support/files.js';

const marker = { journalId: 'j-1', highWater: 10 };

describe('journal loss rules', () => {
  it.each([
    [{ store: 'present', marker, homeHasHistory: true }, undefined],
    [{ store: 'absent', marker: undefined, homeHasHistory: false }, undefined], // a new home
    [{ store: 'absent', marker, homeHasHistory: false }, 'missing'],
    [{ store: 'absent', marker: undefined, homeHasHistory: true }, 'missing'],
    // A dropped database: missing where the home had a journal, a new home's otherwise.
    [{ store: 'no-store', marker, homeHasHistory: false }, 'missing'],
    [{ store: 'no-store', marker: undefined, homeHasHistory: true }, 'missing'],
    [{ store: 'no-store', marker: undefined, homeHasHistory: false }, undefined],
    [{ store: 'empty', marker, homeHasHistory: false }, 'empty'],
    [{ store: 'empty', marker: undefined, homeHasHistory: false }, undefined],
  ] as const)('before open: %j -> %s', (facts, loss) => {
    expect(judgeBeforeOpen(facts)).toBe(loss);
  });

  it.each([
    [{ marker, journalId: 'j-1', highWater: 10 }, undefined],
    [{ marker, journalId: 'j-1', highWater: 12 }, undefined],
    [{ marker, journalId: 'j-1', highWater: 9 }, 'older'],
    [{ marker, journalId: 'j-2', highWater: 50 }, 'replaced'],
    [{ marker: undefined, journalId: 'j-2', highWater: 0 }, undefined], // adopted
  ] as const)('opened: %j -> %s', (facts, loss) => {
    expect(judgeOpened(facts)).toBe(loss);
  });

  it("restores a SQLite journal with SQLite's online backup, never a file copy", () => {
    expect(restoreOf('sqlite', '/srv/payouts/journal.db')).toBe(
      `with SQLite's online backup (sqlite3 BACKUP.db ".backup '/srv/payouts/journal.db'"; never a file copy)`,
    );
  });
});

describe('journal marker', () => {
  const folder = useTempFolder();

  it('is owner-only, and keeps up with what it is told to cover', async () => {
    const path = join(folder(), 'journal.marker');
    const open = createMarker(path, marker);
    await Promise.all([open.cover(11), open.cover(15), open.cover(12)]);
    expect(readMarker(path)).toEqual({ journalId: 'j-1', highWater: 15 });
    await open.cover(20);
    open.close();
    expect(readMarker(path)).toEqual({ journalId: 'j-1', highWater: 20 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('opened by two processes of one host in turn (a run waiting for the lock), never says less than either wrote', async () => {
    const path = join(folder(), 'journal.marker');
    const first = createMarker(path, marker);
    // Opened before the first sends: a run that waits for the home's lock opens its journal first.
    const second = openMarker(path, marker);
    await first.cover(11);
    await first.cover(12);
    first.close();
    await second.cover(13);
    second.close();
    expect(readMarker(path)).toEqual({ journalId: 'j-1', highWater: 13 });
  });

  it('a write torn by a crash leaves the state before it; both slots torn is an error, never a guess', async () => {
    const path = join(folder(), 'journal.marker');
    const open = createMarker(path, marker);
    await open.cover(11); // slot 0 (sequence 2) now holds 11, slot 1 the 10 before it
    open.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from('{"v":1,"seq":3,"journalId":"j-1","highWa'), 0, undefined, 512);
    expect(readMarker(path)).toEqual({ journalId: 'j-1', highWater: 11 });
    writeSync(fd, Buffer.from('garbage'), 0, undefined, 0);
    closeSync(fd);
    expect(() => readMarker(path)).toThrow(MarkerError);
    expect(readMarker(join(folder(), 'none'))).toBeUndefined();
  });
});

describe('journal failures', () => {
  const folder = useTempFolder();

  it('a full disk (SQLITE_FULL, from a real SQLite at its page limit) says what to do', () => {
    const db = new Database(join(folder(), 'full.db'));
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma('max_page_count = 3');
    let failure: unknown;
    try {
      for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(4000));
    } catch (error) {
      failure = error;
    } finally {
      db.close();
    }
    const error = journalErrorOf(failure, '/srv/payouts/journal.db');
    expect(error.kind).toBe('full');
    const text = explainJournalFailure(error, 'maybe');
    expect(text).toContain('the disk holding the journal /srv/payouts/journal.db');
    expect(text).toContain('database or disk is full');
    expect(text).toContain('Free space');
  });

  it('what is not a failure of the journal, or says all itself, has no sentence of these', () => {
    expect(explainJournalFailure(new Error('boom'), 'nothing')).toBeUndefined();
    expect(explainJournalFailure({ code: 'SQLITE_BUSY' }, 'nothing')).toBeUndefined();
    const refused = new JournalError('refused', 'batch 3 is not in the journal');
    expect(explainJournalFailure(refused, 'nothing')).toBeUndefined();
  });
});
