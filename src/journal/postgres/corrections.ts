/**
 * The rules on who is paid that weigh a whole batch against earlier ones, inside the
 * caller's transaction, as the SQLite store keeps them (../sqlite/corrections.ts): a file
 * named as an earlier batch, a corrected copy, a copy that repeats a payout that failed.
 * The store reads the facts by key, the rules (../rules/) decide, the plan is applied in
 * the same transaction; the caller holds the rules' lock, so no other host decides at once.
 */
import { keptMessage } from '../kept-message.js';
import { JournalError } from '../journal-error.js';
import type { Said } from '../../messages/said.js';
import { givenName } from '../../csv/given-name.js';
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
  type LineOnPayout,
} from '../rules/correction.js';
import { coverSince, TURNED_DOWN } from '../rules/cover.js';
import {
  FROZEN,
  frozenBatches,
  planFreeze,
  planThaw,
  UNSENT,
  type FrozenPayout,
} from '../rules/freeze.js';
import type { BatchState } from '../batch-states.js';
import type { AdmissionRules, LineKind } from '../types.js';
import { RETRYABLE, ROW_STATES, type HoldReason, type RowState } from '../states.js';
import {
  COVERING_COLUMNS,
  english,
  saidOf,
  toCovering,
  type BatchRow,
  type CoveringRow,
} from '../sqlite/context.js';
import { saidJson } from '../sqlite/rows.js';
import type { PayoutParams } from '../sqlite/admitting.js';
import {
  repeatsOfPayoutsIn,
  frozenSaid,
  sameNameSaid,
  standingRow,
  toCopyRepeat,
  toRepeatOfPayout,
  type CopyRepeatRow,
  type RepeatOfPayoutRow,
  type StandingRowDb,
} from '../sqlite/corrections.js';
import type { AdmissionPlan } from '../rules/admission.js';
import type { Runner } from './connection.js';
import type { Rows } from './rows.js';
import { AT, inList, statement } from './sql.js';

type Copy = { copy: number; corrected: number };

/** A payout's row as admission writes it, dated by the journal's clock or the database's. */
export type PayoutValues = Omit<PayoutParams, 'now'> & { now: number | null };

