/** A batch's lines of every kind, for tests that compare them whole (a few lines). */
import type { JournalBatches } from '../../src/journal/journal.js';
import type { BatchLine, LineKind } from '../../src/journal/types.js';

/** Every kind of line a batch has beside its payouts. */
export const EVERY_KIND: readonly LineKind[] = [
  'invalid',
  'skipped',
  'held',
  'covered',
  'replay',
  'conflict',
  'superseded',
];

export async function everyLine(journal: JournalBatches, batchId: number): Promise<BatchLine[]> {
  return (await journal.linesOfBatch(batchId, EVERY_KIND, 1_000_000)).first;
}
