/** The per-row report of `payouts validate --report`: one line per row of the input. */
import { mistakesSaid, type RowOutcome } from '../csv/row.js';
import { safeCell } from '../csv/safe-cell.js';
import { say } from '../messages/say.js';
import { punctuatedDocument, shownPixKey } from './cells.js';
import { REPORT_COLUMNS } from './columns.js';
import { amountIn, catalogFor, type ResultFormat } from './result-file.js';

/** The report's headings, in the words of its format (see catalogFor). */
export function validationReportHeadings(format: Pick<ResultFormat, 'dialect' | 'language'>) {
  const words = catalogFor(format);
  return REPORT_COLUMNS.map((column) => words.heading[column]);
}

/**
 * A report line in the result files' dialect, every cell formula-safe; undefined for
 * blank lines, which are not reported. `value` is the amount as read, in reais. In
 * `excel` documents and keys are written as the result file writes them, so a Brazilian
 * Excel keeps them as text, and a row not read shows its cells as written, but for a
 * document of 11 or 14 digits, punctuated so its leading zeros stay.
 */
export function validationReportLine(
  row: RowOutcome,
  format: Pick<ResultFormat, 'dialect' | 'language'>,
): string[] | undefined {
  const { dialect } = format;
  const excel = dialect === 'excel';
  const words = catalogFor(format);
  const status = words.state;
  const document = (text: string) => (excel ? punctuatedDocument(text) : text);
  let cells: string[];
  switch (row.kind) {
    case 'blank':
      return undefined;
    case 'valid': {
      const { payout, notes } = row;
      cells = [
        String(row.line),
        status.valid,
        payout.orderId,
        payout.name,
        document(payout.cpfCnpj),
        payout.pixKeyType,
        excel ? shownPixKey(payout.pixKeyType, payout.pixKey) : payout.pixKey,
        amountIn(payout.valueCents, dialect),
        row.cells.valueCents ?? row.cells.amountReais ?? '',
        notes.map((note) => note.column).join(', '),
        notes.map((note) => say(words, note.message)).join('; '),
      ];
      break;
    }
    case 'invalid':
    case 'skipped': {
      const raw = row.cells;
      const readCents = row.kind === 'invalid' ? row.valueCents : undefined;
      cells = [
        String(row.line),
        status[row.kind],
        raw.orderId ?? '',
        raw.name ?? '',
        document((raw.cpfCnpj ?? '').trim()),
        raw.pixKeyType ?? '',
        raw.pixKey ?? '',
        readCents === undefined ? '' : amountIn(readCents, dialect),
        raw.valueCents ?? raw.amountReais ?? '',
        row.kind === 'invalid'
          ? row.mistakes.flatMap((mistake) => mistake.column ?? []).join(', ')
          : '',
        say(words, row.kind === 'invalid' ? mistakesSaid(row.mistakes) : row.reason),
      ];
      break;
    }
  }
  return cells.map(safeCell);
}