const statements = {
  // A new payload takes the place of one the gateway never took (admission decided),
  // guarded by the state admission read.
  replacePayout: statement<PayoutValues & { from: RowState }>(
    'replace-payout',
    `UPDATE payouts SET batch_id = @batchId, line = @line, value_cents = @value,
       pix_key_type = @pixKeyType, pix_key = @pixKey, document = @document,
       cpf_cnpj = @cpfCnpj, name = @name, email = @email, phone = @phone,
       request_written = NULL, payload_hash = @hash, admitted_at = ${AT}, reference = @reference,
       state = 'queued',
       attempts = 0, not_found = 0, last_sent_at = NULL, transaction_id = NULL,
       gateway_status = NULL, message = NULL, said = NULL, fee = NULL, net = NULL,
       gateway_created_at = NULL, end_to_end_id = NULL, processed_at = NULL,
       lease_owner = NULL, lease_until = NULL, hold_reason = NULL, covered_by = NULL,
       updated_at = ${AT}
     WHERE order_id = @orderId AND state = @from
     RETURNING id`,
  ),
  batchesOfName: statement<{ nameKey: string; except: number }>(
    'batches-of-name-but',
    `SELECT * FROM batches WHERE name_key = @nameKey AND id <> @except ORDER BY id DESC`,
  ),
  // Does a row of this batch repeat (same document and amount) a row of an earlier
  // batch of its name?
  repeatsEarlierOfName: statement<{ batchId: number; nameKey: string }>(
    'repeats-earlier-of-name',
    `SELECT 1 FROM payouts p
     WHERE p.batch_id = @batchId AND EXISTS (
       SELECT 1 FROM payouts q JOIN batches qb ON qb.id = q.batch_id
       WHERE q.document = p.document AND q.value_cents = p.value_cents
         AND qb.name_key = @nameKey AND qb.id < @batchId
         AND qb.state NOT IN (${inList(TURNED_DOWN)}))
     LIMIT 1`,
  ),
  // Rows of a batch with the document of a row of an earlier one.
  sharedRows: statement<{ batchId: number; earlier: number }>(
    'shared-rows',
    `SELECT COUNT(*)::bigint AS n FROM payouts r
     WHERE r.batch_id = @batchId AND EXISTS (
       SELECT 1 FROM payouts q WHERE q.batch_id = @earlier AND q.document = r.document)`,
  ),
  // The first rows of a batch that repeat (same document and amount) a row of an
  // earlier one, each with the first line it repeats, and how many there are in all.
  repeatedLines: statement<{ batchId: number; earlier: number; listed: number }>(
    'repeated-lines',
    `SELECT r.line, MIN(q.line) AS earlier_line, COUNT(*) OVER ()::bigint AS total
     FROM payouts r JOIN payouts q ON q.batch_id = @earlier AND q.document = r.document
       AND q.value_cents = r.value_cents
     WHERE r.batch_id = @batchId
     GROUP BY r.line ORDER BY r.line LIMIT @listed`,
  ),
  copyRepeats: statement<Copy>(
    'copy-repeats',
    `SELECT r.order_id AS row_id, ${COVERING_COLUMNS}, r.value_cents AS row_cents,
       r.pix_key AS row_pix_key, r.name AS row_name, p.pix_key AS paid_pix_key,
       p.name AS paid_name, p.hold_reason AS paid_hold_reason
     FROM payouts r JOIN payouts p ON p.order_id = r.covered_by JOIN batches b ON b.id = p.batch_id
     WHERE r.batch_id = @copy AND r.state = '${HELD_AS_REPEAT.state}'
       AND r.hold_reason = '${HELD_AS_REPEAT.holdReason}' AND p.batch_id = @corrected
     ORDER BY r.line`,
  ),
  // Rows of a copy never sent with the document and amount of a payout of `corrected`,
  // with its state (countRepeatsOfFailed).
  copyRepeatsOf: statement<Copy>(
    'copy-repeats-of',
    `SELECT r.order_id, p.state AS payout_state FROM payouts r
     JOIN payouts p ON p.batch_id = @corrected AND p.document = r.document
       AND p.value_cents = r.value_cents
     WHERE r.batch_id = @copy AND r.state IN (${inList(UNSENT)})`,
  ),
  ofDocument: statement<{ document: string; corrected: number }>(
    'of-document',
    `SELECT ${COVERING_COLUMNS}, p.reference
     FROM payouts p JOIN batches b ON b.id = p.batch_id
     WHERE p.batch_id = @corrected AND p.document = @document
     ORDER BY p.line`,
  ),
  payoutsByState: statement<{ batchId: number }>(
    'payouts-by-state',
    `SELECT state, COUNT(*)::bigint AS count FROM payouts
     WHERE state IN (${inList(ROW_STATES)}) AND batch_id = @batchId GROUP BY state`,
  ),
  // A batch's lines on the orderIds of another's payouts, with those payouts.
  linesOnPayoutsOf: statement<{ lines: number; payouts: number }>(
    'lines-on-payouts-of',
    `SELECT l.line AS l_line, l.kind, ${COVERING_COLUMNS}
     FROM batch_lines l JOIN payouts p ON p.order_id = l.order_id
       JOIN batches b ON b.id = p.batch_id
     WHERE l.batch_id = @lines AND p.batch_id = @payouts`,
  ),
  setLineCovered: statement<{
    message: string;
    said: string | null;
    batchId: number;
    line: number;
  }>(
    'set-line-covered',
    `UPDATE batch_lines SET kind = 'covered', message = @message, said = @said
     WHERE batch_id = @batchId AND line = @line`,
  ),
  // A batch's rows in a state a rule names, in line order: a seek of payouts_by_state.
  rowsInState: statement<{ batchId: number; state: RowState }>(
    'rows-in-state',
    `SELECT line, order_id, state, hold_reason, covered_by, document, value_cents, reference
     FROM payouts WHERE state = @state AND batch_id = @batchId ORDER BY line`,
  ),
  // The rows that name a copy as the one that closed them: a seek of payouts_by_superseded_by.
  supersededBy: statement<{ copy: number }>(
    'superseded-by-copy',
    `SELECT order_id, state, hold_reason FROM payouts WHERE superseded_by = @copy`,
  ),
  setCorrects: statement<Copy>(
    'set-corrects',
    `UPDATE batches SET corrects = @corrected WHERE id = @copy`,
  ),
  // The held rows of the earlier batches of a name for the reason `holdReason`, with the
  // batch that froze each (a frozen row names it) and its own batch's state.
  heldOfName: statement<{ nameKey: string; copy: number; state: RowState; holdReason: HoldReason }>(
    'held-of-name',
    `SELECT p.line, p.order_id, p.state, p.hold_reason, p.covered_by, p.document,
       p.value_cents, p.reference, (p.said::json ->> 'batchId')::bigint AS frozen_by,
       b.state AS batch_state, p.batch_id, b.file_name
     FROM batches b JOIN payouts p ON p.batch_id = b.id
     WHERE b.name_key = @nameKey AND b.id < @copy
       AND p.state = @state AND p.hold_reason = @holdReason
     ORDER BY p.batch_id, p.line`,
  ),
  // A batch's lines that are not payouts (the line's own words stay a value where it
  // kept one).
  linesOf: statement<{ batchId: number }>(
    'lines-of',
    `SELECT line, kind, message, said FROM batch_lines WHERE batch_id = @batchId`,
  ),
  supersedeInvalid: statement<{
    corrected: number;
    line: number;
    message: string;
    said: string | null;
  }>(
    'supersede-invalid',
    `UPDATE batch_lines SET kind = 'superseded', message = @message, said = @said
     WHERE batch_id = @corrected AND line = @line AND kind = 'invalid'`,
  ),
  // Retry on purpose. Rows of a copy that repeat unchanged (document, amount, Pix key)
  // a payout of the batch it corrects, or of any batch since.
  repeatsOfFailed: statement<Copy>(
    'repeats-of-failed',
    repeatsOfPayoutsIn('p.batch_id = @corrected'),
  ),
  // Of any age: the rule weighs each by its own time (its failure), not its admission.
  repeatsOfFailedElsewhere: statement<{ copy: number }>(
    'repeats-of-failed-elsewhere',
    repeatsOfPayoutsIn(
      ...['<', '>'].map((op) => `p.state IN (${inList(RETRYABLE)}) AND p.batch_id ${op} @copy`),
    ),
  ),
};

