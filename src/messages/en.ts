/** English: the words the result files, summaries and tests have always used. */
import type { Catalog } from './catalog.js';

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const en: Catalog = {
  heading: {
    sandbox: 'sandbox',
    line: 'line',
    orderId: 'orderId',
    name: 'name',
    pixKeyType: 'pixKeyType',
    pixKey: 'pixKey',
    cpfCnpj: 'cpfCnpj',
    value: 'value',
    status: 'status',
    transactionId: 'transactionId',
    endToEndId: 'endToEndId',
    fee: 'fee',
    net: 'net',
    createdAt: 'createdAt',
    processedAt: 'processedAt',
    message: 'message',
    amountAsWritten: 'amountAsWritten',
    column: 'column',
  },
  state: {
    valid: 'valid',
    invalid: 'invalid',
    skipped: 'skipped',
    replay: 'replay',
    queued: 'queued',
    held: 'held',
    sending: 'sending',
    unknown: 'unknown',
    pending: 'pending',
    paid: 'paid',
    failed: 'failed',
    canceled: 'canceled',
    refunded: 'refunded',
    rejected: 'rejected',
    covered: 'covered',
    superseded: 'superseded',
    conflict: 'conflict',
    retried: 'retried',
  },
  outcome: ({ sentence }) => sentence,
  sandboxMoved: 'SANDBOX: no real money moved',
  sandboxRun: 'SANDBOX: no real money moved: these payouts went to the embedded sandbox',
  validated: ({ file, rows, valid, invalid, skipped, total }) =>
    `${file}: ${plural(rows, 'row')}: ${valid} valid, ${invalid} invalid, ${skipped} skipped; valid rows total ${total}`,
  readAs: ({ encoding, delimiter, orderIdColumn }) =>
    `read as ${encoding}, delimiter ${JSON.stringify(delimiter)}, ${
      orderIdColumn === null
        ? 'orderIds derived from each row (the file has no orderId column)'
        : `orderIds from column "${orderIdColumn}"`
    }`,
  rowsIn: ({ count, state, amount }) =>
    amount === null ? `${count} ${state}` : `${count} ${state} (${amount})`,
  noRows: 'no rows',
  fileSummary: ({ file, outcome, totals, total }) =>
    `${file}: ${outcome}; ${totals}; valid rows total ${total}`,
  resultAt: ({ path }) => `result: ${path}`,
  atLineColumn: ({ line, column, message }) => `line ${line}, column ${column}: ${message}`,
  invalidRowsTitle:
    'Invalid rows (fix them and drop the file again; valid rows are not held back by them):',
  warningsTitle: 'Warnings (the row is valid; check it was read as meant):',
  andMore: ({ count, report }) =>
    `… and ${count} more${report ? '' : ' (write them all with --report FILE)'}`,
  fileHeld: ({ message }) => `Held, nothing in this file will be paid: ${message}`,
  wouldHold: ({ note }) => `A run would hold it for a person: ${note}`,
  heldByRulesTitle: ({ journal }) =>
    `Held for a person by the rules on who is paid (against the journal ${journal}):`,
  heldRow: ({ line, rule, message }) => `line ${line} (${rule}): ${message}`,
  andMoreHeld: ({ count }) => `… and ${count} more (payouts run --dry-run --json lists them)`,
  skipped: ({ lines }) =>
    `Skipped: ${lines.map(({ line, reason }) => `line ${line} (${reason})`).join(', ')}`,
};
