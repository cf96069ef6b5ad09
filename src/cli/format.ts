/** Text for people: aligned key/value lines, row totals, file summaries. */
import { formatCents } from '../csv/amount.js';
import type { FileSummary } from '../app/pass.js';
import type { RowTotals } from '../journal/journal.js';
import { CATALOGS, type Catalog, type StatusWord } from '../messages/catalog.js';
import { say } from '../messages/say.js';

/** "1 row", "2 rows": `noun` is the singular; its plural takes an s. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function keyValueLines(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n');
}

/**
 * "1 failed (R$ 20,00), 2 paid (R$ 40,00), 3 invalid", or "no rows"; in the catalog's
 * words (English for operators, by default).
 */
export function describeTotals(totals: RowTotals, words: Catalog = CATALOGS.en): string {
  const counts = Object.entries(totals.rows).map(([state, count]) => {
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
  const line = words.fileSummary({
    file: summary.file,
    outcome: words.outcome({ state: summary.state, sentence: summary.outcome }),
    totals: describeTotals(summary, words),
    total: formatCents(summary.totalCents),
  });
  return `${line}${problems}${result}`;
}
