/**
 * What the parts of the SQLite journal share to change rows: the one guarded, audited
 * move of a row, the guarded move of a batch, the lines of a batch that are not payouts, and the reads every rule needs (a
 * payout, a batch, what covers a row, what is known of an orderId).
 */
import type { Covering, Known } from '../admission.js';
import {
  coverOf,
  coverSince,
  WHOLE_JOURNAL,
  type CoverCandidate,
  type CoverKey,
} from '../rules/cover.js';
import { canMoveBatch, type BatchState } from '../batch-states.js';
import { JournalError } from '../journal-error.js';
import { canMove, type HoldReason, type RowState } from '../states.js';
import type { Said } from '../../messages/said.js';
import { auditReasonOf, type PlannedMove, type RuleFields } from '../rules/plan.js';
import { planUncover, type LinkedRow } from '../rules/uncover.js';
import { keptMessage } from '../kept-message.js';
import type { AdmissionRules, BatchEvent, BatchLine } from '../types.js';
import {
  inList,
  reasonColumn,
  toCovering,
  type BatchRow,
  type Context,
  COVERING_COLUMNS,
  type CoveringRow,
  type PayoutRow,
} from './context.js';

export type Rows = ReturnType<typeof createRows>;

/** A row that names a payout as its cover, as both stores read it (see linkedTo). */
export interface LinkedRowRow {
  order_id: string;
  covered_by: string;
  state: RowState;
  hold_reason: HoldReason | null;
  batch_id: number;
  batch_state: BatchState;
  file_name: string;
}

export const toLinkedRow = (row: LinkedRowRow): LinkedRow => ({
  orderId: row.order_id,
  coveredBy: row.covered_by,
  state: row.state,
  holdReason: row.hold_reason,
  batchId: row.batch_id,
  batchState: row.batch_state,
  fileName: row.file_name,
});

/** A possible cover as the store reads it (see candidatesOf). */
export interface CandidateRow extends CoveringRow {
  journal_order: number;
  last_sent_at: number | null;
  updated_at: number;
  batch_state: BatchState;
  /** JSON: each row that names it as its cover, as [its state, its batch's state]. */
  covered_rows: string;
}

/** A CandidateRow's columns, read from `payouts p` joined to its batch `b`. */
const CANDIDATE_COLUMNS = `${COVERING_COLUMNS}, p.reference, p.id AS journal_order,
  p.last_sent_at, p.updated_at, b.state AS batch_state,
  (SELECT json_group_array(json_array(c.state, cb.state))
   FROM payouts c JOIN batches cb ON cb.id = c.batch_id WHERE c.covered_by = p.order_id)
  AS covered_rows`;

/**
 * The payouts that `match` a key, of batches other than @batchId: earlier files and later
 * ones are two ranges of payouts_by_cover (migration 19), so a file's own rows, however
 * many share its document and amount, are never read. The cover rule weighs the rest.
 */
export function candidatesOf(match: string, extraColumns = ''): string {
  return ['p.batch_id < @batchId', 'p.batch_id > @batchId']
    .map(
      (range) => `
    SELECT ${CANDIDATE_COLUMNS}${extraColumns} FROM payouts p JOIN batches b ON b.id = p.batch_id
    WHERE ${match} AND ${range}`,
    )
    .join(' UNION ALL');
}

/** A row's document and amount. */
export const BY_AMOUNT = 'p.document = @document AND p.value_cents = @value';
/** A row's document and reference (payouts_by_reference, migration 24). */
const BY_REFERENCE = 'p.document = @document AND p.reference = @reference';
/** A row's document and amount, of payouts without a reference (migration 24). */
const BY_AMOUNT_UNREFERENCED = `${BY_AMOUNT} AND p.reference IS NULL`;

export function toCandidate(row: CandidateRow): CoverCandidate {
  const covered = JSON.parse(row.covered_rows) as [RowState, BatchState][];
  return {
    covering: toCovering(row),
    journalOrder: row.journal_order,
    lastSentAt: row.last_sent_at,
    updatedAt: row.updated_at,
    batchState: row.batch_state,
    coveredRows: covered.map(([state, batchState]) => ({ state, batchState })),
  };
}

/** A Said as its journal column holds it. */
export const saidJson = (said: Said | null | undefined): string | null =>
  said ? JSON.stringify(said) : null;

