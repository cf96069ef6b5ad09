/**
 * What the parts of the PostgreSQL journal share to change rows, inside the caller's
 * transaction: the one guarded, audited move of a row (checked against the transition
 * table), the reads admission weighs a row by, and the shapes of the rows read.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import type { Said } from '../../messages/said.js';
import { keptMessage } from '../kept-message.js';
import { isPeriod } from '../../csv/reference.js';
import type { Covering, Known } from '../admission.js';
import { JournalError } from '../journal-error.js';
import { canMove, MAY_MOVE_MONEY, SENT, type HoldReason, type RowState } from '../states.js';
import type { BatchLine, Claim, PayoutRecord } from '../types.js';
// The row shapes both stores read alike, and their mapping to the journal's types.
import {
  reasonColumn,
  saidOf,
  toCovering,
  type BatchRow,
  type CoveringRow,
} from '../sqlite/context.js';
import { saidJson } from '../sqlite/rows.js';
import type { Runner } from './connection.js';
import { AT, inList, statement } from './sql.js';

/** The request's fields as columns, and the request they give back. */
export const REQUEST_COLUMNS =
  'order_id, value_cents, pix_key_type, pix_key, cpf_cnpj, name, email, phone';

export interface RequestRow {
  order_id: string;
  value_cents: number;
  pix_key_type: number;
  pix_key: string;
  cpf_cnpj: string;
  name: string;
  email: string;
  phone: string;
}

/** The request as journaled, in the reader's key order (toCashOutRequest). */
export const requestOf = (row: RequestRow): CashOutRequest => ({
  value: row.value_cents,
  pixKeyType: row.pix_key_type,
  pixKey: row.pix_key,
  cpfCnpj: row.cpf_cnpj,
  person: { name: row.name, email: row.email, phone: row.phone },
  orderId: row.order_id,
});

export const CLAIM_COLUMNS = `id, ${REQUEST_COLUMNS}, batch_id, line, fence, state, attempts, not_found, last_sent_at, transaction_id, polls`;

export interface ClaimRow extends RequestRow {
  id: number;
  batch_id: number;
  line: number;
  fence: number;
  state: RowState;
  attempts: number;
  not_found: number;
  last_sent_at: number | null;
  transaction_id: number | null;
  polls: number;
}

export const toClaim = (row: ClaimRow): Claim => ({
  orderId: row.order_id,
  batchId: row.batch_id,
  line: row.line,
  fence: row.fence,
  state: row.state,
  request: requestOf(row),
  attempts: row.attempts,
  notFound: row.not_found,
  lastSentAt: row.last_sent_at,
  transactionId: row.transaction_id,
  polls: row.polls,
});

export interface PayoutRow extends ClaimRow {
  gateway_status: string | null;
  message: string | null;
  said: string | null;
  fee: string | null;
  net: string | null;
  gateway_created_at: string | null;
  end_to_end_id: string | null;
  processed_at: string | null;
  lease_owner: string | null;
  lease_until: number | null;
}

export const toPayout = (row: PayoutRow): PayoutRecord => ({
  ...toClaim(row),
  valueCents: row.value_cents,
  gatewayStatus: row.gateway_status,
  message: row.message,
  said: saidOf(row.said),
  fee: row.fee,
  net: row.net,
  gatewayCreatedAt: row.gateway_created_at,
  endToEndId: row.end_to_end_id,
  processedAt: row.processed_at,
  leaseOwner: row.lease_owner,
  leaseUntil: row.lease_until,
});

/** What the cover rule weighs a row by (see sqlite/rows.ts, whose rule this is too). */
export interface CoverKey {
  orderId: string;
  document: string;
  valueCents: number;
  reference: string | null;
}

const WITHIN_WINDOW = `(GREATEST(COALESCE(p.last_sent_at, 0), p.updated_at) >= ${AT} - @windowMs
      OR (p.state = 'queued' AND p.last_sent_at IS NULL))`;

function coveringIn(files: string, match: string): string {
  return `
    SELECT p.order_id, p.batch_id, p.line, p.state, p.admitted_at, p.transaction_id,
      p.value_cents, b.file_name, p.reference, p.id AS journal_order
    FROM payouts p JOIN batches b ON b.id = p.batch_id
    WHERE ${match} AND ${files}
      AND (p.id < @before OR p.state IN (${inList(SENT)})) AND p.id > @after
      AND p.order_id <> @orderId
      AND p.state IN (${inList(MAY_MOVE_MONEY)})
      AND b.state NOT IN ('refused', 'unusable')
      AND NOT EXISTS (
        SELECT 1 FROM payouts c JOIN batches cb ON cb.id = c.batch_id
        WHERE c.covered_by = p.order_id AND c.state IN ('held', 'covered')
          AND cb.state NOT IN ('refused', 'unusable'))`;
}

