/**
 * Control totals: a trailing total line, or a sidecar `<file>.total` (or `.done`) giving
 * the row count and the sum. A mismatch holds the whole file: a truncated or edited
 * export must not be half paid.
 */
import { formatCents, parseCents, parseReais } from './amount.js';
import { foldHeading } from './fold.js';
import type { RowTotals } from './row.js';

export interface ControlTotal {
  /** Where the figures came from, for messages: `payroll.csv.total`, `the total line (line 42)`. */
  source: string;
  rows?: number;
  cents?: number;
}

const ROW_KEYS = new Set(['rows', 'linhas', 'count', 'quantidade', 'registros', 'lines']);
const REAIS_KEYS = new Set(['total', 'valor', 'soma', 'sum', 'amount', 'valortotal']);
const CENTS_KEYS = new Set(['cents', 'centavos', 'value', 'totalcents']);

/**
 * Reads a sidecar: one `key: value` (or `key=value`, `key;value`) per line, e.g.
 * `rows: 120` and `total: 12.345,67` (reais) or `cents: 1234567`.
 */
export function parseControlFile(source: string, text: string): ControlTotal | { problem: string } {
  const control: ControlTotal = { source };
  for (const [index, line] of text.split(/\r\n|\n|\r/).entries()) {
    if (line.trim() === '') continue;
    const match = /^\s*([^:=;\t]+?)\s*[:=;\t]\s*(.+?)\s*$/.exec(line);
    const key = match ? foldHeading(match[1] ?? '') : '';
    const value = match?.[2] ?? '';
    if (ROW_KEYS.has(key) && /^\d+$/.test(value)) {
      control.rows = Number(value);
      continue;
    }
    const amount = REAIS_KEYS.has(key)
      ? parseReais(value)
      : CENTS_KEYS.has(key)
        ? parseCents(value)
        : undefined;
    if (amount?.ok) {
      control.cents = amount.cents;
      continue;
    }
    return {
      problem: `${source} line ${index + 1} ("${line.trim()}") is not "rows: N", "total: 1.234,56" or "cents: 123456"`,
    };
  }
  if (control.rows === undefined && control.cents === undefined) {
    return {
      problem: `${source} gives neither a row count ("rows: N") nor a sum ("total: 1.234,56")`,
    };
  }
  return control;
}

/** Problems that hold the file; empty when every control total agrees with the rows. */
export function checkControlTotals(totals: RowTotals, controls: readonly ControlTotal[]): string[] {
  const problems: string[] = [];
  for (const control of controls) {
    const rowsDiffer = control.rows !== undefined && control.rows !== totals.rows;
    const unreadable = totals.unreadableAmountLines;
    if (control.cents !== undefined && unreadable.length > 0) {
      const lines = unreadable.slice(0, 5).join(', ') + (unreadable.length > 5 ? '…' : '');
      problems.push(
        `${control.source} gives a sum of ${formatCents(control.cents)}, which cannot be checked while the amounts on line ${lines} cannot be read: fix them and drop the file again`,
      );
      continue;
    }
    const sumDiffers = control.cents !== undefined && control.cents !== totals.readableCents;
    if (!rowsDiffer && !sumDiffers) continue;
    const ours = [
      control.rows !== undefined ? rowCount(totals.rows) : undefined,
      control.cents !== undefined ? formatCents(totals.readableCents) : undefined,
    ].filter(Boolean);
    const theirs = [
      control.rows !== undefined ? rowCount(control.rows) : undefined,
      control.cents !== undefined ? formatCents(control.cents) : undefined,
    ].filter(Boolean);
    problems.push(
      `control total mismatch: the file has ${ours.join(' and ')}, but ${control.source} says ${theirs.join(' and ')}; the file may be truncated or edited, so none of it is paid: export it again, or fix the rows or the total, and drop the corrected file in the inbox`,
    );
  }
  return problems;
}

function rowCount(rows: number): string {
  return rows === 1 ? '1 row' : `${rows} rows`;
}
