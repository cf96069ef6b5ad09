import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/journal/sqlite.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { JournalError, openJournal, type Journal } from '../../src/journal/journal.js';
import { batch, describeJournal } from './conformance.js';
import { useTempFolder } from '../support/files.js';

describe('the SQLite journal', () => {
  const folder = useTempFolder();
  describeJournal('conforms to the Journal interface', (store, now) =>
    openJournal(join(folder(), 'home', store), { now }),
  );

  describe('as a file', () => {
    const opened: Journal[] = [];
    const open = () => {
      const journal = openJournal(join(folder(), 'home', 'journal.db'));
      opened.push(journal);
      return journal;
    };
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });

    it('is created owner-only, in WAL mode with synchronous FULL, and migrates once', async () => {
      const journal = open();
      const path = journal.path;
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(folder(), 'home')).mode & 0o777).toBe(0o700);
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
      raw.close();
      open(); // a second open finds the schema in place
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    });

    it("reads the English sentences an earlier version kept as a batch's problems", async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      const path = journal.path;
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      raw
        .prepare('UPDATE batches SET problems = ? WHERE id = ?')
        .run('["control total mismatch"]', id);
      raw.close();
      expect((await open().batch(id))?.problems).toEqual([
        { code: 'english', text: 'control total mismatch' },
      ]);
    });

    it('refuses a journal written by a newer version', async () => {
      const journal = open();
      await journal.close();
      opened.pop();
      const raw = new Database(journal.path);
      raw.pragma('user_version = 99');
      raw.close();
      expect(() => open()).toThrow(JournalError);
      expect(() => open()).toThrow(
        `schema version 99, newer than this program knows (${MIGRATIONS.at(-1)?.version})`,
      );
    });
  });
});