const BY_AMOUNT = `p.document = @document AND p.value_cents = @value AND ${WITHIN_WINDOW}`;
const BY_REFERENCE = `p.document = @document AND p.reference = @reference
      AND (NOT @period::boolean OR p.value_cents = @value)`;

const firstCovering = (matches: readonly string[]): string =>
  `${matches
    .flatMap((match) => [
      `(${coveringIn('p.batch_id < @batchId', match)})`,
      `(${coveringIn('p.batch_id > @batchId', match)})`,
    ])
    .join(' UNION ALL ')} ORDER BY journal_order LIMIT 1`;

interface CoveringParams {
  document: string;
  value: number;
  now: number | null;
  windowMs: number;
  batchId: number;
  orderId: string;
  before: number;
  after: number;
}

const statements = {
  auditById: statement<{
    id: number;
    now: number | null;
    from: RowState | null;
    to: RowState;
    reason: string;
  }>(
    'audit-by-id',
    `INSERT INTO audit (payout_id, at, from_state, to_state, reason)
     VALUES (@id, ${AT}, @from, @to, @reason)`,
  ),
  auditMany: statement<{
    ids: number[];
    now: number | null;
    from: RowState;
    to: RowState;
    reasons: string[];
  }>(
    'audit-many',
    `INSERT INTO audit (payout_id, at, from_state, to_state, reason)
     SELECT id, ${AT}, @from, @to, reason
     FROM unnest(@ids::bigint[], @reasons::text[]) WITH ORDINALITY AS a (id, reason, n)
     ORDER BY n`,
  ),
  payout: statement<{ orderId: string }>(
    'payout',
    `SELECT * FROM payouts WHERE order_id = @orderId`,
  ),
  batch: statement<{ id: number }>('batch', `SELECT * FROM batches WHERE id = @id`),
  known: statement<{ orderId: string }>(
    'known',
    `SELECT p.payload_hash, p.state, p.batch_id, p.line, p.admitted_at, b.file_name, b.name_key
     FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = @orderId`,
  ),
  covering: statement<CoveringParams>('covering', firstCovering([BY_AMOUNT])),
  coveringReferenced: statement<CoveringParams & { reference: string; period: boolean }>(
    'covering-referenced',
    firstCovering([BY_REFERENCE, `${BY_AMOUNT} AND p.reference IS NULL`]),
  ),
  insertLine: statement<{
    batchId: number;
    line: number;
    kind: BatchLine['kind'];
    orderId: string | null;
    column: string | null;
    message: string;
    name: string | null;
    valueCents: number | null;
    valueWritten: string | null;
    said: string | null;
    cpfCnpj: string | null;
    pixKeyType: string | null;
    pixKey: string | null;
  }>(
    'insert-line',
    `INSERT INTO batch_lines (batch_id, line, kind, order_id, column_heading, message, name,
       value_cents, value_written, said, cpf_cnpj, pix_key_type, pix_key)
     VALUES (@batchId, @line, @kind, @orderId, @column, @message, @name, @valueCents,
       @valueWritten, @said, @cpfCnpj, @pixKeyType, @pixKey)
     ON CONFLICT (batch_id, line) DO UPDATE SET kind = excluded.kind,
       order_id = excluded.order_id, column_heading = excluded.column_heading,
       message = excluded.message, name = excluded.name, value_cents = excluded.value_cents,
       value_written = excluded.value_written, said = excluded.said,
       cpf_cnpj = excluded.cpf_cnpj, pix_key_type = excluded.pix_key_type,
       pix_key = excluded.pix_key`,
  ),
  holdQueuedRow: statement<{
    orderId: string;
    holdReason: HoldReason;
    coveredBy: string | null;
    message: string;
    said: string | null;
    now: number | null;
  }>(
    'hold-queued-row',
    `UPDATE payouts SET state = 'held', hold_reason = @holdReason, covered_by = @coveredBy,
       message = @message, said = @said, updated_at = ${AT}
     WHERE order_id = @orderId AND state = 'queued' RETURNING id`,
  ),
};

