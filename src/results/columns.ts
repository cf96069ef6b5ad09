/** Which columns the CSVs of ours for people have, and in which order. */
import type { Heading } from '../messages/catalog.js';

/** The columns of a result file, in the file's order; their words are the catalogs' headings. */
export const RESULT_COLUMNS = [
  'line',
  'orderId',
  'name',
  'pixKeyType',
  'pixKey',
  'cpfCnpj',
  'value',
  'status',
  'transactionId',
  'endToEndId',
  'fee',
  'net',
  'createdAt',
  'processedAt',
  'message',
] as const satisfies readonly Heading[];
export type ResultColumn = (typeof RESULT_COLUMNS)[number];

/** Trailing columns of a batch released by approval only: a file of one with none keeps 15. */
export const APPROVAL_COLUMNS = ['droppedBy', 'approvedBy'] as const satisfies readonly Heading[];

/** The columns of a `validate --report`, in the file's order. */
export const REPORT_COLUMNS = [
  'line',
  'status',
  'orderId',
  'name',
  'cpfCnpj',
  'pixKeyType',
  'pixKey',
  'value',
  'amountAsWritten',
  'column',
  'message',
] as const satisfies readonly Heading[];
