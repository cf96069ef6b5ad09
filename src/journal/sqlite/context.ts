/**
 * What every part of the SQLite journal shares: the database, the clock, write
 * transactions, and the shapes of the rows its statements read.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import type { Said } from '../../messages/said.js';
import type { Covering } from '../admission.js';
import type { BatchState } from '../batch-states.js';
import type { HoldReason, RowState } from '../states.js';
import type { BatchRecord, Claim, LineKind, PayoutRecord } from '../types.js';
import type { Database } from '../sqlite.js';
import { failpoint } from '../../runtime/failpoint.js';

export interface Context {
  db: Database;
  /** Milliseconds since the epoch. */
  now: () => number;
  /**
   * A write transaction that takes the write lock at BEGIN: a deferred one that reads
   * first would fail at once, not wait, when another process writes meanwhile.
   */
  writing: <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R;
  /**
   * `writing` for what a file brings in (its payouts, its other lines), committed without
   * waiting for the disk (synchronous=NORMAL): a row admitted leaves only after a claim's
   * FULL commit, whose sync of the write-ahead log makes every commit before it durable
   * too. A power cut may lose the last chunks of a file still being admitted, which its
   * next run admits again: a wait for the disk at each of a large file's commits would slow
   * admission for no safety gained (docs/benchmarks.md, admit).
   * Nor does its commit copy the log into the database (a checkpoint) until the log holds
   * ADMITTING_CHECKPOINT_PAGES: see there.
   */
  admitting: <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R;
}

/**
 * Pages the write-ahead log may hold before a file's commit copies them into the database
 * (SQLite's 1,000 for every other commit): a page several chunks change is copied once, not
 * at each chunk's commit (docs/benchmarks.md). The log keeps on disk the size it reached.
 */
const ADMITTING_CHECKPOINT_PAGES = 20_000;

export function contextOf(db: Database, now: () => number): Context {
  const checkpointPages = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  // Given back as it was (FULL as the journal opens), so a claim after an admission
  // never commits with less than the connection had.
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  return {
    db,
    now,
    writing: <A extends unknown[], R>(fn: (...args: A) => R) => {
      const transaction = db.transaction(fn);
      return (...args: A): R => transaction.immediate(...args);
    },
    admitting: <A extends unknown[], R>(fn: (...args: A) => R) => {
      const transaction = db.transaction(fn);
      return (...args: A): R => {
        failpoint('admitting-chunk');
        db.pragma('synchronous = NORMAL');
        db.pragma(`wal_autocheckpoint = ${ADMITTING_CHECKPOINT_PAGES}`);
        try {
          return transaction.immediate(...args);
        } finally {
          db.pragma(`synchronous = ${synchronous}`);
          db.pragma(`wal_autocheckpoint = ${checkpointPages}`);
        }
      };
    },
  };
}

/**
 * A part of the journal as SQLite answers it: at once, each method returning what the
 * declared one resolves to. open.ts makes the whole the async `Journal` in one place.
 */
export type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K];
};

/** States (of rows or batches) as an SQL list: constants of ours, never input. */
export function inList(states: readonly (RowState | BatchState)[]): string {
  return states.map((state) => `'${state}'`).join(', ');
}

export interface BatchRow {
  id: number;
  file_name: string;
  sha256: string;
  received_at: number;
  state: BatchState;
  rows: number;
  valid: number;
  invalid: number;
  total_cents: number;
  problems: string;
  result_name: string | null;
  awaiting_name: string | null;
  held_because: string | null;
  name_key: string | null;
  name_number: number | null;
  order_id_home: string | null;
}

export function toBatch(row: BatchRow): BatchRecord {
  return {
    id: row.id,
    fileName: row.file_name,
    sha256: row.sha256,
    receivedAt: row.received_at,
    state: row.state,
    rows: row.rows,
    valid: row.valid,
    invalid: row.invalid,
    totalCents: row.total_cents,
    // Journals before problems were values kept English sentences.
    problems: (JSON.parse(row.problems) as (string | Said)[]).map((problem) =>
      typeof problem === 'string' ? english(problem) : problem,
    ),
    awaitingName: row.awaiting_name,
    // Journals before the reason was kept as a value kept its English sentence.
    heldBecause: row.held_because === null ? null : reasonOf(row.held_because),
    nameKey: row.name_key,
    nameNumber: row.name_number ?? 1,
    orderIdHome: row.order_id_home ?? null,
    resultName: row.result_name,
  };
}

export interface LineRow {
  line: number;
  kind: LineKind;
  order_id: string | null;
  column_heading: string | null;
  message: string;
  said: string | null;
}

export const saidOf = (json: string | null): Said | null =>
  json === null ? null : (JSON.parse(json) as Said);

/**
 * An audit reason as its column holds it: a caller's English as written, any other value
 * as JSON, and English that opens with a brace as JSON too, so it reads back as words.
 */