export function createRows({ db, now }: Context) {
  const statements = {
    audit: db.prepare<[number, RowState | null, RowState, string, string]>(
      `INSERT INTO audit (payout_id, at, from_state, to_state, reason)
       SELECT id, ?, ?, ?, ? FROM payouts WHERE order_id = ?`,
    ),
    auditById: db.prepare<[number, number, RowState | null, RowState, string]>(
      `INSERT INTO audit (payout_id, at, from_state, to_state, reason) VALUES (?, ?, ?, ?, ?)`,
    ),
    payout: db.prepare<[string], PayoutRow>(`SELECT * FROM payouts WHERE order_id = ?`),
    batchById: db.prepare<[number], BatchRow>(`SELECT * FROM batches WHERE id = ?`),
    addBatchEvent: db.prepare<[number, number, string, string, string]>(
      `INSERT INTO batch_events (batch_id, at, event, by, detail) VALUES (?, ?, ?, ?, ?)`,
    ),
    moveBatch: db.prepare<{ batchId: number; from: BatchState; to: BatchState }>(
      `UPDATE batches SET state = @to WHERE id = @batchId AND state = @from`,
    ),
    // A row moved by the rules on who is paid (never by an answer of the gateway).
    setRow: db.prepare<{
      orderId: string;
      from: RowState;
      to: RowState;
      holdReason: HoldReason | null;
      coveredBy: string | null;
      message: string | null;
      said: string | null;
      supersededBy: number | null;
      now: number;
    }>(`
      UPDATE payouts SET state = @to, hold_reason = @holdReason, covered_by = @coveredBy,
        message = @message, said = @said, superseded_by = @supersededBy, updated_at = @now
      WHERE order_id = @orderId AND state = @from`),
    holdQueuedRow: db.prepare<{
      orderId: string;
      holdReason: HoldReason;
      coveredBy: string | null;
      message: string;
      said: string | null;
      now: number;
    }>(`
      UPDATE payouts SET state = 'held', hold_reason = @holdReason, covered_by = @coveredBy,
        message = @message, said = @said, updated_at = @now
      WHERE order_id = @orderId AND state = 'queued'`),
    holdQueued: db.prepare<
      {
        now: number;
        batchId: number;
        reason: HoldReason;
        message: string | null;
        said: string | null;
      },
      { order_id: string }
    >(`
      UPDATE payouts SET state = 'held', hold_reason = @reason,
        message = COALESCE(@message, message),
        said = CASE WHEN @message IS NULL THEN said ELSE @said END, updated_at = @now
      WHERE batch_id = @batchId AND state = 'queued'
      RETURNING order_id`),
    insertLine: db.prepare<
      [
        number,
        number,
        BatchLine['kind'],
        string | null,
        string | null,
        string,
        string | null,
        number | null,
        string | null,
        string | null,
        string | null,
        string | null,
        string | null,
      ]
    >(`
      INSERT OR REPLACE INTO batch_lines (batch_id, line, kind, order_id, column_heading, message,
        name, value_cents, value_written, said, cpf_cnpj, pix_key_type, pix_key)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // The rows that name a payout as their cover, and those naming them in turn.
    linkedTo: db.prepare<[string], LinkedRowRow>(`
      WITH RECURSIVE linked (order_id) AS (
        SELECT order_id FROM payouts WHERE covered_by = ?
        UNION SELECT p.order_id FROM payouts p JOIN linked l ON p.covered_by = l.order_id)
      SELECT p.order_id, p.covered_by, p.state, p.hold_reason, p.batch_id, b.state AS batch_state,
        b.file_name
      FROM linked l JOIN payouts p ON p.order_id = l.order_id JOIN batches b ON b.id = p.batch_id`),
    coveringRow: db.prepare<[string], CoveringRow>(
      `SELECT ${COVERING_COLUMNS} FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = ?`,
    ),
    known: db.prepare<
      [string],
      {
        payload_hash: Buffer;
        state: RowState;
        batch_id: number;
        line: number;
        admitted_at: number | null;
        file_name: string;
        name_key: string | null;
      }
    >(`
      SELECT p.payload_hash, p.state, p.batch_id, p.line, p.admitted_at, b.file_name, b.name_key
      FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = ?`),
    // The payouts of other files of a row's document and amount; of a row with a
    // reference, of its document and reference, and of its amount without one.
    byAmount: db.prepare<{ document: string; value: number; batchId: number }, CandidateRow>(
      candidatesOf(BY_AMOUNT),
    ),
    byReference: db.prepare<
      { document: string; value: number; reference: string; batchId: number },
      CandidateRow
    >(`${candidatesOf(BY_REFERENCE)} UNION ALL ${candidatesOf(BY_AMOUNT_UNREFERENCED)}`),
  };

  /** An entry of the audit for a payout in the journal, inside the caller's transaction. */
  function audit(orderId: string, from: RowState | null, to: RowState, reason: Said): void {
    if (statements.audit.run(now(), from, to, reasonColumn(reason), orderId).changes !== 1) {
      throw new JournalError(
        'refused',
        `${orderId}: not in the journal, so its move cannot be audited`,
      );
    }
  }

  /**
   * An entry of the audit for a payout named by its row id, which the caller has from the
   * statement that just inserted or moved it: no lookup of its orderId.
   */
  function auditById(payoutId: number, from: RowState | null, to: RowState, reason: Said): void {
    statements.auditById.run(payoutId, now(), from, to, reasonColumn(reason));
  }

  /**
   * The one check of a move against the transition table (a state repeats only where it
   * says so): every change of a row's state passes here first, or is refused.
   */
  function allowMove(from: RowState, to: RowState, orderId?: string): void {
    if (!canMove(from, to)) {
      throw new JournalError(
        'refused',
        `${orderId ?? 'rows'}: a move from ${from} to ${to} is not allowed`,
      );
    }
  }

  /**
   * The one guarded, audited move of a row, inside the caller's transaction: refused
   * unless the transition table allows it (allowMove),
   * written by `write` (an UPDATE guarded by the row's state, and by its fence where it
   * has one), audited, unless `reason` is null: an answer that leaves a row where it was
   * records what it said, not a move. False when no row changed (the caller says whether
   * that is an error). `payoutId`, when the caller has read the row's id, names it in the
   * audit without a lookup of its orderId.
   */
  function guardedMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: Said | null,
    write: () => { changes: number },
    payoutId?: number,
  ): boolean {
    allowMove(from, to, orderId);
    if (write().changes !== 1) return false;
    if (reason === null) return true;
    if (payoutId === undefined) audit(orderId, from, to, reason);
    else auditById(payoutId, from, to, reason);
    return true;
  }

  /** A guarded move of a row this transaction has just read in `from`: it must happen. */
  function mustMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: Said,
    write: () => { changes: number },
  ): void {
    if (!guardedMove(orderId, from, to, reason, write)) {
      throw new JournalError(
        'refused',
        `${orderId}: not ${from} any more (${reasonColumn(reason)})`,
      );
    }
  }

  /**
   * Rows moved together by one guarded UPDATE ... RETURNING (all of a batch's queued rows
   * held, say), inside the caller's transaction: the move checked once, each row audited
   * (by its row id, when `write` returns it), with `reason` or the reason it gives a row.
   */
  function movedTogether<R extends { order_id: string; id?: number }>(
    from: RowState,
    to: RowState,
    reason: Said | ((row: R) => Said),
    write: () => R[],
  ): R[] {
    allowMove(from, to);
    const rows = write();
    for (const row of rows) {
      const why = typeof reason === 'function' ? reason(row) : reason;
      if (row.id === undefined) audit(row.order_id, from, to, why);
      else auditById(row.id, from, to, why);
    }
    return rows;
  }

  /**
   * One guarded batch move, inside the caller's transaction: checked against the batch
   * transition table, and guarded by the state it was read in.
   */
  function moveBatch(batchId: number, to: BatchState): void {
    const from = statements.batchById.get(batchId)?.state;
    if (from === undefined)
      throw new JournalError('refused', `batch ${batchId} is not in the journal`);
    if (!canMoveBatch(from, to)) {
      throw new JournalError(
        'refused',
        `batch ${batchId}: a move from ${from} to ${to} is not allowed`,
      );
    }
    if (statements.moveBatch.run({ batchId, from, to }).changes !== 1) {
      throw new JournalError('refused', `batch ${batchId}: not ${from} any more`);
    }
  }

  /** Moves a row for a rule on who is paid, inside the caller's transaction. */
  function moveRow(
    orderId: string,
    from: RowState,
    to: RowState,
    fields: RuleFields,
    reason: Said,
  ): void {
    mustMove(orderId, from, to, reason, () =>
      statements.setRow.run({
        orderId,
        from,
        to,
        holdReason: fields.holdReason ?? null,
        coveredBy: fields.coveredBy ?? null,
        message: fields.said ? keptMessage(fields.said) : null,
        said: saidJson(fields.said),
        supersededBy: fields.supersededBy ?? null,
        now: now(),
      }),
    );
  }

  /**
   * Applies a rule's plan, inside the caller's transaction: each move guarded by the state
   * the plan read, checked and audited (its reason, with `why`).
   */
  function applyPlan(moves: readonly PlannedMove[], why: Said): void {
    for (const move of moves) {
      moveRow(move.orderId, move.from, move.to, move.fields, auditReasonOf(move.reason, why));
    }
  }

  /**
   * Holds a batch's queued rows, inside the caller's transaction; `said`, where a rule
   * says why, becomes each row's message (its English) and its value.
   */
  function holdQueuedRows(batchId: number, kind: HoldReason, reason: Said, said?: Said): void {
    const message = said ? keptMessage(said) : null;
    movedTogether('queued', 'held', reason, () =>
      statements.holdQueued.all({
        now: now(),
        batchId,
        reason: kind,
        message,
        said: saidJson(said),
      }),
    );
  }

  /**
   * Holds a queued row by a rule on who is paid (as a possible duplicate of `coveredBy`,
   * identical to another row, a failed payout repeated), saying why; inside the caller's
   * transaction. The audit says `reason`, by default the same words.
   */
  function holdQueuedRow(
    orderId: string,
    holdReason: HoldReason,
    said: Said,
    options: { coveredBy?: string; reason?: Said; at?: number } = {},
  ): void {
    const message = keptMessage(said);
    mustMove(orderId, 'queued', 'held', options.reason ?? said, () =>
      statements.holdQueuedRow.run({
        orderId,
        holdReason,
        coveredBy: options.coveredBy ?? null,
        message,
        said: saidJson(said),
        now: options.at ?? now(),
      }),
    );
  }

  /** Records lines of a batch that are not payouts, inside the caller's transaction. */
  function insertLines(batchId: number, lines: readonly BatchLine[]): void {
    for (const line of lines) {
      statements.insertLine.run(
        batchId,
        line.line,
        line.kind,
        line.orderId,
        line.column,
        line.message,
        line.name ?? null,
        line.valueCents ?? null,
        line.valueWritten ?? null,
        saidJson(line.said),
        line.cpfCnpj ?? null,
        line.pixKeyType ?? null,
        line.pixKey ?? null,
      );
    }
  }

  /**
   * The payouts of other files than batch `batchId` a row of it is weighed against by the
   * cover rule: of its document, with its amount or (given one) its reference.
   */
  function coverCandidates(key: CoverKey, batchId: number): CoverCandidate[] {
    const params = { document: key.document, value: key.valueCents, batchId };
    const found =
      key.reference === null
        ? statements.byAmount.all(params)
        : statements.byReference.all({ ...params, reference: key.reference });
    return found.map(toCandidate);
  }

  /** The payout that covers a row of this batch now, by the cover rule (coverOf). */
  function coveringOf(
    key: CoverKey,
    batchId: number,
    rules: AdmissionRules,
    range = WHOLE_JOURNAL,
  ): Covering | undefined {
    const since = coverSince(now(), rules);
    return coverOf(key, batchId, coverCandidates(key, batchId), { since, range });
  }

  /** The rows that name `orderId` as their cover, directly or through one another. */
  function linkedTo(orderId: string): LinkedRow[] {
    return statements.linkedTo.all(orderId).map(toLinkedRow);
  }

  /** Covered follows its cover (planUncover), inside the caller's transaction. */
  function uncoverRowsOf(orderId: string): void {
    const linked = linkedTo(orderId);
    const cover = linked.length > 0 ? statements.coveringRow.get(orderId) : undefined;
    if (!cover) return;
    const plan = planUncover(toCovering(cover), linked);
    applyPlan(plan.moves, plan.why);
    for (const batchId of plan.reopen) moveBatch(batchId, 'open');
  }

  /** What admission weighs a row of this orderId against, in a batch named `nameKey`. */
  function knownOf(orderId: string, nameKey: string | null): Known | undefined {
    const row = statements.known.get(orderId);
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
  }

  return {
    audit,
    /** The audit's first entry for a payout just inserted as `queued`, by its row id. */
    auditNew: (payoutId: number, reason: Said) => auditById(payoutId, null, 'queued', reason),
    auditById,
    guardedMove,
    mustMove,
    movedTogether,
    moveRow,
    applyPlan,
    moveBatch,
    /** Records a person's decision about a batch, with who and when. */
    addBatchEvent: (batchId: number, event: BatchEvent['event'], by: string, detail: Said) =>
      statements.addBatchEvent.run(batchId, now(), event, by, reasonColumn(detail)),
    holdQueuedRows,
    holdQueuedRow,
    insertLines,
    coveringOf,
    linkedTo,
    uncoverRowsOf,
    knownOf,
    payoutRow: (orderId: string): PayoutRow | undefined => statements.payout.get(orderId),
    batchRow: (batchId: number): BatchRow | undefined => statements.batchById.get(batchId),
    holdReasonOf: (orderId: string): HoldReason | null =>
      statements.payout.get(orderId)?.hold_reason ?? null,
  };
}
