/** What people read of a file a pass handled: its outcome, rows and cents per state. */
import { formatCents } from '../messages/money.js';
import { givenName } from '../csv/given-name.js';
import type { RowTotals } from '../journal/journal.js';
import { CATALOGS, type Catalog, type StatusWord } from '../messages/catalog.js';
import { say } from '../messages/say.js';
import type { FileSummary } from './pass.js';

/**
 * "1 failed (R$ 20,00), 2 paid (R$ 40,00), 3 invalid", or "no rows"; in the catalog's
 * words (English for operators, by default).
 */
export function describeTotals(totals: RowTotals, words: Catalog = CATALOGS.en): string {
  const counts = Object.entries(totals.rows).map(([state, count]) => {
    // Counted, never summed: the money of an attempt sent again is its new attempt's.
    if (state === 'retried') return words.attemptsRetried({ count });
    const cents = totals.cents[state as keyof RowTotals['cents']] ?? 0;
    return words.rowsIn({
      count,
      state: words.state[state as StatusWord] ?? state,
      amount: cents > 0 ? formatCents(cents) : null,
    });
  });
  return counts.join(', ') || words.noRows;
}

/** A file's summary: its outcome, rows and cents per state, problems, result file. */
export function describeFile(summary: FileSummary, words: Catalog = CATALOGS.en): string {
  const problems = summary.problems.map((p) => `\n  ${say(words, p)}`).join('');
  const result = summary.result ? `\n  ${words.resultAt({ path: summary.result })}` : '';
  const file = givenName(summary.file);
  const line = words.fileSummary({
    file,
    // Another file of its name was beside it: told apart by its batch.
    batchId: file === summary.file ? null : summary.batchId,
    outcome: words.outcome({ state: summary.state, sentence: summary.outcome }),
    totals: describeTotals(summary, words),
    total: formatCents(summary.totalCents),
  });
  return `${line}${problems}${result}`;
}
