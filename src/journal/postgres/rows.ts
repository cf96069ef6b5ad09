/**
 * What the parts of the PostgreSQL journal share to change rows, inside the caller's
 * transaction: the one guarded, audited move of a row (checked against the transition
 * table), the reads admission weighs a row by, and the shapes of the rows read.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import type { Said } from '../../messages/said.js';
import { keptMessage } from '../kept-message.js';
import type { Covering, Known } from '../admission.js';
import { JournalError } from '../journal-error.js';
import { canMove, type HoldReason, type RowState } from '../states.js';
import { canMoveBatch, type BatchState } from '../batch-states.js';
import { planUncover, type LinkedRow } from '../rules/uncover.js';
import { auditReasonOf, type PlannedMove, type RuleFields } from '../rules/plan.js';
import {
  coverOf,
  coverSince,
  WHOLE_JOURNAL,
  type CoverCandidate,
  type CoverKey,
} from '../rules/cover.js';
import type { AdmissionRules, BatchEvent, BatchLine, Claim, PayoutRecord } from '../types.js';
// The row shapes both stores read alike, and their mapping to the journal's types.
import {
  COVERING_COLUMNS,
  gatewayAnswerOf,
  reasonColumn,
  requestOf,
  toCovering,
  type BatchRow,
  type CoveringRow,
  type GatewayAnswerRow,
  type RequestRow,
} from '../sqlite/context.js';
import {
  saidJson,
  toCandidate,
  toLinkedRow,
  type CandidateRow,
  type LinkedRowRow,
} from '../sqlite/rows.js';
import type { Runner } from './connection.js';
import { AT, statement } from './sql.js';

/** The request's fields as columns, and the request they give back. */
export const REQUEST_COLUMNS =
  'order_id, value_cents, pix_key_type, pix_key, cpf_cnpj, name, email, phone, request_written';

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

export interface PayoutRow extends ClaimRow, GatewayAnswerRow {
  gateway_status: string | null;
  lease_owner: string | null;
  lease_until: number | null;
}

export const toPayout = (row: PayoutRow): PayoutRecord => ({
  ...toClaim(row),
  valueCents: row.value_cents,
  gatewayStatus: row.gateway_status,
  ...gatewayAnswerOf(row),
  leaseOwner: row.lease_owner,
  leaseUntil: row.lease_until,
});

/**
 * A possible cover's columns (sqlite/rows.ts CandidateRow): the rows that name it as
 * their cover come back as JSON text, as SQLite gives them.
 */
export const CANDIDATE_COLUMNS = `p.order_id, p.batch_id, p.line, p.state, p.admitted_at,
  p.transaction_id, p.value_cents, b.file_name, p.reference, p.id AS journal_order,
  p.last_sent_at, p.updated_at, b.state AS batch_state,
  COALESCE((SELECT json_agg(json_build_array(c.state, cb.state))
   FROM payouts c JOIN batches cb ON cb.id = c.batch_id WHERE c.covered_by = p.order_id),
   '[]'::json)::text AS covered_rows`;

/** The payouts that `match` a key, of batches other than `batch` (the cover rule weighs them). */
export const candidatesOf = (match: string, extraColumns = '', batch = '@batchId'): string =>
  [`p.batch_id < ${batch}`, `p.batch_id > ${batch}`]
    .map(
      (range) => `SELECT ${CANDIDATE_COLUMNS}${extraColumns} FROM payouts p
      JOIN batches b ON b.id = p.batch_id WHERE ${match} AND ${range}`,
    )
    .join(' UNION ALL ');

/** A row's document and amount. */
export const BY_AMOUNT = 'p.document = @document AND p.value_cents = @value';

export interface CandidateParams {
  document: string;
  value: number;
  batchId: number;
}

interface HoldQueuedParams {
  now: number | null;
  batchId: number;
  reason: HoldReason;
  message: string | null;
  said: string | null;
}

/** What admission weighs a row of its orderId against, read from `payouts p` and `batches b`. */
export const KNOWN_COLUMNS =
  'p.order_id, p.payload_hash, p.state, p.batch_id, p.line, p.admitted_at, b.file_name, b.name_key';

export interface KnownRow {
  payload_hash: Buffer;
  state: RowState;
  batch_id: number;
  line: number;
  admitted_at: number | null;
  file_name: string;
  name_key: string | null;
}

/** A KnownRow as weighed for a new batch named `nameKey`. */
export const toKnown = (row: KnownRow, nameKey: string | null): Known => ({
  payloadHash: row.payload_hash.toString('hex'),
  state: row.state,
  batchId: row.batch_id,
  line: row.line,
  fileName: row.file_name,
  admittedAt: row.admitted_at,
  sameName: nameKey !== null && row.name_key === nameKey,
});

