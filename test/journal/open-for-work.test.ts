import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MARKER_NAME, readMarker } from '../../src/journal/marker.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { openJournalForWork } from '../../src/journal/open-for-work.js';
import { useTempFolder } from '../support/files.js';

describe('a journal opened for work', () => {
  const folder = useTempFolder();

  it('keeps its marker in the home folder, wherever the store is, and weighs it against what the store reports', async () => {
    const home = join(folder(), 'home');
    mkdirSync(home);
    const store = sqliteJournalAt(join(folder(), 'store', 'journal.db'));
    const options = { home, historyFolders: [], now: Date.now };
    const journal = await openJournalForWork(store, options);
    const journalId = (await journal.identity())?.journalId;
    const highWater = await journal.highWater();
    await journal.close();
    expect(readMarker(join(home, MARKER_NAME))).toEqual({ journalId, highWater });
    expect(existsSync(join(folder(), 'store', MARKER_NAME))).toBe(false);

    // Another journal in the store's place: told by the identity the store reports.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${store.path}${suffix}`, { force: true });
    await (await openJournal(store)).close();
    await expect(openJournalForWork(store, options)).rejects.toMatchObject({ kind: 'replaced' });
    // And the store gone: missing, by the home's marker.
    rmSync(store.path);
    await expect(openJournalForWork(store, options)).rejects.toMatchObject({ kind: 'missing' });
  });
});
