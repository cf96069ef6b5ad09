/** Text for people: aligned key/value lines, row totals, file summaries. */
import { formatCents } from '../csv/amount.js';
import type { FileSummary } from '../inbox/pass.js';
import type { RowTotals } from '../journal/journal.js';

/** "1 row", "2 rows": `noun` is the singular; its plural takes an s. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function keyValueLines(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n');
}

/** "1 failed (R$ 20,00), 2 paid (R$ 40,00), 3 invalid", or "no rows". */
export function describeTotals(totals: RowTotals): string {
  const counts = Object.entries(totals.rows).map(([state, count]) => {
    const cents = totals.cents[state as keyof RowTotals['cents']] ?? 0;
    return cents > 0 ? `${count} ${state} (${formatCents(cents)})` : `${count} ${state}`;
  });
  return counts.join(', ') || 'no rows';
}

/** A file's summary: its outcome, rows and cents per state, problems, result file. */
export function describeFile(summary: FileSummary): string {
  const problems = summary.problems.map((p) => `\n  ${p}`).join('');
  const result = summary.result ? `\n  result: ${summary.result}` : '';
  return `${summary.file}: ${summary.outcome}; ${describeTotals(summary)}; valid rows total ${formatCents(summary.totalCents)}${problems}${result}`;
}
