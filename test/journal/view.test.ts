/**
 * The journal's view for the group: a whole copy, written only when the journal changed,
 * group-readable, and opened read only as a journal that weighs like the one it copies.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeJournalView, type Journal } from '../../src/journal/journal.js';
import { openJournal, openJournalReadOnly, sqliteJournalAt } from '../../src/journal/open.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest } from '../support/gateway.js';
import { batch } from './conformance.js';

describe("the journal's view", () => {
  const folder = useTempFolder();
  const opened: Journal[] = [];
  afterEach(async () => {
    for (const journal of opened.splice(0)) await journal.close();
  });
  const gid = process.getgid?.() ?? 0;
  const admitOne = async (journal: Journal, orderId: string) => {
    const id = await journal.recordBatch({ ...batch, sha256: orderId }, []);
    await journal.admitPayouts(id, [{ line: 2, request: cashOutRequest(orderId) }], {
      duplicateWindowMs: 0,
    });
  };

  it('is written when the journal changed, never when it did not, with the mode the group reads', async () => {
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    opened.push(journal);
    const viewPath = join(folder(), 'journal-view.db');
    await admitOne(journal, 'o-1');
    expect(writeJournalView(journal.path, viewPath, gid)).toBe(true);
    expect(statSync(viewPath)).toMatchObject({ gid, mode: 0o100640 });
    expect(existsSync(`${viewPath}.next`)).toBe(false);
    expect(writeJournalView(journal.path, viewPath, gid)).toBe(false);
    await admitOne(journal, 'o-2');
    expect(writeJournalView(journal.path, viewPath, gid)).toBe(true);
  });

  it('read only, it knows what the journal knew, and refuses any write', async () => {
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    opened.push(journal);
    await admitOne(journal, 'o-1');
    const viewPath = join(folder(), 'journal-view.db');
    writeJournalView(journal.path, viewPath, gid);
    const view = await openJournalReadOnly(sqliteJournalAt(viewPath), Date.now);
    opened.push(view);
    expect(await view.identity()).toEqual(await journal.identity());
    expect(await view.countsByState()).toEqual(await journal.countsByState());
    await expect(view.bindGateway('sandbox')).rejects.toMatchObject({
      kind: 'unavailable',
      storeCode: 'SQLITE_READONLY',
    });
  });
});
