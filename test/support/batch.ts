/** A batch recorded whole for a test of the engine: open, of `rows` valid rows of 1234 cents. */
import type { Journal } from '../../src/journal/journal.js';

export function recordOpenBatch(journal: Journal, fileName: string, rows: number): Promise<number> {
  return journal.recordBatch(
    {
      fileName,
      sha256: 'x',
      state: 'open',
      rows,
      valid: rows,
      invalid: 0,
      totalCents: rows * 1234,
      problems: [],
    },
    [],
  );
}
