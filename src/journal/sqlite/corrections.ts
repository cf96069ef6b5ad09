/**
 * The rules on who is paid that weigh a whole batch against earlier ones, inside the
 * caller's transaction: a file named as an earlier batch, a corrected copy, a copy that
 * repeats a payout that failed.
 */
import { keptMessage } from '../kept-message.js';
import { JournalError } from '../journal-error.js';
import type { Said } from '../../messages/said.js';
import { commandTarget, givenName } from '../../csv/given-name.js';
import { coveredSaid, type Covering } from '../admission.js';
import {
  correctionCandidate,
  countRepeatsOfFailed,
  HELD_AS_REPEAT,
  heldLinesOnSent,
  linesACopyReplaces,
  inCorrectionWindow,
  isCorrection,
  maySend,
  planChangesOfPaid,
  planCopyRows,
  planGiveBack,
  planLeftOut,
  planRepeats,
  paidRowOf,
  planRepeatsOfFailed,
  replaceableRows,
  sameNameEarlier,
  sendableRows,
  standingBatches,
  takenOverLines,
  type CopyRepeat,
  type LineOnPayout,
  type RepeatOfPayout,
} from '../rules/correction.js';
import { TURNED_DOWN } from '../rules/cover.js';
import {
  FROZEN,
  frozenBatches,
  planFreeze,
  planThaw,
  UNSENT,
  type FrozenPayout,
  type StandingRow,
} from '../rules/freeze.js';
import type { BatchState } from '../batch-states.js';
import type { LineKind } from '../types.js';
import { RETRYABLE, ROW_STATES, SENT, type HoldReason, type RowState } from '../states.js';
import {
  COVERING_COLUMNS,
  english,
  inList,
  saidOf,
  toCovering,
  type BatchRow,
  type Context,
  type CoveringRow,
} from './context.js';
import { saidJson, type Rows } from './rows.js';

export type Corrections = ReturnType<typeof createCorrections>;

// The row shapes the PostgreSQL store reads alike (postgres/corrections.ts).
type Repeat = CoveringRow & { row_id: string };

/** A file's row and a payout it repeats unchanged. */
export type RepeatOfPayoutRow = Repeat & {
  row_state: RowState;
  last_sent_at: number | null;
  updated_at: number;
};

/** A row as the store reads it for the rules on a batch's rows never sent. */
export interface StandingRowDb {
  line: number;
  order_id: string;
  state: RowState;
  hold_reason: HoldReason | null;
  covered_by: string | null;
  document: string;
  value_cents: number;
  reference: string | null;
}

/** A copy's row that repeats a payout, with both payees, and its amount. */
export type CopyRepeatRow = Repeat & {
  row_cents: number;
  row_pix_key: string;
  row_name: string;
  paid_pix_key: string;
  paid_name: string;
  paid_hold_reason: HoldReason | null;
};

