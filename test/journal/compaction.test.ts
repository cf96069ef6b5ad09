/**
 * The compaction seam on each store: a batch that another process opens again between two
 * chunks (as `payouts retry` does) keeps the entries of every chunk not yet deleted, for
 * the transaction that deletes checks the batch is still finished.
 */
import { describe, expect, it } from 'vitest';
import type { MovedEntry } from '../../src/journal/compaction.js';
import { openCompaction } from '../../src/journal/open.js';
import { useTempFolder } from '../support/files.js';
import { JOURNAL_STORES } from '../support/journal-stores.js';

/** Every audit entry's id, in order. */
const SELECT_AUDIT = 'SELECT id FROM audit ORDER BY id';

describe.each(JOURNAL_STORES)('journal compaction, the journal in %s', (_, store) => {
  const folder = useTempFolder();

  it('leaves a batch opened again between two chunks, its deleted chunk recorded once', async () => {
    // No gateway is asked: the journal alone is written.
    const { home } = store.home(folder(), 'http://127.0.0.1:9');
    await (await store.open(home)).close();
    await store.addPaidHistory(home, 2_500);
    const ids = (await store.select<{ id: number }>(home, SELECT_AUDIT)).map((row) => row.id);
    expect(ids).toHaveLength(10_000);

    const compaction = await openCompaction(store.location(home));
    const exported: MovedEntry[] = [];
    let chunks = 0;
    try {
      expect(await compaction.batchesBefore(Date.now())).toEqual([{ id: 1, entries: 9_999 }]);
      const outcome = await compaction.compact(Date.now(), {
        archive: '/srv/payouts/archive/journal-history/2026-11-28.csv',
        now: Date.now(),
        exported: new Set(),
        exportEntries: (entries) => exported.push(...entries),
        pause: async () => {
          chunks += 1;
          // Another host's retry, committed after the first chunk's delete.
          await store.execute(home, `UPDATE batches SET state = 'open' WHERE id = 1`);
        },
      });
      expect(outcome).toMatchObject({ batches: 1, entries: 4_000 });
    } finally {
      await compaction.close();
    }
    expect(chunks).toBe(1);
    // The second chunk was exported, then left: its transaction found the batch open.
    expect(exported.map((entry) => entry.id)).toEqual(ids.slice(0, 8_000));
    const left = (await store.select<{ id: number }>(home, SELECT_AUDIT)).map((row) => row.id);
    expect(left).toEqual(ids.slice(4_000));
    const events = await store.select<{ event: string; detail: string }>(
      home,
      'SELECT event, detail FROM batch_events WHERE batch_id = 1',
    );
    expect(events).toEqual([
      {
        event: 'compacted',
        detail: JSON.stringify({
          code: 'historyMoved',
          archive: '/srv/payouts/archive/journal-history/2026-11-28.csv',
        }),
      },
    ]);
  });
});