/**
 * A row of a fixed file takes over the row of its orderId the gateway refused (admission's
 * plan, `replace`): the earlier batch keeps a line saying so, with the payee it had.
 */
export async function takeOver(
  tx: Runner,
  rows: Rows,
  plan: Extract<AdmissionPlan, { write: 'replace' }>,
  payout: PayoutValues,
): Promise<void> {
  const { orderId, batchId, line } = payout;
  // The earlier row's own payee, before the new one takes its place.
  const earlier = plan.supersedes && (await rows.payoutRow(orderId));
  await rows.mustMove(orderId, plan.from, 'queued', { code: 'auditReplaced', batchId, line }, () =>
    tx.rows<{ id: number }, PayoutValues & { from: RowState }>(statements.replacePayout, {
      ...payout,
      from: plan.from,
    }),
  );
  if (!plan.supersedes) return;
  await rows.insertLines(plan.supersedes.batchId, [
    {
      line: plan.supersedes.line,
      kind: 'superseded',
      orderId,
      column: null,
      message: keptMessage(plan.supersedes.said),
      said: plan.supersedes.said,
      name: earlier ? earlier.name : null,
      valueCents: earlier ? earlier.value_cents : null,
    },
  ]);
}

/** The rules on a whole batch, on one transaction (`tx`) and its rows. */
export function correctionsOn(tx: Runner, rows: Rows) {
  /** A batch's rows never sent (UNSENT), in line order. */
  const unsentOf = async (batchId: number): Promise<StandingRowDb[]> => {
    const found: StandingRowDb[] = [];
    for (const state of UNSENT) {
      found.push(
        ...(await tx.rows<StandingRowDb, { batchId: number; state: RowState }>(
          statements.rowsInState,
          { batchId, state },
        )),
      );
    }
    return found.sort((a, b) => a.line - b.line);
  };

  /** A file's rows that may yet be sent (maySend), in line order. */
  const maySendOf = async (batchId: number): Promise<StandingRowDb[]> =>
    (await unsentOf(batchId)).filter((row) => maySend(standingRow(row)));

  /** Batches of a name but `except`, newest first (refused and unusable ones left out). */
  const batchesOfName = async (nameKey: string, except: number): Promise<BatchRow[]> =>
    standingBatches(
      await tx.rows<BatchRow, { nameKey: string; except: number }>(statements.batchesOfName, {
        nameKey,
        except,
      }),
    );

  /** Lines of batch `lines` on the orderIds of payouts of batch `payouts`. */
  const linesOnPayoutsOf = async (lines: number, payouts: number): Promise<LineOnPayout[]> =>
    (
      await tx.rows<
        CoveringRow & { l_line: number; kind: LineKind },
        { lines: number; payouts: number }
      >(statements.linesOnPayoutsOf, { lines, payouts })
    ).map((row) => ({ line: row.l_line, kind: row.kind, payout: toCovering(row) }));

  const linesOf = (batchId: number) =>
    tx.rows<
      { line: number; kind: LineKind; message: string; said: string | null },
      { batchId: number }
    >(statements.linesOf, { batchId });

  /** The held rows of the earlier batches of a copy's name that a freeze holds (FROZEN). */
  const frozenOfName = async (nameKey: string, copy: number): Promise<FrozenPayout[]> =>
    (
      await tx.rows<
        StandingRowDb & {
          frozen_by: number | null;
          batch_state: BatchState;
          batch_id: number;
          file_name: string;
        },
        { nameKey: string; copy: number; state: RowState; holdReason: HoldReason }
      >(statements.heldOfName, { nameKey, copy, ...FROZEN })
    ).map((row) => ({
      ...standingRow(row),
      frozenBy: row.frozen_by,
      batchState: row.batch_state,
      batchId: row.batch_id,
      fileName: row.file_name,
      cents: row.value_cents,
    }));

  /** The payouts of batch `corrected` of a row's document. */
  const ofDocument = async (document: string, corrected: number): Promise<Covering[]> =>
    (
      await tx.rows<CoveringRow, { document: string; corrected: number }>(statements.ofDocument, {
        document,
        corrected,
      })
    ).map(toCovering);

  /** The payout of batch `corrected` that a copy's row changes, if it left (paidRowOf). */
  const sentOfDocument = async (row: StandingRowDb, corrected: number) =>
    paidRowOf(row, await ofDocument(row.document, corrected));

  /** The earlier batches of a file's name it arrived within 24 hours of, newest first. */
  async function inWindowOf(batchId: number): Promise<BatchRow[]> {
    const batch = await rows.batchRow(batchId);
    if (!batch?.name_key) return [];
    const earlier = (await batchesOfName(batch.name_key, batchId)).map((row) => ({
      ...row,
      receivedAt: row.received_at,
    }));
    return inCorrectionWindow({ id: batchId, receivedAt: batch.received_at }, earlier);
  }

  /** The batch of the same name a file may correct (see correctionCandidate). */
  async function correctionOf(batchId: number): Promise<number | undefined> {
    const batch = await rows.batchRow(batchId);
    if (!batch) return undefined;
    const earlier = [];
    for (const row of await inWindowOf(batchId)) {
      const [shared] = await tx.rows<{ n: number }, { batchId: number; earlier: number }>(
        statements.sharedRows,
        {
          batchId,
          earlier: row.id,
        },
      );
      earlier.push({ id: row.id, receivedAt: row.received_at, sharedRows: shared?.n ?? 0 });
    }
    return correctionCandidate({ id: batchId, receivedAt: batch.received_at }, earlier);
  }

  /** A file's rows that change what a batch of its name paid within the day are held (planChangesOfPaid). */
  async function holdChangesOfPaid(batchId: number, why: Said): Promise<void> {
    const earlier = await inWindowOf(batchId);
    if (earlier.length === 0) return;
    const named = [];
    for (const row of await maySendOf(batchId)) {
      const payouts: Covering[] = [];
      for (const batch of earlier) payouts.push(...(await ofDocument(row.document, batch.id)));
      named.push({
        orderId: row.order_id,
        state: row.state,
        cents: row.value_cents,
        reference: row.reference,
        payouts,
      });
    }
    await rows.applyPlan(planChangesOfPaid(named), why);
  }

  /**
   * The same-name rule (see the SQLite store's holdIfNamedAsEarlier): a file named as an
   * earlier batch that repeats any of its rows is held whole until a person answers, and
   * nothing of that earlier batch is sent meanwhile.
   */
  async function holdIfNamedAsEarlier(
    batchId: number,
    newBatchAfterMs: number | null,
  ): Promise<void> {
    const batch = await rows.batchRow(batchId);
    if (!batch?.name_key) return;
    const [latest] = await batchesOfName(batch.name_key, batchId);
    const file = { id: batchId, receivedAt: batch.received_at };
    const earlier = latest && { id: latest.id, receivedAt: latest.received_at };
    if (!latest || sameNameEarlier(file, earlier, newBatchAfterMs) === undefined) return;
    const repeats = await tx.rows(statements.repeatsEarlierOfName, {
      batchId,
      nameKey: batch.name_key,
    });
    if (repeats.length === 0) return;
    const frozen = frozenSaid(batch, latest);
    const standing = (await unsentOf(latest.id)).map(standingRow);
    await rows.applyPlan(planFreeze(standing, frozen), { code: 'auditFrozen', said: frozen });
    const repeated = await tx.rows<
      { line: number; earlier_line: number; total: number },
      { batchId: number; earlier: number; listed: number }
    >(statements.repeatedLines, { batchId, earlier: latest.id, listed: 5 });
    const said = sameNameSaid(batch, latest, repeated);
    await rows.holdQueuedRows(batchId, 'same-name', said, said);
  }

  const copyRepeats = (copy: number, corrected: number) =>
    tx.rows<CopyRepeatRow, Copy>(statements.copyRepeats, { copy, corrected });

  /** Whether a batch corrects `corrected` (see isCorrection). */
  async function isCorrectionOf(copy: number, corrected: number): Promise<boolean> {
    const failed = await tx.rows<{ order_id: string; payout_state: RowState }, Copy>(
      statements.copyRepeatsOf,
      { copy, corrected },
    );
    const repeats =
      (await copyRepeats(copy, corrected)).length +
      takenOverLines(
        await linesOnPayoutsOf(corrected, copy),
        await linesOnPayoutsOf(copy, corrected),
      ) +
      countRepeatsOfFailed(
        failed.map((row) => ({ orderId: row.order_id, payoutState: row.payout_state })),
      );
    if (repeats === 0) return false;
    let fresh = 0;
    for (const row of await maySendOf(copy)) {
      if (!(await sentOfDocument(row, corrected))) fresh += 1;
    }
    const replaceable = replaceableRows(
      linesACopyReplaces(await linesOf(corrected)).length,
      await tx.rows<{ state: RowState; count: number }, { batchId: number }>(
        statements.payoutsByState,
        {
          batchId: corrected,
        },
      ),
    );
    return isCorrection({ repeats, fresh, replaceable });
  }

  /** Links a copy to the batch it corrects (see the SQLite store's applyCorrection). */
  async function applyCorrection(copy: number, corrected: number, why: Said): Promise<void> {
    const copyRow = await rows.batchRow(copy);
    if (!copyRow) throw new JournalError('refused', `batch ${copy} is not in the journal`);
    const copyBatch = { id: copy, fileName: copyRow.file_name };
    const repeats = (await copyRepeats(copy, corrected)).map(toCopyRepeat);
    await rows.applyPlan(planRepeats(copyBatch, repeats), why);
    for (const line of heldLinesOnSent(await linesOnPayoutsOf(copy, corrected))) {
      const said = coveredSaid(line.payout);
      await tx.count(statements.setLineCovered, {
        message: keptMessage(said),
        said: saidJson(said),
        batchId: copy,
        line: line.line,
      });
    }
    // Read after the repeats moved: a row that took one over is sent, or held as a change.
    const copyRows = [];
    for (const row of await maySendOf(copy)) {
      copyRows.push({
        orderId: row.order_id,
        state: row.state,
        cents: row.value_cents,
        sent: await sentOfDocument(row, corrected),
      });
    }
    await rows.applyPlan(planCopyRows(copyRows), why);
    const unsent = (await unsentOf(corrected)).map(standingRow);
    await rows.applyPlan(planLeftOut(copyBatch, unsent), why);
    // Its invalid rows were the reason for the copy: the copy's rows stand for them now.
    const file = givenName(copyBatch.fileName);
    for (const line of linesACopyReplaces(await linesOf(corrected))) {
      // Its own words stay a value where it kept one; its English, as it was kept.
      const first = saidOf(line.said);
      await tx.count(statements.supersedeInvalid, {
        corrected,
        line: line.line,
        message: keptMessage({ code: 'correctedIn', first: english(line.message), file }),
        said: first ? saidJson({ code: 'correctedIn', first, file }) : null,
      });
    }
    await tx.count(statements.setCorrects, { copy, corrected });
  }

  /**
   * A batch's rows that repeat, unchanged, a payout that failed at the gateway (of the
   * batch a copy corrects, or of any batch within duplicateWindow) are held: sent again
   * only when a person asks (`payouts retry`), never because a file repeats it.
   */
  async function holdRepeatsOfFailed(
    copy: number,
    failedIn: { corrected: number } | { since: number },
  ): Promise<void> {
    const found =
      'corrected' in failedIn
        ? await tx.rows<RepeatOfPayoutRow, Copy>(statements.repeatsOfFailed, {
            copy,
            corrected: failedIn.corrected,
          })
        : await tx.rows<RepeatOfPayoutRow, { copy: number }>(statements.repeatsOfFailedElsewhere, {
            copy,
          });
    const repeats = found.map(toRepeatOfPayout);
    const since = 'since' in failedIn ? failedIn.since : null;
    await rows.applyPlan(planRepeatsOfFailed(repeats, since), {
      code: 'auditRepeatsFailed',
    });
  }

  /** A person answered a file that froze earlier batches of its name: they go on as they stand. */
  async function thaw(copy: number, why: Said): Promise<void> {
    const nameKey = (await rows.batchRow(copy))?.name_key;
    if (!nameKey) return;
    await rows.applyPlan(planThaw(await frozenOfName(nameKey, copy), copy), why);
  }

  /** Rows a copy turned down had closed go back to where they were. */
  async function giveBack(copy: number, why: Said): Promise<void> {
    const closed = await tx.rows<
      { order_id: string; state: RowState; hold_reason: HoldReason | null },
      { copy: number }
    >(statements.supersededBy, { copy });
    await rows.applyPlan(
      planGiveBack(
        closed.map((row) => ({
          orderId: row.order_id,
          state: row.state,
          holdReason: row.hold_reason,
        })),
      ),
      why,
    );
  }

  return {
    /** The corrected-copy and same-name rules, once a file has been read (finishBatch). */
    async weighFinished(
      batchId: number,
      rules: AdmissionRules & { sameNameNewBatchAfterMs: number | null },
    ): Promise<void> {
      await holdChangesOfPaid(batchId, { code: 'auditNameWeighed' });
      const corrected = await correctionOf(batchId);
      if (corrected !== undefined && (await isCorrectionOf(batchId, corrected))) {
        await applyCorrection(batchId, corrected, {
          code: 'auditCorrectedCopyOf',
          batchId: corrected,
        });
        await holdRepeatsOfFailed(batchId, { corrected });
      } else {
        await holdIfNamedAsEarlier(batchId, rules.sameNameNewBatchAfterMs);
        // Another file repeating a failed payout is a drop, not a person's request.
        await holdRepeatsOfFailed(batchId, { since: coverSince(await rows.at(), rules) });
      }
    },
    /** A person says `copy` corrects `corrected` (correctBatch). */
    async correct(copy: number, corrected: number, why: Said): Promise<void> {
      await applyCorrection(copy, corrected, why);
      await holdRepeatsOfFailed(copy, { corrected });
    },
    giveBack,
    thaw,
    /** Batches frozen while `copy` waits for a person, with what each holds back. */
    async frozenFor(copy: number) {
      const nameKey = (await rows.batchRow(copy))?.name_key;
      if (!nameKey) return [];
      return frozenBatches(await frozenOfName(nameKey, copy), copy);
    },
    /** The rows of a copy that may now be sent (see correctBatch). */
    sendableOfCopy: async (copy: number): Promise<number> => sendableRows(await unsentOf(copy)),
  };
}