export function createCorrections({ db }: Context, rows: Rows) {
  const statements = {
    batchesOfName: db.prepare<[string, number], BatchRow>(
      `SELECT * FROM batches WHERE name_key = ? AND id <> ? ORDER BY id DESC`,
    ),
    // Does a row of this batch repeat (same document and amount) a row of an earlier
    // batch of its name?
    repeatsEarlierOfName: db.prepare<{ batchId: number; nameKey: string }, object>(`
      SELECT 1 FROM payouts p
      WHERE p.batch_id = @batchId AND EXISTS (
        SELECT 1 FROM payouts q JOIN batches qb ON qb.id = q.batch_id
        WHERE q.document = p.document AND q.value_cents = p.value_cents
          AND qb.name_key = @nameKey AND qb.id < @batchId
          AND qb.state NOT IN (${inList(TURNED_DOWN)}))
      LIMIT 1`),
    // Rows of a batch with the document of a row of an earlier one.
    sharedRows: db.prepare<{ batchId: number; earlier: number }, { n: number }>(`
      SELECT COUNT(*) AS n FROM payouts r
      WHERE r.batch_id = @batchId AND EXISTS (
        SELECT 1 FROM payouts q WHERE q.batch_id = @earlier AND q.document = r.document)`),
    // The first rows of a batch that repeat (same document and amount) a row of an
    // earlier one, each with the first line it repeats, and how many there are in all.
    repeatedLines: db.prepare<
      { batchId: number; earlier: number; listed: number },
      { line: number; earlier_line: number; total: number }
    >(`
      SELECT r.line, MIN(q.line) AS earlier_line, COUNT(*) OVER () AS total
      FROM payouts r JOIN payouts q ON q.batch_id = @earlier AND q.document = r.document
        AND q.value_cents = r.value_cents
      WHERE r.batch_id = @batchId
      GROUP BY r.line ORDER BY r.line LIMIT @listed`),
    copyRepeats: db.prepare<{ copy: number; corrected: number }, CopyRepeatRow>(`
      SELECT r.order_id AS row_id, ${COVERING_COLUMNS}, r.value_cents AS row_cents, r.pix_key AS row_pix_key,
        r.name AS row_name, p.pix_key AS paid_pix_key, p.name AS paid_name, p.hold_reason AS paid_hold_reason
      FROM payouts r JOIN payouts p ON p.order_id = r.covered_by JOIN batches b ON b.id = p.batch_id
      WHERE r.batch_id = @copy AND r.state = '${HELD_AS_REPEAT.state}'
        AND r.hold_reason = '${HELD_AS_REPEAT.holdReason}' AND p.batch_id = @corrected
      ORDER BY r.line`),
    // Rows of a copy never sent with the document and amount of a payout of `corrected`,
    // with its state (countRepeatsOfFailed).
    copyRepeatsOf: db.prepare<
      { copy: number; corrected: number },
      { order_id: string; payout_state: RowState }
    >(`
      SELECT r.order_id, p.state AS payout_state FROM payouts r
      JOIN payouts p ON +p.batch_id = @corrected AND p.document = r.document
        AND p.value_cents = r.value_cents
      WHERE r.batch_id = @copy AND r.state IN (${inList(UNSENT)})`),
    // A document has few payouts, a batch may have a million: the unary + keeps SQLite
    // from reading the batch whole (by payouts_by_batch) for every row of a copy.
    ofDocument: db.prepare<{ document: string; corrected: number }, CoveringRow>(`
      SELECT ${COVERING_COLUMNS}, p.reference
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE +p.batch_id = @corrected AND p.document = @document
      ORDER BY p.line`),
    // Every state named, so each is a seek of payouts_by_state, not a read of the batch.
    payoutsByState: db.prepare<[number], { state: RowState; count: number }>(`
      SELECT state, COUNT(*) AS count FROM payouts
      WHERE state IN (${inList(ROW_STATES)}) AND batch_id = ? GROUP BY state`),
    // A batch's lines on the orderIds of another's payouts, with those payouts.
    linesOnPayoutsOf: db.prepare<
      { lines: number; payouts: number },
      CoveringRow & { l_line: number; kind: LineKind }
    >(`
      SELECT l.line AS l_line, l.kind, ${COVERING_COLUMNS}
      FROM batch_lines l JOIN payouts p ON p.order_id = l.order_id JOIN batches b ON b.id = p.batch_id
      WHERE l.batch_id = @lines AND p.batch_id = @payouts`),
    setLine: db.prepare<['covered', string, string | null, number, number]>(
      `UPDATE batch_lines SET kind = ?, message = ?, said = ? WHERE batch_id = ? AND line = ?`,
    ),
    // A batch's rows in a state a rule names, in line order: a seek of payouts_by_state.
    rowsInState: db.prepare<{ batchId: number; state: RowState }, StandingRowDb>(`
      SELECT line, order_id, state, hold_reason, covered_by, document, value_cents, reference
      FROM payouts WHERE state = @state AND batch_id = @batchId ORDER BY line`),
    // The rows that name a copy as the one that closed them: a seek of payouts_by_superseded_by.
    supersededBy: db.prepare<
      [number],
      { order_id: string; state: RowState; hold_reason: HoldReason | null }
    >(`SELECT order_id, state, hold_reason FROM payouts WHERE superseded_by = ?`),
    setCorrects: db.prepare<[number, number]>(`UPDATE batches SET corrects = ? WHERE id = ?`),
    // The held rows of the earlier batches of a name for the reason `holdReason`, with the
    // batch that froze each (a frozen row names it) and its own batch's state.
    heldOfName: db.prepare<
      { nameKey: string; copy: number; state: RowState; holdReason: HoldReason },
      StandingRowDb & {
        frozen_by: number | null;
        batch_state: BatchState;
        batch_id: number;
        file_name: string;
      }
    >(`
      SELECT p.line, p.order_id, p.state, p.hold_reason, p.covered_by, p.value_cents,
        json_extract(p.said, '$.batchId') AS frozen_by, b.state AS batch_state, p.batch_id,
        b.file_name
      FROM batches b CROSS JOIN payouts p ON p.batch_id = b.id
      WHERE b.name_key = @nameKey AND b.id < @copy
        AND p.state = @state AND p.hold_reason = @holdReason
      ORDER BY p.batch_id, p.line`),
    // A batch's lines that are not payouts (the line's own words stay a value where it
    // kept one): a seek of batch_lines' primary key.
    linesOf: db.prepare<
      [number],
      { line: number; kind: LineKind; message: string; said: string | null }
    >(`SELECT line, kind, message, said FROM batch_lines WHERE batch_id = ?`),
    supersedeInvalid: db.prepare<{
      corrected: number;
      line: number;
      message: string;
      said: string | null;
    }>(`
      UPDATE batch_lines SET kind = 'superseded', message = @message, said = @said
      WHERE batch_id = @corrected AND line = @line AND kind = 'invalid'`),
    // Retry on purpose. Rows of a copy that repeat unchanged (document, amount, Pix key)
    // a payout of the batch it corrects, or of any batch since.
    repeatsOfFailed: db.prepare<{ copy: number; corrected: number }, RepeatOfPayoutRow>(
      repeatsOfPayoutsIn('+p.batch_id = @corrected'),
    ),
    // Of any age: the rule weighs each by its own time (its failure), not its admission.
    repeatsOfFailedElsewhere: db.prepare<{ copy: number }, RepeatOfPayoutRow>(
      repeatsOfPayoutsIn(
        ...['<', '>'].map((op) => `p.state IN (${inList(RETRYABLE)}) AND p.batch_id ${op} @copy`),
      ),
    ),
  };

  /** A batch's rows never sent (UNSENT), in line order. */
  const unsentOf = (batchId: number): StandingRowDb[] =>
    UNSENT.flatMap((state) => statements.rowsInState.all({ batchId, state })).sort(
      (a, b) => a.line - b.line,
    );

  /** A file's rows that may yet be sent (maySend), in line order. */
  const maySendOf = (batchId: number): StandingRowDb[] =>
    unsentOf(batchId).filter((row) => maySend(standingRow(row)));

  /** Batches of a name but `except`, newest first (refused and unusable ones left out). */
  const batchesOfName = (nameKey: string, except: number): BatchRow[] =>
    standingBatches(statements.batchesOfName.all(nameKey, except));

  /** Lines of batch `lines` on the orderIds of payouts of batch `payouts`. */
  const linesOnPayoutsOf = (lines: number, payouts: number): LineOnPayout[] =>
    statements.linesOnPayoutsOf.all({ lines, payouts }).map((row) => ({
      line: row.l_line,
      kind: row.kind,
      payout: toCovering(row),
    }));

  /** The held rows of the earlier batches of a copy's name that a freeze holds (FROZEN). */
  const frozenOfName = (nameKey: string, copy: number): FrozenPayout[] =>
    statements.heldOfName.all({ nameKey, copy, ...FROZEN }).map((row) => ({
      ...standingRow(row),
      frozenBy: row.frozen_by,
      batchState: row.batch_state,
      batchId: row.batch_id,
      fileName: row.file_name,
      cents: row.value_cents,
    }));

  /** The payout of batch `corrected` that a copy's row changes, if it left (paidRowOf). */
  function sentOfDocument(row: StandingRowDb, corrected: number): Covering | undefined {
    const payouts = statements.ofDocument.all({ document: row.document, corrected });
    return paidRowOf(row, payouts.map(toCovering));
  }

  /** The earlier batches of a file's name it arrived within 24 hours of, newest first. */
  function inWindowOf(batchId: number): BatchRow[] {
    const batch = rows.batchRow(batchId);
    if (!batch?.name_key) return [];
    const earlier = batchesOfName(batch.name_key, batchId).map((row) => ({
      ...row,
      receivedAt: row.received_at,
    }));
    return inCorrectionWindow({ id: batchId, receivedAt: batch.received_at }, earlier);
  }

  /** The batch of the same name a file may correct (see correctionCandidate). */
  function correctionOf(batchId: number): number | undefined {
    const batch = rows.batchRow(batchId);
    if (!batch) return undefined;
    const earlier = inWindowOf(batchId).map((row) => ({
      id: row.id,
      receivedAt: row.received_at,
      sharedRows: statements.sharedRows.get({ batchId, earlier: row.id })?.n ?? 0,
    }));
    return correctionCandidate({ id: batchId, receivedAt: batch.received_at }, earlier);
  }

  /** A file's rows that change what a batch of its name paid within the day are held (planChangesOfPaid). */
  function holdChangesOfPaid(batchId: number, why: Said): void {
    const earlier = inWindowOf(batchId);
    if (earlier.length === 0) return;
    const named = maySendOf(batchId).map((row) => ({
      orderId: row.order_id,
      state: row.state,
      cents: row.value_cents,
      reference: row.reference,
      payouts: earlier.flatMap((batch) =>
        statements.ofDocument.all({ document: row.document, corrected: batch.id }).map(toCovering),
      ),
    }));
    rows.applyPlan(planChangesOfPaid(named), why);
  }

  /**
   * The same-name rule, once a file has been read: a file named as an earlier batch that
   * repeats any of its rows (same document and amount) is held whole, whatever its age,
   * until a person says whether it is a new payroll. Next month's payroll and last
   * month's file dropped again by mistake look the same; only a person can tell. Until
   * then nothing of that earlier batch is sent either, whatever held it: a corrected copy
   * of a payroll held for the balance must not see the old amounts go out at the top-up.
   */
  function holdIfNamedAsEarlier(batchId: number, newBatchAfterMs: number | null): void {
    const batch = rows.batchRow(batchId);
    if (!batch?.name_key) return;
    const [latest] = batchesOfName(batch.name_key, batchId);
    const file = { id: batchId, receivedAt: batch.received_at };
    const earlier = latest && { id: latest.id, receivedAt: latest.received_at };
    if (!latest || sameNameEarlier(file, earlier, newBatchAfterMs) === undefined) return;
    if (!statements.repeatsEarlierOfName.get({ batchId, nameKey: batch.name_key })) return;
    const frozen = frozenSaid(batch, latest);
    const standing = unsentOf(latest.id).map(standingRow);
    rows.applyPlan(planFreeze(standing, frozen), { code: 'auditFrozen', said: frozen });
    const repeated = statements.repeatedLines.all({ batchId, earlier: latest.id, listed: 5 });
    const said = sameNameSaid(batch, latest, repeated);
    rows.holdQueuedRows(batchId, 'same-name', said, said);
  }

  /**
   * Whether a batch corrects `corrected` (see isCorrection). A repeat of a row that failed
   * counts, fixed or not: it needs a person or `payouts retry`, never a whole file held.
   */
  function isCorrectionOf(copy: number, corrected: number): boolean {
    const repeats =
      statements.copyRepeats.all({ copy, corrected }).length +
      takenOverLines(linesOnPayoutsOf(corrected, copy), linesOnPayoutsOf(copy, corrected)) +
      countRepeatsOfFailed(
        statements.copyRepeatsOf.all({ copy, corrected }).map((row) => ({
          orderId: row.order_id,
          payoutState: row.payout_state,
        })),
      );
    if (repeats === 0) return false;
    const fresh = maySendOf(copy).filter((row) => !sentOfDocument(row, corrected)).length;
    const replaceable = replaceableRows(
      linesACopyReplaces(statements.linesOf.all(corrected)).length,
      statements.payoutsByState.all(corrected),
    );
    return isCorrection({ repeats, fresh, replaceable });
  }

  /**
   * Links a copy to the batch it corrects. Its repeats of rows that batch paid or has in
   * flight are `covered`, unless they pay another key or name (held: the money may have
   * gone to the wrong person, and the right one is not paid); its repeats of rows it never sent take them over (the earlier
   * rows are closed, superseded); its other rows are sent, except those that change a
   * payout that batch made (held: changes a paid row). Every row of that batch still
   * unsent is closed: nothing of it is ever sent because a copy arrived.
   */
  function applyCorrection(copy: number, corrected: number, why: Said): void {
    const copyRow = rows.batchRow(copy);
    if (!copyRow) throw new JournalError('refused', `batch ${copy} is not in the journal`);
    const copyBatch = { id: copy, fileName: copyRow.file_name };
    const repeats = statements.copyRepeats.all({ copy, corrected }).map(toCopyRepeat);
    rows.applyPlan(planRepeats(copyBatch, repeats), why);
    for (const line of heldLinesOnSent(linesOnPayoutsOf(copy, corrected))) {
      const said = coveredSaid(line.payout);
      statements.setLine.run('covered', keptMessage(said), saidJson(said), copy, line.line);
    }
    // Read after the repeats moved: a row that took one over is sent, or held as a change.
    const copyRows = maySendOf(copy).map((row) => ({
      orderId: row.order_id,
      state: row.state,
      cents: row.value_cents,
      sent: sentOfDocument(row, corrected),
    }));
    rows.applyPlan(planCopyRows(copyRows), why);
    const unsent = unsentOf(corrected).map(standingRow);
    rows.applyPlan(planLeftOut(copyBatch, unsent), why);
    // Its invalid rows were the reason for the copy: the copy's rows stand for them now.
    const file = givenName(copyBatch.fileName);
    for (const line of linesACopyReplaces(statements.linesOf.all(corrected))) {
      // Its own words stay a value where it kept one; its English, as it was kept.
      const first = saidOf(line.said);
      statements.supersedeInvalid.run({
        corrected,
        line: line.line,
        message: keptMessage({ code: 'correctedIn', first: english(line.message), file }),
        said: first ? saidJson({ code: 'correctedIn', first, file }) : null,
      });
    }
    statements.setCorrects.run(corrected, copy);
  }

  /**
   * A batch's rows that repeat, unchanged, a payout that failed at the gateway (of the
   * batch a copy corrects, or of any batch within duplicateWindow) are held: a failed
   * payout is sent again only when a person asks (`payouts retry`), never because a file
   * repeats it. A row that changes it (another key, say) is a fix, and is sent.
   */
  function holdRepeatsOfFailed(
    copy: number,
    failedIn: { corrected: number } | { since: number },
  ): void {
    const repeats = (
      'corrected' in failedIn
        ? statements.repeatsOfFailed.all({ copy, corrected: failedIn.corrected })
        : statements.repeatsOfFailedElsewhere.all({ copy })
    ).map(toRepeatOfPayout);
    const since = 'since' in failedIn ? failedIn.since : null;
    rows.applyPlan(planRepeatsOfFailed(repeats, since), {
      code: 'auditRepeatsFailed',
    });
  }

  /** A person answered a file that froze earlier batches of its name (see holdIfNamedAsEarlier): they go on as they stand. */
  function thaw(copy: number, why: Said): void {
    const nameKey = rows.batchRow(copy)?.name_key;
    if (!nameKey) return;
    rows.applyPlan(planThaw(frozenOfName(nameKey, copy), copy), why);
  }

  /** Batches frozen while `copy` waits for a person, with what each holds back. */
  function frozenFor(
    copy: number,
  ): { batchId: number; fileName: string; rows: number; cents: number }[] {
    const nameKey = rows.batchRow(copy)?.name_key;
    if (!nameKey) return [];
    return frozenBatches(frozenOfName(nameKey, copy), copy);
  }

  /** Rows a copy turned down had closed go back to where they were. */
  function giveBack(copy: number, why: Said): void {
    const closed = statements.supersededBy
      .all(copy)
      .map((row) => ({ orderId: row.order_id, state: row.state, holdReason: row.hold_reason }));
    rows.applyPlan(planGiveBack(closed), why);
  }

  /** The rows of a copy that may now be sent (see correctBatch). */
  const sendableOfCopy = (copy: number): number => sendableRows(unsentOf(copy));

  return {
    batchesOfName,
    correctionCandidate: correctionOf,
    holdChangesOfPaid,
    holdIfNamedAsEarlier,
    isCorrectionOf,
    applyCorrection,
    holdRepeatsOfFailed,
    giveBack,
    thaw,
    frozenFor,
    sendableOfCopy,
  };
}

