/** The batches aggregate of the SQLite journal: files, their lines and their states. */
import type { BatchState } from '../batch-states.js';
import { JournalError } from '../journal-error.js';
import type { HoldReason } from '../states.js';
import type {
  JournalApproval,
  JournalBatches,
  JournalCorrections,
  JournalIntake,
} from '../journal.js';
import { homeTag } from '../../csv/order-id.js';
import type {
  AdmissionRules,
  ArrivingFile,
  BatchEvent,
  BatchInput,
  BatchLine,
  BatchOfFile,
  BatchRecord,
} from '../types.js';
import {
  english,
  reasonOf,
  saidOf,
  toBatch,
  type BatchRow,
  type Context,
  type LineRow,
  type Synchronous,
} from './context.js';
import { batchOfFile } from '../rules/batch-of-file.js';
import { coverSince } from '../rules/cover.js';
import {
  BALANCE_STATES,
  HELD_FOR_BALANCE,
  thawsOnRelease,
  balanceByBatch,
  type BalanceGroup,
} from '../rules/holds.js';
import { heldAtClaim, QUEUED_COLUMNS, type QueuedRow } from './admitting.js';
import type { Corrections } from './corrections.js';
import { saidJson, type Rows } from './rows.js';
import type { Said } from '../../messages/said.js';

const HELD_FOR_BALANCE_JSON = JSON.stringify(HELD_FOR_BALANCE);
const BALANCE_STATES_JSON = JSON.stringify(BALANCE_STATES);

/** A row's hold reason (`column`) is one of @reasons, a JSON list where null is none. */
const HELD_FOR = (column: string): string =>
  `COALESCE(${column}, '') IN (SELECT COALESCE(value, '') FROM json_each(@reasons))`;

