/**
 * Control totals: a trailing total line, or a sidecar `<file>.total` (or `.done`) giving
 * the row count and the sum. A mismatch holds the whole file: a truncated or edited
 * export must not be half paid.
 */
import { formatCents } from '../messages/money.js';
import { parseCents, parseReais } from './amount.js';
import { foldHeading } from './fold.js';
import type { ControlSource, Said } from '../messages/said.js';
import type { ReadTotals } from './row.js';

export interface ControlTotal {
  /** Where the figures came from, for messages: a sidecar such as `payroll.csv.total`, or the total line. */
  source: ControlSource;
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
export function parseControlFile(sidecar: string, text: string): ControlTotal | { problem: Said } {
  const control: ControlTotal = { source: { sidecar } };
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
    return { problem: { code: 'sidecarLine', sidecar, line: index + 1, text: line.trim() } };
  }
  if (control.rows === undefined && control.cents === undefined) {
    return { problem: { code: 'sidecarSaysNothing', sidecar } };
  }
  return control;
}

/** Problems that hold the file; empty when every control total agrees with the rows. */
export function checkControlTotals(totals: ReadTotals, controls: readonly ControlTotal[]): Said[] {
  const problems: Said[] = [];
  for (const control of controls) {
    const rowsDiffer = control.rows !== undefined && control.rows !== totals.rows;
    const unreadable = totals.unreadableAmountLines;
    if (control.cents !== undefined && unreadable.length > 0) {
      problems.push({
        code: 'controlUncheckable',
        source: control.source,
        cents: control.cents,
        lines: unreadable,
      });
      continue;
    }
    const sumDiffers = control.cents !== undefined && control.cents !== totals.readableCents;
    if (!rowsDiffer && !sumDiffers) continue;
    // The file's figures are told for what the control gives, and only that.
    const { rows, cents } = control;
    problems.push({
      code: 'controlMismatch',
      source: control.source,
      file: {
        ...(rows === undefined ? {} : { rows: totals.rows }),
        ...(cents === undefined ? {} : { cents: totals.readableCents }),
      },
      control: {
        ...(rows === undefined ? {} : { rows }),
        ...(cents === undefined ? {} : { cents }),
      },
    });
  }
  return problems;
}