/** The journal's rows as one transaction (or the pool) reads and moves them. */
export function rowsOn(tx: Runner, now: number | null) {
  async function auditById(
    id: number,
    from: RowState | null,
    to: RowState,
    reason: Said,
  ): Promise<void> {
    await tx.count(statements.auditById, { id, now, from, to, reason: reasonColumn(reason) });
  }

  /** The one check of a move against the transition table. */
  function allowMove(from: RowState, to: RowState, what: string): void {
    if (!canMove(from, to)) {
      throw new JournalError('refused', `${what}: a move from ${from} to ${to} is not allowed`);
    }
  }

  /**
   * The one guarded, audited move of a row: refused unless the table allows it, written
   * by `write` (an UPDATE guarded by the row's state and fence, RETURNING its id),
   * audited unless `reason` is null. False when no row changed.
   */
  async function guardedMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: Said | null,
    write: () => Promise<{ id: number }[]>,
  ): Promise<boolean> {
    allowMove(from, to, orderId);
    const [moved] = await write();
    if (!moved) return false;
    if (reason !== null) await auditById(moved.id, from, to, reason);
    return true;
  }

  async function payoutRow(orderId: string): Promise<PayoutRow | undefined> {
    return (await tx.rows<PayoutRow, { orderId: string }>(statements.payout, { orderId }))[0];
  }

  async function batchRow(id: number): Promise<BatchRow | undefined> {
    return (await tx.rows<BatchRow, { id: number }>(statements.batch, { id }))[0];
  }

  return {
    auditById,
    /** One entry each for rows moved together from `from` to `to`, in the order given. */
    auditMany: async (
      from: RowState,
      to: RowState,
      moved: readonly { id: number; reason: Said }[],
    ): Promise<void> => {
      if (moved.length === 0) return;
      await tx.count(statements.auditMany, {
        ids: moved.map((row) => row.id),
        now,
        from,
        to,
        reasons: moved.map((row) => reasonColumn(row.reason)),
      });
    },
    allowMove,
    guardedMove,
    payoutRow,
    batchRow,

    async insertLines(batchId: number, lines: readonly BatchLine[]): Promise<void> {
      for (const line of lines) {
        await tx.count(statements.insertLine, {
          batchId,
          line: line.line,
          kind: line.kind,
          orderId: line.orderId,
          column: line.column,
          message: line.message,
          name: line.name ?? null,
          valueCents: line.valueCents ?? null,
          valueWritten: line.valueWritten ?? null,
          said: saidJson(line.said),
          cpfCnpj: line.cpfCnpj ?? null,
          pixKeyType: line.pixKeyType ?? null,
          pixKey: line.pixKey ?? null,
        });
      }
    },

    /** Holds a queued row by a rule on who is paid, saying why. */
    async holdQueuedRow(
      orderId: string,
      holdReason: HoldReason,
      said: Said,
      options: { coveredBy?: string; reason?: Said } = {},
    ): Promise<void> {
      const message = keptMessage(said);
      const moved = await guardedMove(orderId, 'queued', 'held', options.reason ?? said, () =>
        tx.rows(statements.holdQueuedRow, {
          orderId,
          holdReason,
          coveredBy: options.coveredBy ?? null,
          message,
          said: saidJson(said),
          now,
        }),
      );
      if (!moved) throw new JournalError('refused', `${orderId}: not queued any more`);
    },

    /** What admission weighs a row of this orderId against, in a batch named `nameKey`. */
    async knownOf(orderId: string, nameKey: string | null): Promise<Known | undefined> {
      const [row] = await tx.rows<
        {
          payload_hash: Buffer;
          state: RowState;
          batch_id: number;
          line: number;
          admitted_at: number | null;
          file_name: string;
          name_key: string | null;
        },
        { orderId: string }
      >(statements.known, { orderId });
      return (
        row && {
          payloadHash: row.payload_hash.toString('hex'),
          state: row.state,
          batchId: row.batch_id,
          line: row.line,
          fileName: row.file_name,
          admittedAt: row.admitted_at,
          sameName: nameKey !== null && row.name_key === nameKey,
        }
      );
    },

    /** The payout that would cover a row of this batch (the cover rule: sqlite/rows.ts). */
    async coveringOf(
      key: CoverKey,
      batchId: number,
      windowMs: number,
      before = Number.MAX_SAFE_INTEGER,
      after = 0,
    ): Promise<Covering | undefined> {
      const params = {
        document: key.document,
        value: key.valueCents,
        now,
        windowMs,
        batchId,
        orderId: key.orderId,
        before,
        after,
      };
      const [row] =
        key.reference === null
          ? await tx.rows<CoveringRow, CoveringParams>(statements.covering, params)
          : await tx.rows<CoveringRow, CoveringParams & { reference: string; period: boolean }>(
              statements.coveringReferenced,
              { ...params, reference: key.reference, period: isPeriod(key.reference) },
            );
      return row && toCovering(row);
    },
  };
}

export type Rows = ReturnType<typeof rowsOn>;
