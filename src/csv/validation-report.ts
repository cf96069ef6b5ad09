/** The per-row report of `payouts validate --report`: one line per row of the input. */
import type { RowOutcome } from './row.js';
import { safeCell } from './safe-cell.js';

export const VALIDATION_REPORT_COLUMNS = [
  'line',
  'status',
  'orderId',
  'name',
  'cpfCnpj',
  'pixKeyType',
  'pixKey',
  'valueCents',
  'amountAsWritten',
  'column',
  'message',
] as const;

/** A report line, every cell formula-safe; undefined for blank lines, which are not reported. */
export function validationReportLine(row: RowOutcome): string[] | undefined {
  let cells: string[];
  switch (row.kind) {
    case 'blank':
      return undefined;
    case 'valid': {
      const { payout, notes } = row;
      cells = [
        String(row.line),
        'valid',
        payout.orderId,
        payout.name,
        payout.cpfCnpj,
        payout.pixKeyType,
        payout.pixKey,
        String(payout.valueCents),
        row.cells.valueCents ?? row.cells.amountReais ?? '',
        notes.map((note) => note.column).join(', '),
        notes.map((note) => note.message).join('; '),
      ];
      break;
    }
    case 'invalid':
    case 'skipped': {
      const raw = row.cells;
      cells = [
        String(row.line),
        row.kind,
        raw.orderId ?? '',
        raw.name ?? '',
        raw.cpfCnpj ?? '',
        raw.pixKeyType ?? '',
        raw.pixKey ?? '',
        '',
        raw.valueCents ?? raw.amountReais ?? '',
        row.kind === 'invalid' ? row.column : '',
        row.kind === 'invalid' ? row.message : row.reason,
      ];
      break;
    }
  }
  return cells.map(safeCell);
}