export function createBatches(
  { db, now, writing, admitting }: Context,
  rows: Rows,
  corrections: Corrections,
): Synchronous<JournalIntake & JournalBatches & JournalApproval & JournalCorrections> {
  const statements = {
    insertBatch: db.prepare<{
      fileName: string;
      sha256: string;
      receivedAt: number;
      state: BatchState;
      rows: number;
      valid: number;
      invalid: number;
      totalCents: number;
      problems: string;
      nameKey: string | null;
      nameNumber: number;
      orderIdHome: string | null;
    }>(`
      INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid, total_cents, problems, name_key, name_number, order_id_home)
      VALUES (@fileName, @sha256, @receivedAt, @state, @rows, @valid, @invalid, @totalCents, @problems, @nameKey, @nameNumber, @orderIdHome)`),
    journalId: db.prepare<[], { journal_id: string }>(
      `SELECT journal_id FROM identity WHERE id = 1`,
    ),
    lastNameNumber: db.prepare<[string], { n: number }>(
      `SELECT COALESCE(MAX(name_number), 0) AS n FROM batches WHERE name_key = ?`,
    ),
    batchesBySha256: db.prepare<[string], BatchRow>(
      `SELECT * FROM batches WHERE sha256 = ? ORDER BY id`,
    ),
    batchesInState: db.prepare<[BatchState], BatchRow>(
      `SELECT * FROM batches WHERE state = ? ORDER BY id`,
    ),
    resultNameTaken: db.prepare<[string], object>(`SELECT 1 FROM batches WHERE result_name = ?`),
    setResultName: db.prepare<[string, number]>(`UPDATE batches SET result_name = ? WHERE id = ?`),
    setAwaitingName: db.prepare<[string, number]>(
      `UPDATE batches SET awaiting_name = ? WHERE id = ?`,
    ),
    batchesNamed: db.prepare<[string], BatchRow>(
      `SELECT * FROM batches WHERE file_name = ? ORDER BY id`,
    ),
    allBatches: db.prepare<[], BatchRow>(`SELECT * FROM batches ORDER BY id`),
    setHeldBecause: db.prepare<[string | null, number]>(
      `UPDATE batches SET held_because = ? WHERE id = ?`,
    ),
    finishBatch: db.prepare<{
      id: number;
      rows: number;
      valid: number;
      invalid: number;
      totalCents: number;
      problems: string;
    }>(`
      UPDATE batches SET rows = @rows, valid = @valid, invalid = @invalid,
        total_cents = @totalCents, problems = @problems
      WHERE id = @id`),
    // @states: a JSON list of the row states the balance check reads; its rule picks.
    balanceGroups: db.prepare<{ states: string }, BalanceGroup>(`
      SELECT p.batch_id AS "batchId", b.state AS "batchState", p.state AS state,
        p.hold_reason AS "holdReason", SUM(p.value_cents) AS cents, COUNT(*) AS count
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.state IN (SELECT value FROM json_each(@states))
      GROUP BY p.batch_id, p.state, p.hold_reason ORDER BY p.batch_id`),
    releaseHeld: db.prepare<
      { now: number; batchId: number; reasons: string },
      { order_id: string }
    >(`
      UPDATE payouts SET state = 'queued', hold_reason = NULL, updated_at = @now
      WHERE batch_id = @batchId AND state = 'held' AND ${HELD_FOR('hold_reason')}
      RETURNING order_id`),
    // @only: a JSON list of the orderIds to release, or null for every row held so. A
    // released repeat keeps the payout it repeats (covered_by): its claim weighs it past it.
    releaseHolds: db.prepare<
      { now: number; batchId: number; reason: HoldReason; only: string | null },
      { order_id: string; value_cents: number }
    >(`
      UPDATE payouts SET state = 'queued', hold_reason = NULL, message = NULL, said = NULL,
        released_at = @now, updated_at = @now
      WHERE batch_id = @batchId AND state = 'held' AND hold_reason = @reason
        AND (@only IS NULL OR order_id IN (SELECT value FROM json_each(@only)))
      RETURNING order_id, value_cents`),
    queuedOf: db.prepare<[number], QueuedRow>(
      `SELECT ${QUEUED_COLUMNS} FROM payouts p WHERE p.batch_id = ? AND p.state = 'queued' ORDER BY p.line`,
    ),
    linesOfBatch: db.prepare<
      { batchId: number; kinds: string; limit: number },
      LineRow & { count: number }
    >(
      // The count over every line of those kinds, taken before the limit.
      `SELECT *, COUNT(*) OVER () AS count FROM batch_lines
       WHERE batch_id = @batchId AND kind IN (SELECT value FROM json_each(@kinds))
       ORDER BY line LIMIT @limit`,
    ),
    batchEvents: db.prepare<[number], Omit<BatchEvent, 'detail'> & { detail: string }>(
      `SELECT at, event, by, detail FROM batch_events WHERE batch_id = ? ORDER BY id`,
    ),
    approvalsSince: db.prepare<
      [number],
      Omit<BatchEvent, 'detail'> & { detail: string; batchId: number }
    >(
      `SELECT batch_id AS batchId, at, event, by, detail FROM batch_events
       WHERE event = 'approved' AND at >= ? ORDER BY at, id`,
    ),
    supersededBy: db.prepare<[number], BatchRow>(`
      SELECT * FROM batches WHERE id IN (
        SELECT superseded_by FROM payouts WHERE batch_id = ? AND state = 'superseded')
      ORDER BY id`),
  };

  return {
    recordBatch: writing((batch: BatchInput, lines: readonly BatchLine[]): number => {
      const { lastInsertRowid } = statements.insertBatch.run({
        ...batch,
        receivedAt: now(),
        problems: JSON.stringify(batch.problems),
        // Recorded whole, not read from a named file: no part in the same-name rule.
        nameKey: null,
        nameNumber: 1,
        orderIdHome: null,
      });
      const batchId = Number(lastInsertRowid);
      rows.insertLines(batchId, lines);
      return batchId;
    }),

    batch: (batchId) => {
      const row = rows.batchRow(batchId);
      return row ? toBatch(row) : undefined;
    },

    batches: (fileName) =>
      (fileName === undefined
        ? statements.allBatches.all()
        : statements.batchesNamed.all(fileName)
      ).map(toBatch),

    batchesOf: (sha256) => statements.batchesBySha256.all(sha256).map(toBatch),

    batchesIn: (state) => statements.batchesInState.all(state).map(toBatch),

    latestOfName: (nameKey) => {
      const [latest] = corrections.batchesOfName(nameKey, 0);
      return latest && toBatch(latest);
    },

    resultName: writing((batchId: number, candidates: readonly string[]): string => {
      const row = rows.batchRow(batchId);
      if (row?.result_name) return row.result_name;
      const name = candidates.find((candidate) => !statements.resultNameTaken.get(candidate));
      if (name === undefined)
        throw new JournalError('refused', `batch ${batchId}: no free result file name`);
      statements.setResultName.run(name, batchId);
      return name;
    }),

    setAwaitingName: (batchId, name) => {
      statements.setAwaitingName.run(name, batchId);
    },

    setBatchState: writing((batchId: number, state: BatchState): void => {
      rows.moveBatch(batchId, state);
    }),

    batchForFile: writing((file: ArrivingFile): BatchOfFile => {
      const earlier = batchOfFile(file, statements.batchesBySha256.all(file.sha256).map(toBatch));
      if (earlier.kind !== 'new') {
        return { kind: earlier.kind, batchId: earlier.batch.id, ...derivation(earlier.batch) };
      }
      const nameNumber = (statements.lastNameNumber.get(file.nameKey)?.n ?? 0) + 1;
      const journalId = statements.journalId.get()?.journal_id;
      if (journalId === undefined) throw new JournalError('damaged', 'the journal has no identity');
      const orderIdHome = homeTag(journalId);
      const { lastInsertRowid } = statements.insertBatch.run({
        fileName: file.name,
        sha256: file.sha256,
        receivedAt: now(),
        state: 'admitting',
        rows: 0,
        valid: 0,
        invalid: 0,
        totalCents: 0,
        problems: '[]',
        nameKey: file.nameKey,
        nameNumber,
        orderIdHome,
      });
      return { kind: 'new', batchId: Number(lastInsertRowid), nameNumber, orderIdHome };
    }),

    // One process at a time works on a SQLite journal: no other makes rows sendable meanwhile.
    onRowsQueued: () => async () => undefined,

    finishBatch: writing(
      (...[batchId, figures, holdReason, rules]: Parameters<JournalIntake['finishBatch']>) => {
        if (figures.state === 'held' || figures.state === 'unusable') {
          rows.holdQueuedRows(batchId, 'file', english(holdReason ?? figures.state));
        } else if (rules) {
          corrections.holdChangesOfPaid(batchId, { code: 'auditNameWeighed' });
          const corrected = corrections.correctionCandidate(batchId);
          if (corrected !== undefined && corrections.isCorrectionOf(batchId, corrected)) {
            corrections.applyCorrection(batchId, corrected, {
              code: 'auditCorrectedCopyOf',
              batchId: corrected,
            });
            corrections.holdRepeatsOfFailed(batchId, { corrected });
          } else {
            corrections.holdIfNamedAsEarlier(batchId, rules.sameNameNewBatchAfterMs);
            // Another file repeating a failed payout is a drop, not a person's request.
            const since = coverSince(now(), rules);
            corrections.holdRepeatsOfFailed(batchId, { since });
          }
        }
        rows.moveBatch(batchId, figures.state);
        statements.finishBatch.run({
          ...figures,
          id: batchId,
          problems: JSON.stringify(figures.problems),
        });
      },
    ),

    recordLines: admitting((batchId: number, lines: readonly BatchLine[]): void => {
      rows.insertLines(batchId, lines);
    }),

    linesOfBatch: (batchId, kinds, limit) => {
      const rows = statements.linesOfBatch.all({ batchId, kinds: JSON.stringify(kinds), limit });
      return {
        count: rows[0]?.count ?? 0,
        first: rows.map((row) => ({
          line: row.line,
          kind: row.kind,
          orderId: row.order_id,
          column: row.column_heading,
          message: row.message,
          ...(row.said === null ? {} : { said: saidOf(row.said) }),
        })),
      };
    },

    recordBatchEvent: writing(
      (batchId: number, event: BatchEvent['event'], by: string, detail: Said): void => {
        rows.addBatchEvent(batchId, event, by, detail);
      },
    ),

    batchEvents: (batchId) =>
      statements.batchEvents.all(batchId).map((row) => ({ ...row, detail: reasonOf(row.detail) })),

    approvalsSince: (since) =>
      statements.approvalsSince.all(since).map((row) => ({ ...row, detail: reasonOf(row.detail) })),

    approveBatch: writing((batchId: number): boolean => {
      if (rows.batchRow(batchId)?.state !== 'awaiting-approval') return false;
      rows.moveBatch(batchId, 'open');
      return true;
    }),

    refuseBatch: writing((batchId: number, why: Said): boolean => {
      if (rows.batchRow(batchId)?.state !== 'awaiting-approval') return false;
      rows.moveBatch(batchId, 'refused');
      rows.holdQueuedRows(batchId, 'file', why);
      corrections.giveBack(batchId, { code: 'auditCopyTurnedDown', why });
      corrections.thaw(batchId, { code: 'auditFreezerTurnedDown', why });
      return true;
    }),

    fundBatch: writing((batchId: number): void => {
      rows.movedTogether('held', 'queued', { code: 'auditBalanceCovers' }, () =>
        statements.releaseHeld.all({ now: now(), batchId, reasons: HELD_FOR_BALANCE_JSON }),
      );
      rows.moveBatch(batchId, 'open');
      statements.setHeldBecause.run(null, batchId);
    }),

    underfundBatch: writing((batchId: number, why: Said): void => {
      rows.holdQueuedRows(batchId, 'balance', why);
      rows.moveBatch(batchId, 'underfunded');
      statements.setHeldBecause.run(saidJson(why), batchId);
    }),

    queuedByBatch: () =>
      balanceByBatch(statements.balanceGroups.all({ states: BALANCE_STATES_JSON })),

    correctBatch: writing(
      (copy: number, corrected: number, why: Said, rules: AdmissionRules): number => {
        corrections.applyCorrection(copy, corrected, why);
        corrections.holdRepeatsOfFailed(copy, { corrected });
        for (const row of statements.queuedOf.all(copy)) {
          heldAtClaim(rows, row, rules, 'correctionAnswered');
        }
        return corrections.sendableOfCopy(copy);
      },
    ),

    releaseHolds: writing(
      (batchId: number, reason: HoldReason, why: Said, only?: readonly string[]) => {
        const released = rows.movedTogether('held', 'queued', why, () =>
          statements.releaseHolds.all({
            now: now(),
            batchId,
            reason,
            only: only === undefined ? null : JSON.stringify(only),
          }),
        );
        // Its rows are new payments: what it froze of an earlier batch of its name is too.
        if (thawsOnRelease(reason)) {
          corrections.thaw(batchId, { code: 'auditUnfrozen', why });
        }
        return {
          rows: released.length,
          cents: released.reduce((sum, row) => sum + row.value_cents, 0),
        };
      },
    ),

    supersededBy: (batchId) => statements.supersededBy.all(batchId).map(toBatch),

    frozenFor: (copy) => corrections.frozenFor(copy),
  };
}

/** What a batch's derived orderIds are made with, beside its name stem. */
function derivation(batch: BatchRecord): Pick<BatchOfFile, 'nameNumber' | 'orderIdHome'> {
  return { nameNumber: batch.nameNumber, orderIdHome: batch.orderIdHome };
}