/** What the rows of `latest` say while `batch`, named as it, waits for a person. */
export const frozenSaid = (batch: BatchRow, latest: BatchRow): Said => ({
  code: 'heldForCopy',
  ...commandTarget(batch.file_name, batch.id),
  batchId: batch.id,
  at: batch.received_at,
  earlierBatchId: latest.id,
});

/**
 * What the rows of `batch` say, held as named as `latest`: the first lines it repeats
 * (`repeated`, each with the count of all), and how many more.
 */
export function sameNameSaid(
  batch: BatchRow,
  latest: BatchRow,
  repeated: readonly { line: number; earlier_line: number; total: number }[],
): Said {
  const target = commandTarget(batch.file_name, batch.id);
  return {
    code: 'heldSameName',
    file: givenName(latest.file_name),
    batchId: latest.id,
    at: latest.received_at,
    newFile: target.file,
    hintFlags: target.hintFlags,
    repeats: repeated.map((row) => ({ line: row.line, earlierLine: row.earlier_line })),
    moreRepeats: (repeated[0]?.total ?? 0) - repeated.length,
  };
}

/** A copy's row that repeats a payout, as planRepeats weighs it. */
export const toCopyRepeat = (row: CopyRepeatRow): CopyRepeat => ({
  orderId: row.row_id,
  cents: row.row_cents,
  payee: { pixKey: row.row_pix_key, name: row.row_name },
  paid: toCovering(row),
  paidPayee: { pixKey: row.paid_pix_key, name: row.paid_name },
  paidHoldReason: row.paid_hold_reason,
});

