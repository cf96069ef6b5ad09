import { describe, expect, it } from 'vitest';
import { replacementOf } from '../../src/inbox/approval.js';
import type { BatchRecord, RowTotals } from '../../src/journal/journal.js';

const copy = (id: number, state: BatchRecord['state']) =>
  ({ id, fileName: 'folha.csv', state }) as BatchRecord;
const rows = (counts: RowTotals['rows']): RowTotals => ({ rows: counts, cents: {} });

describe('a batch replaced by its corrected copies', () => {
  it.each<[string, RowTotals, BatchRecord[], { copy: number; copyWaits: boolean } | undefined]>([
    [
      'every row closed by a waiting copy',
      rows({ superseded: 2 }),
      [copy(2, 'awaiting-approval')],
      { copy: 2, copyWaits: true },
    ],
    [
      'every row closed by an approved copy',
      rows({ superseded: 2 }),
      [copy(2, 'open')],
      { copy: 2, copyWaits: false },
    ],
    [
      'by two copies, the later one named; one still waits',
      rows({ superseded: 2, invalid: 1 }),
      [copy(2, 'awaiting-approval'), copy(3, 'done')],
      { copy: 3, copyWaits: true },
    ],
    [
      'a row still queued: it waits for its own approval',
      rows({ superseded: 1, queued: 1 }),
      [copy(2, 'open')],
      undefined,
    ],
    ['a row still held', rows({ superseded: 1, held: 1 }), [copy(2, 'open')], undefined],
    [
      'a row paid: not replaced, whatever the copy closed',
      rows({ superseded: 1, paid: 1 }),
      [copy(2, 'done')],
      undefined,
    ],
    ['no copy closed anything', rows({ queued: 2 }), [], undefined],
  ])('%s', (_, totals, copies, expected) => {
    const replaced = replacementOf(totals, copies);
    expect(replaced && { copy: replaced.copy.id, copyWaits: replaced.copyWaits }).toEqual(expected);
  });
});