const statements = {
  // A row moved by the rules on who is paid (never by an answer of the gateway).
  setRow: statement<{
    orderId: string;
    from: RowState;
    to: RowState;
    holdReason: HoldReason | null;
    coveredBy: string | null;
    message: string | null;
    said: string | null;
    supersededBy: number | null;
    now: number | null;
  }>(
    'set-row',
    `UPDATE payouts SET state = @to, hold_reason = @holdReason, covered_by = @coveredBy,
       message = @message, said = @said, superseded_by = @supersededBy, updated_at = ${AT}
     WHERE order_id = @orderId AND state = @from RETURNING id`,
  ),
  holdQueued: statement<HoldQueuedParams>(
    'hold-queued',
    `UPDATE payouts SET state = 'held', hold_reason = @reason,
       message = COALESCE(@message, message),
       said = CASE WHEN @message::text IS NULL THEN said ELSE @said END, updated_at = ${AT}
     WHERE batch_id = @batchId AND state = 'queued'
     RETURNING id, order_id`,
  ),
  moveBatch: statement<{ batchId: number; from: BatchState; to: BatchState }>(
    'move-batch',
    `UPDATE batches SET state = @to WHERE id = @batchId AND state = @from RETURNING id`,
  ),
  // The rows that name a payout as their cover, and those naming them in turn.
  linkedTo: statement<{ orderId: string }>(
    'linked-to',
    `WITH RECURSIVE linked (order_id) AS (
       SELECT order_id FROM payouts WHERE covered_by = @orderId
       UNION SELECT p.order_id FROM payouts p JOIN linked l ON p.covered_by = l.order_id)
     SELECT p.order_id, p.covered_by, p.state, p.hold_reason, p.batch_id,
       b.state AS batch_state, b.file_name
     FROM linked l JOIN payouts p ON p.order_id = l.order_id JOIN batches b ON b.id = p.batch_id`,
  ),
  addBatchEvent: statement<{
    batchId: number;
    now: number | null;
    event: string;
    by: string;
    detail: string;
  }>(
    'rows-add-batch-event',
    `INSERT INTO batch_events (batch_id, at, event, by, detail)
     VALUES (@batchId, ${AT}, @event, @by, @detail)`,
  ),
  coveringRow: statement<{ orderId: string }>(
    'covering-row',
    `SELECT ${COVERING_COLUMNS} FROM payouts p JOIN batches b ON b.id = p.batch_id
     WHERE p.order_id = @orderId`,
  ),
  at: statement<{ now: number | null }>('at', `SELECT ${AT} AS at`),
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
    `SELECT ${KNOWN_COLUMNS}
     FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = @orderId`,
  ),
  byAmount: statement<CandidateParams>('cover-by-amount', candidatesOf(BY_AMOUNT)),
  byReference: statement<CandidateParams & { reference: string }>(
    'cover-by-reference',
    `${candidatesOf('p.document = @document AND p.reference = @reference')} UNION ALL
     ${candidatesOf(`${BY_AMOUNT} AND p.reference IS NULL`)}`,
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

  /** The journal's time in this transaction: its clock's, or the database's. */
  async function at(): Promise<number> {
    if (now !== null) return now;
    const [row] = await tx.rows<{ at: number }, { now: null }>(statements.at, { now: null });
    if (!row) throw new JournalError('unavailable', 'the database gave no time');
    return row.at;
  }

  /** One entry each for rows moved together from `from` to `to`, in the order given. */
  async function auditMany(
    from: RowState,
    to: RowState,
    moved: readonly { id: number; reason: Said }[],
  ): Promise<void> {
    if (moved.length === 0) return;
    await tx.count(statements.auditMany, {
      ids: moved.map((row) => row.id),
      now,
      from,
      to,
      reasons: moved.map((row) => reasonColumn(row.reason)),
    });
  }

  /** A guarded move of a row this transaction has just read in `from`: it must happen. */
  async function mustMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: Said,
    write: () => Promise<{ id: number }[]>,
  ): Promise<void> {
    if (!(await guardedMove(orderId, from, to, reason, write))) {
      throw new JournalError('refused', `${orderId}: not ${from} any more`);
    }
  }

  /**
   * Rows moved together by one guarded UPDATE ... RETURNING id, order_id: the move checked
   * once, each row audited with `reason`.
   */
  async function movedTogether<R extends { id: number; order_id: string }>(
    from: RowState,
    to: RowState,
    reason: Said,
    write: () => Promise<R[]>,
  ): Promise<R[]> {
    allowMove(from, to, 'rows');
    const moved = await write();
    await auditMany(
      from,
      to,
      moved.map((row) => ({ id: row.id, reason })),
    );
    return moved;
  }

  /** One guarded batch move: checked against the batch transition table, guarded by the state read. */
  async function moveBatch(batchId: number, to: BatchState): Promise<void> {
    const from = (await batchRow(batchId))?.state;
    if (from === undefined)
      throw new JournalError('refused', `batch ${batchId} is not in the journal`);
    if (!canMoveBatch(from, to)) {
      throw new JournalError(
        'refused',
        `batch ${batchId}: a move from ${from} to ${to} is not allowed`,
      );
    }
    if ((await tx.count(statements.moveBatch, { batchId, from, to })) !== 1) {
      throw new JournalError('refused', `batch ${batchId}: not ${from} any more`);
    }
  }

  /** Moves a row for a rule on who is paid. */
  async function moveRow(
    orderId: string,
    from: RowState,
    to: RowState,
    fields: RuleFields,
    reason: Said,
  ): Promise<void> {
    await mustMove(orderId, from, to, reason, () =>
      tx.rows(statements.setRow, {
        orderId,
        from,
        to,
        holdReason: fields.holdReason ?? null,
        coveredBy: fields.coveredBy ?? null,
        message: fields.said ? keptMessage(fields.said) : null,
        said: saidJson(fields.said),
        supersededBy: fields.supersededBy ?? null,
        now,
      }),
    );
  }

  /** Applies a rule's plan: each move guarded by the state the plan read, checked and audited. */
  async function applyPlan(moves: readonly PlannedMove[], why: Said): Promise<void> {
    for (const move of moves) {
      await moveRow(move.orderId, move.from, move.to, move.fields, auditReasonOf(move.reason, why));
    }
  }

  /** The rows that name `orderId` as their cover, directly or through one another. */
  async function linkedTo(orderId: string): Promise<LinkedRow[]> {
    const linked = await tx.rows<LinkedRowRow, { orderId: string }>(statements.linkedTo, {
      orderId,
    });
    return linked.map(toLinkedRow);
  }

  return {
    at,
    mustMove,
    movedTogether,
    moveBatch,
    moveRow,
    applyPlan,
    /** Holds a batch's queued rows; `said`, where a rule says why, becomes each row's message. */
    async holdQueuedRows(
      batchId: number,
      kind: HoldReason,
      reason: Said,
      said?: Said,
    ): Promise<void> {
      await movedTogether('queued', 'held', reason, () =>
        tx.rows<{ id: number; order_id: string }, HoldQueuedParams>(statements.holdQueued, {
          now,
          batchId,
          reason: kind,
          message: said ? keptMessage(said) : null,
          said: saidJson(said),
        }),
      );
    },
    linkedTo,
    /** Covered follows its cover (planUncover), inside the caller's transaction. */
    async uncoverRowsOf(orderId: string): Promise<void> {
      const linked = await linkedTo(orderId);
      if (linked.length === 0) return;
      const [cover] = await tx.rows<CoveringRow, { orderId: string }>(statements.coveringRow, {
        orderId,
      });
      if (!cover) return;
      const plan = planUncover(toCovering(cover), linked);
      await applyPlan(plan.moves, plan.why);
      for (const batchId of plan.reopen) await moveBatch(batchId, 'open');
    },
    /** Records a person's decision about a batch, with who and when. */
    async addBatchEvent(
      batchId: number,
      event: BatchEvent['event'],
      by: string,
      detail: Said,
    ): Promise<void> {
      await tx.count(statements.addBatchEvent, {
        batchId,
        now,
        event,
        by,
        detail: reasonColumn(detail),
      });
    },
    auditById,
    auditMany,
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
      const [row] = await tx.rows<KnownRow, { orderId: string }>(statements.known, { orderId });
      return row && toKnown(row, nameKey);
    },

    /**
     * The payouts of other files than batch `batchId` a row of it is weighed against by
     * the cover rule: of its document, with its amount or (given one) its reference.
     */
    async coverCandidates(key: CoverKey, batchId: number): Promise<CoverCandidate[]> {
      const params = { document: key.document, value: key.valueCents, batchId };
      const found =
        key.reference === null
          ? await tx.rows<CandidateRow, CandidateParams>(statements.byAmount, params)
          : await tx.rows<CandidateRow, CandidateParams & { reference: string }>(
              statements.byReference,
              { ...params, reference: key.reference },
            );
      return found.map(toCandidate);
    },

    /** The payout that covers a row of this batch now, by the cover rule (coverOf). */
    async coveringOf(
      key: CoverKey,
      batchId: number,
      rules: AdmissionRules,
      range = WHOLE_JOURNAL,
    ): Promise<Covering | undefined> {
      const candidates = await this.coverCandidates(key, batchId);
      return coverOf(key, batchId, candidates, { since: coverSince(await at(), rules), range });
    },
  };
}

export type Rows = ReturnType<typeof rowsOn>;