export const reasonColumn = (reason: Said): string =>
  reason.code === 'english' && !reason.text.startsWith('{') ? reason.text : JSON.stringify(reason);

/** A reason column read back; journals before reasons were values hold English as written. */
export function reasonOf(column: string): Said {
  if (column.startsWith('{')) {
    try {
      const value = JSON.parse(column) as unknown;
      if (typeof value === 'object' && value !== null && 'code' in value) return value as Said;
    } catch {
      // An older journal's words that open with a brace: they are still words.
    }
  }
  return english(column);
}

/** A caller's reason, in its English. */
export const english = (text: string): Said => ({ code: 'english', text });

export interface CoveringRow {
  order_id: string;
  batch_id: number;
  line: number;
  state: RowState;
  admitted_at: number;
  transaction_id: number | null;
  value_cents: number;
  file_name: string;
  /** Read where the cover rule weighs references (rows.ts). */
  reference?: string | null;
}

/** A CoveringRow's columns, read from `payouts p` joined to its batch `b`. */
export const COVERING_COLUMNS =
  'p.order_id, p.batch_id, p.line, p.state, p.admitted_at, p.transaction_id, p.value_cents, b.file_name';

export function toCovering(row: CoveringRow): Covering {
  return {
    orderId: row.order_id,
    batchId: row.batch_id,
    line: row.line,
    state: row.state,
    fileName: row.file_name,
    admittedAt: row.admitted_at,
    transactionId: row.transaction_id,
    valueCents: row.value_cents,
    reference: row.reference ?? null,
  };
}

export interface RequestRow {
  order_id: string;
  value_cents: number;
  pix_key_type: number;
  pix_key: string;
  cpf_cnpj: string;
  name: string;
  email: string;
  phone: string;
  /** The request's own text, kept where the columns cannot give it back to the byte. */
  request_written: string | null;
}

/** The request as journaled, in the reader's key order (toCashOutRequest). */
export const requestOf = (row: RequestRow): CashOutRequest =>
  row.request_written === null
    ? requestOfColumns(row)
    : (JSON.parse(row.request_written) as CashOutRequest);

const requestOfColumns = (row: RequestRow): CashOutRequest => ({
  value: row.value_cents,
  pixKeyType: row.pix_key_type,
  pixKey: row.pix_key,
  cpfCnpj: row.cpf_cnpj,
  person: { name: row.name, email: row.email, phone: row.phone },
  orderId: row.order_id,
});

export interface ClaimRow {
  order_id: string;
  batch_id: number;
  line: number;
  fence: number;
  state: RowState;
  request: string;
  attempts: number;
  not_found: number;
  last_sent_at: number | null;
  transaction_id: number | null;
  polls: number;
}

export function toClaim(row: ClaimRow): Claim {
  return {
    orderId: row.order_id,
    batchId: row.batch_id,
    line: row.line,
    fence: row.fence,
    state: row.state,
    request: JSON.parse(row.request) as CashOutRequest,
    attempts: row.attempts,
    notFound: row.not_found,
    lastSentAt: row.last_sent_at,
    transactionId: row.transaction_id,
    polls: row.polls,
  };
}

/** What the gateway answered of a payout, as a result line shows it: one place for both stores. */
export const GATEWAY_ANSWER_COLUMNS = [
  'message',
  'said',
  'fee',
  'net',
  'gateway_created_at',
  'end_to_end_id',
  'processed_at',
] as const;
export type GatewayAnswerRow = Record<(typeof GATEWAY_ANSWER_COLUMNS)[number], string | null>;

/** A payout's or a result line's answer columns, as its record holds them. */
export const gatewayAnswerOf = (
  row: GatewayAnswerRow,
): Pick<
  PayoutRecord,
  'message' | 'said' | 'fee' | 'net' | 'gatewayCreatedAt' | 'endToEndId' | 'processedAt'
> => ({
  message: row.message,
  said: saidOf(row.said),
  fee: row.fee,
  net: row.net,
  gatewayCreatedAt: row.gateway_created_at,
  endToEndId: row.end_to_end_id,
  processedAt: row.processed_at,
});

/** A row of `payouts` as `SELECT *` reads it (the columns we use). */
export interface PayoutRow extends ClaimRow, GatewayAnswerRow {
  value_cents: number;
  gateway_status: string | null;
  lease_owner: string | null;
  lease_until: number | null;
  hold_reason: HoldReason | null;
  admitted_at: number | null;
  released_at: number | null;
}

export function toPayout(row: PayoutRow): PayoutRecord {
  return {
    ...toClaim(row),
    batchId: row.batch_id,
    line: row.line,
    valueCents: row.value_cents,
    gatewayStatus: row.gateway_status,
    ...gatewayAnswerOf(row),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
  };
}