/** A file's row and a payout it repeats, as planRepeatsOfFailed weighs it. */
export const toRepeatOfPayout = (row: RepeatOfPayoutRow): RepeatOfPayout => ({
  orderId: row.row_id,
  state: row.row_state,
  payout: toCovering(row),
  lastSentAt: row.last_sent_at,
  updatedAt: row.updated_at,
});

/** A row the store read, as the rules weigh it. */
export function standingRow(row: StandingRowDb): StandingRow {
  return {
    orderId: row.order_id,
    state: row.state,
    holdReason: row.hold_reason,
    coveredBy: row.covered_by,
  };
}

/**
 * Rows of batch @copy and the payouts each repeats unchanged (document, amount, Pix key),
 * among the payouts each of `payoutsWhere` names (of the batch a copy corrects, or of any
 * other batch journaled since @since); in the file's order, then the oldest payout first.
 * Each names a range of payouts_by_cover's batch_id, which `<>` cannot seek: under it, a
 * file of one payee's identical rows read all its own rows once a row.
 */
export function repeatsOfPayoutsIn(...payoutsWhere: string[]): string {
  const select = (where: string) => `
    SELECT r.order_id AS row_id, r.state AS row_state, ${COVERING_COLUMNS},
      p.last_sent_at, p.updated_at, r.line AS row_line
    FROM payouts r
    JOIN payouts p ON ${where} AND p.document = r.document
      AND p.value_cents = r.value_cents
      AND p.pix_key = r.pix_key
    JOIN batches b ON b.id = p.batch_id
    WHERE r.batch_id = @copy`;
  return `SELECT * FROM (${payoutsWhere.map(select).join(' UNION ALL')}) AS repeats
    ORDER BY row_line, admitted_at, line`;
}
