/**
 * The batches aggregate of the PostgreSQL journal: files taken in, their lines and
 * states, result names, a person's events and answers (approval, a corrected copy, holds
 * released), and funding. The decisions are the rules' (../rules/); what reads then writes
 * takes a lock first, so that two hosts deciding at once decide one after the other.
 */
import pg from 'pg';
import { homeTag } from '../../csv/order-id.js';
import type { Said } from '../../messages/said.js';
import type { BatchState } from '../batch-states.js';
import { JournalError } from '../journal-error.js';
import type { Journal } from '../journal.js';
import { standingBatches } from '../rules/correction.js';
import { batchOfFile } from '../rules/batch-of-file.js';
import {
  HELD_FOR_BALANCE,
  BALANCE_STATES,
  thawsOnRelease,
  balanceByBatch,
  type BalanceGroup,
} from '../rules/holds.js';
import type { HoldReason } from '../states.js';
import { QUEUED_COLUMNS, type QueuedRow } from '../sqlite/admitting.js';
import {
  OWN_HOLDS_LIST,
  toHeldRow,
  toHoldSummary,
  type HeldRowRow,
  type HoldsRow,
} from '../sqlite/reports.js';
import {
  english,
  reasonColumn,
  reasonOf,
  saidOf,
  toBatch,
  type BatchRow,
  type LineRow,
} from '../sqlite/context.js';
import { saidJson } from '../sqlite/rows.js';
import type { BatchEvent, BatchInput, BatchRecord } from '../types.js';
import { inTransaction, type Runner } from './connection.js';
import { correctionsOn } from './corrections.js';
import { QUEUED_CHANNEL } from './listen.js';
import { heldAtClaim } from './payouts.js';
import { rowsOn, type Rows } from './rows.js';
import { AT, statement, type Statement } from './sql.js';

type Batches = Pick<
  Journal,
  | 'recordBatch'
  | 'batch'
  | 'batches'
  | 'batchesOf'
  | 'batchesIn'
  | 'setBatchState'
  | 'resultName'
  | 'setAwaitingName'
  | 'batchForFile'
  | 'finishBatch'
  | 'recordLines'
  | 'linesOfBatch'
  | 'recordBatchEvent'
  | 'batchEvents'
  | 'approvalsSince'
  | 'approveBatch'
  | 'refuseBatch'
  | 'correctBatch'
  | 'releaseHolds'
  | 'frozenFor'
  | 'fundBatch'
  | 'underfundBatch'
  | 'queuedByBatch'
  | 'supersededBy'
  | 'latestOfName'
  | 'holdsOfBatch'
  | 'heldRowsOfBatch'
  | 'ownHeldRowsOfBatch'
>;

/** A batch as inserted: its problems as JSON, and what its derived orderIds are made with. */
type InsertBatch = Omit<BatchInput, 'problems'> & {
  now: number | null;
  problems: string;
  nameKey: string | null;
  nameNumber: number;
  orderIdHome: string | null;
};

/** A batch's held rows with the payout each repeats. */
const HELD_ROWS = `
    SELECT p.order_id, p.line, p.name, p.value_cents, p.hold_reason, p.message, p.said,
       c.order_id AS repeats_order_id, c.batch_id AS repeats_batch_id,
       cb.file_name AS repeats_file_name, c.line AS repeats_line, c.admitted_at AS repeats_at,
       c.state AS repeats_state
     FROM payouts p
       LEFT JOIN payouts c ON c.order_id = p.covered_by
       LEFT JOIN batches cb ON cb.id = c.batch_id
     WHERE p.batch_id = @batchId AND p.state = 'held'`;

const statements = {
  // Files taken in, and the rules on who is paid weighed, one after another across the
  // cluster, as admissions are (payouts.ts): the rules read what the others write.
  intakeLock: statement('intake-lock', `SELECT pg_advisory_xact_lock(31, 1)`),
  // Heard at the commit by every host listening (listen.ts): rows of an open batch to send.
  tellQueued: statement('tell-queued', `SELECT pg_notify('${QUEUED_CHANNEL}', '')`),
  // Result names given one at a time: two batches never take one name.
  resultNameLock: statement('result-name-lock', `SELECT pg_advisory_xact_lock(31, 2)`),
  insertBatch: statement<InsertBatch>(
    'insert-batch',
    `INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid,
       total_cents, problems, name_key, name_number, order_id_home)
     VALUES (@fileName, @sha256, ${AT}, @state, @rows, @valid, @invalid, @totalCents,
       @problems, @nameKey, @nameNumber, @orderIdHome)
     RETURNING id`,
  ),
  journalId: statement('journal-id', `SELECT journal_id FROM identity WHERE id = 1`),
  lastNameNumber: statement<{ nameKey: string }>(
    'last-name-number',
    `SELECT COALESCE(MAX(name_number), 0) AS n FROM batches WHERE name_key = @nameKey`,
  ),
  bySha256: statement<{ sha256: string }>(
    'batches-by-sha256',
    `SELECT * FROM batches WHERE sha256 = @sha256 ORDER BY id`,
  ),
  inState: statement<{ state: BatchState }>(
    'batches-in-state',
    `SELECT * FROM batches WHERE state = @state ORDER BY id`,
  ),
  named: statement<{ fileName: string }>(
    'batches-named',
    `SELECT * FROM batches WHERE file_name = @fileName ORDER BY id`,
  ),
  all: statement('all-batches', `SELECT * FROM batches ORDER BY id`),
  batchForUpdate: statement<{ id: number }>(
    'batch-for-update',
    `SELECT * FROM batches WHERE id = @id FOR UPDATE`,
  ),
  resultNameTaken: statement<{ name: string }>(
    'result-name-taken',
    `SELECT 1 FROM batches WHERE result_name = @name`,
  ),
  setResultName: statement<{ name: string; id: number }>(
    'set-result-name',
    `UPDATE batches SET result_name = @name WHERE id = @id`,
  ),
  setAwaitingName: statement<{ name: string; id: number }>(
    'set-awaiting-name',
    `UPDATE batches SET awaiting_name = @name WHERE id = @id`,
  ),
  setHeldBecause: statement<{ heldBecause: string | null; id: number }>(
    'set-held-because',
    `UPDATE batches SET held_because = @heldBecause WHERE id = @id`,
  ),
  finishBatch: statement<{
    id: number;
    rows: number;
    valid: number;
    invalid: number;
    totalCents: number;
    problems: string;
  }>(
    'finish-batch',
    `UPDATE batches SET rows = @rows, valid = @valid, invalid = @invalid,
       total_cents = @totalCents, problems = @problems
     WHERE id = @id`,
  ),
  // The row states the balance check reads, by batch; its rule picks among the groups.
  balanceGroups: statement<{ states: string[] }>(
    'balance-groups',
    `SELECT p.batch_id AS "batchId", b.state AS "batchState", p.state,
       p.hold_reason AS "holdReason", SUM(p.value_cents)::bigint AS cents,
       COUNT(*)::bigint AS count
     FROM payouts p JOIN batches b ON b.id = p.batch_id
     WHERE p.state = ANY(@states::text[])
     GROUP BY p.batch_id, b.state, p.state, p.hold_reason ORDER BY p.batch_id`,
  ),
  // Only what the balance check held: @reasons are the rule's, a null among them for none.
  releaseHeld: statement<{ now: number | null; batchId: number; reasons: string[] }>(
    'release-held',
    `UPDATE payouts SET state = 'queued', hold_reason = NULL, updated_at = ${AT}
     WHERE batch_id = @batchId AND state = 'held'
       AND COALESCE(hold_reason, '') = ANY(@reasons::text[])
     RETURNING id, order_id`,
  ),
  // @only: the orderIds to release, or null for every row held so. A released repeat
  // keeps the payout it repeats (covered_by): its claim weighs it past it.
  releaseHolds: statement<{
    now: number | null;
    batchId: number;
    reason: HoldReason;
    only: string[] | null;
  }>(
    'release-holds',
    `UPDATE payouts SET state = 'queued', hold_reason = NULL, message = NULL, said = NULL,
       released_at = ${AT}, updated_at = ${AT}
     WHERE batch_id = @batchId AND state = 'held' AND hold_reason = @reason
       AND (@only::text[] IS NULL OR order_id = ANY(@only::text[]))
     RETURNING id, order_id, value_cents`,
  ),
  queuedOf: statement<{ batchId: number }>(
    'queued-of-batch',
    `SELECT ${QUEUED_COLUMNS} FROM payouts p
     WHERE p.batch_id = @batchId AND p.state = 'queued' ORDER BY p.line`,
  ),
  linesOfBatch: statement<{ batchId: number; kinds: string[]; limit: number }>(
    'lines-of-batch',
    // The count over every line of those kinds, taken before the limit.
    `SELECT *, (COUNT(*) OVER ())::int AS count FROM batch_lines
     WHERE batch_id = @batchId AND kind = ANY(@kinds::text[])
     ORDER BY line LIMIT @limit`,
  ),
  events: statement<{ batchId: number }>(
    'batch-events',
    `SELECT at, event, by, detail FROM batch_events WHERE batch_id = @batchId ORDER BY id`,
  ),
  approvalsSince: statement<{ since: number }>(
    'approvals-since',
    `SELECT batch_id AS "batchId", at, event, by, detail FROM batch_events
     WHERE event = 'approved' AND at >= @since ORDER BY at, id`,
  ),
  ofName: statement<{ nameKey: string }>(
    'batches-of-name',
    `SELECT * FROM batches WHERE name_key = @nameKey ORDER BY id DESC`,
  ),
  // One row's words beside the counts: the first message, and the value of that row.
  holdsOfBatch: statement<{ batchId: number }>(
    'holds-of-batch',
    `SELECT hold_reason, COUNT(*)::bigint AS n, SUM(value_cents)::bigint AS cents,
       MIN(message) AS message, (array_agg(said ORDER BY message NULLS LAST))[1] AS said
     FROM payouts WHERE batch_id = @batchId AND state = 'held'
     GROUP BY hold_reason ORDER BY hold_reason`,
  ),
  heldRowsOfBatch: statement<{ batchId: number }>(
    'held-rows-of-batch',
    `${HELD_ROWS} ORDER BY p.line`,
  ),
  ownHeldRowsOfBatch: statement<{ batchId: number; limit: number }>(
    'own-held-rows-of-batch',
    `${HELD_ROWS} AND p.hold_reason IN (${OWN_HOLDS_LIST}) ORDER BY p.line LIMIT @limit`,
  ),
  supersededBy: statement<{ batchId: number }>(
    'superseded-by',
    `SELECT * FROM batches WHERE id IN (
       SELECT superseded_by FROM payouts WHERE batch_id = @batchId AND state = 'superseded')
     ORDER BY id`,
  ),
};

const batchesOf = async <P extends object>(runner: Runner, sql: Statement<P>, params: P) =>
  (await runner.rows<BatchRow, P>(sql, params)).map(toBatch);

/** What a batch's derived orderIds are made with, beside its name stem. */
const derivation = (batch: BatchRecord) => ({
  nameNumber: batch.nameNumber,
  orderIdHome: batch.orderIdHome,
});

export function createBatches(pool: pg.Pool, pooled: Runner, clock: () => number | null): Batches {
  const transaction = <T>(work: (tx: Runner, rows: Rows, now: number | null) => Promise<T>) => {
    const now = clock();
    return inTransaction(pool, (tx) => work(tx, rowsOn(tx, now), now));
  };
  const insertBatch = async (tx: Runner, batch: InsertBatch): Promise<number> => {
    const [row] = await tx.rows<{ id: number }, InsertBatch>(statements.insertBatch, batch);
    if (!row) throw new JournalError('refused', `${batch.fileName}: not recorded`);
    return row.id;
  };
  /** The batch, locked until the transaction ends: a person's answers to it come one at a time. */
  const lockedBatch = async (tx: Runner, id: number) =>
    (await tx.rows<BatchRow, { id: number }>(statements.batchForUpdate, { id }))[0];

  return {
    recordBatch: (batch, lines) =>
      transaction(async (tx, rows, now) => {
        const id = await insertBatch(tx, {
          ...batch,
          now,
          problems: JSON.stringify(batch.problems),
          // Recorded whole, not read from a named file: no part in the same-name rule.
          nameKey: null,
          nameNumber: 1,
          orderIdHome: null,
        });
        await rows.insertLines(id, lines);
        return id;
      }),

    batch: async (batchId) => {
      const row = await rowsOn(pooled, clock()).batchRow(batchId);
      return row && toBatch(row);
    },

    batches: (fileName) =>
      fileName === undefined
        ? batchesOf(pooled, statements.all, {})
        : batchesOf(pooled, statements.named, { fileName }),

    batchesOf: (sha256) => batchesOf(pooled, statements.bySha256, { sha256 }),

    batchesIn: (state) => batchesOf(pooled, statements.inState, { state }),

    setBatchState: (batchId, state) => transaction((_tx, rows) => rows.moveBatch(batchId, state)),

    resultName: (batchId, candidates) =>
      transaction(async (tx) => {
        await tx.rows(statements.resultNameLock, {});
        const row = await lockedBatch(tx, batchId);
        if (row?.result_name) return row.result_name;
        for (const name of candidates) {
          if ((await tx.rows(statements.resultNameTaken, { name })).length > 0) continue;
          await tx.count(statements.setResultName, { name, id: batchId });
          return name;
        }
        throw new JournalError('refused', `batch ${batchId}: no free result file name`);
      }),

    setAwaitingName: async (batchId, name) => {
      await pooled.count(statements.setAwaitingName, { name, id: batchId });
    },

    batchForFile: (file) =>
      transaction(async (tx, _rows, now) => {
        await tx.rows(statements.intakeLock, {});
        const made = batchOfFile(file, await batchesOf(tx, statements.bySha256, file));
        if (made.kind !== 'new')
          return { kind: made.kind, batchId: made.batch.id, ...derivation(made.batch) };
        const [last] = await tx.rows<{ n: number }, { nameKey: string }>(
          statements.lastNameNumber,
          { nameKey: file.nameKey },
        );
        const nameNumber = (last?.n ?? 0) + 1;
        const [identity] = await tx.rows<{ journal_id: string }, object>(statements.journalId, {});
        if (!identity) throw new JournalError('damaged', 'the journal has no identity');
        const orderIdHome = homeTag(identity.journal_id);
        const batchId = await insertBatch(tx, {
          now,
          fileName: file.name,
          sha256: file.sha256,
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
        return { kind: 'new', batchId, nameNumber, orderIdHome };
      }),

    finishBatch: (batchId, figures, holdReason, rules) =>
      transaction(async (tx, rows) => {
        if (figures.state === 'held' || figures.state === 'unusable') {
          await rows.holdQueuedRows(batchId, 'file', english(holdReason ?? figures.state));
        } else if (rules) {
          await tx.rows(statements.intakeLock, {});
          await correctionsOn(tx, rows).weighFinished(batchId, rules);
        }
        await rows.moveBatch(batchId, figures.state);
        await tx.count(statements.finishBatch, {
          ...figures,
          id: batchId,
          problems: JSON.stringify(figures.problems),
        });
        if (figures.state === 'open') await tx.rows(statements.tellQueued, {});
      }),

    recordLines: (batchId, lines) => transaction((_tx, rows) => rows.insertLines(batchId, lines)),

    linesOfBatch: async (batchId, kinds, limit) => {
      const rows = await pooled.rows<
        LineRow & { count: number },
        { batchId: number; kinds: string[]; limit: number }
      >(statements.linesOfBatch, { batchId, kinds: [...kinds], limit });
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

    recordBatchEvent: (batchId, event, by, detail) =>
      rowsOn(pooled, clock()).addBatchEvent(batchId, event, by, detail),

    batchEvents: async (batchId) =>
      (
        await pooled.rows<Omit<BatchEvent, 'detail'> & { detail: string }, { batchId: number }>(
          statements.events,
          { batchId },
        )
      ).map((row) => ({ ...row, detail: reasonOf(row.detail) })),

    approvalsSince: async (since) =>
      (
        await pooled.rows<
          Omit<BatchEvent, 'detail'> & { detail: string; batchId: number },
          { since: number }
        >(statements.approvalsSince, { since })
      ).map((row) => ({ ...row, detail: reasonOf(row.detail) })),

    approveBatch: (batchId) =>
      transaction(async (tx, rows) => {
        if ((await lockedBatch(tx, batchId))?.state !== 'awaiting-approval') return false;
        await rows.moveBatch(batchId, 'open');
        await tx.rows(statements.tellQueued, {});
        return true;
      }),

    refuseBatch: (batchId, why) =>
      transaction(async (tx, rows) => {
        await tx.rows(statements.intakeLock, {});
        if ((await lockedBatch(tx, batchId))?.state !== 'awaiting-approval') return false;
        await rows.moveBatch(batchId, 'refused');
        await rows.holdQueuedRows(batchId, 'file', why);
        const corrections = correctionsOn(tx, rows);
        await corrections.giveBack(batchId, { code: 'auditCopyTurnedDown', why });
        await corrections.thaw(batchId, { code: 'auditFreezerTurnedDown', why });
        return true;
      }),

    correctBatch: (copy, corrected, why, rules) =>
      transaction(async (tx, rows) => {
        await tx.rows(statements.intakeLock, {});
        const corrections = correctionsOn(tx, rows);
        await corrections.correct(copy, corrected, why);
        const queued = await tx.rows<QueuedRow, { batchId: number }>(statements.queuedOf, {
          batchId: copy,
        });
        for (const row of queued) await heldAtClaim(rows, row, rules, 'correctionAnswered');
        return corrections.sendableOfCopy(copy);
      }),

    releaseHolds: (batchId, reason, why, only) =>
      transaction(async (tx, rows, now) => {
        await tx.rows(statements.intakeLock, {});
        const released = await rows.movedTogether('held', 'queued', why, () =>
          tx.rows<
            { id: number; order_id: string; value_cents: number },
            { now: number | null; batchId: number; reason: HoldReason; only: string[] | null }
          >(statements.releaseHolds, {
            now,
            batchId,
            reason,
            only: only === undefined ? null : [...only],
          }),
        );
        // Its rows are new payments: what it froze of an earlier batch of its name is too.
        if (thawsOnRelease(reason)) {
          await correctionsOn(tx, rows).thaw(batchId, { code: 'auditUnfrozen', why });
        }
        return {
          rows: released.length,
          cents: released.reduce((sum, row) => sum + row.value_cents, 0),
        };
      }),

    frozenFor: (copy) => transaction((tx, rows) => correctionsOn(tx, rows).frozenFor(copy)),

    fundBatch: (batchId) =>
      transaction(async (tx, rows, now) => {
        await rows.movedTogether('held', 'queued', { code: 'auditBalanceCovers' }, () =>
          tx.rows<
            { id: number; order_id: string },
            { now: number | null; batchId: number; reasons: string[] }
          >(statements.releaseHeld, {
            now,
            batchId,
            reasons: HELD_FOR_BALANCE.map((reason) => reason ?? ''),
          }),
        );
        await rows.moveBatch(batchId, 'open');
        await tx.count(statements.setHeldBecause, { heldBecause: null, id: batchId });
      }),

    underfundBatch: (batchId, why: Said) =>
      transaction(async (tx, rows) => {
        await rows.holdQueuedRows(batchId, 'balance', why);
        await rows.moveBatch(batchId, 'underfunded');
        await tx.count(statements.setHeldBecause, { heldBecause: saidJson(why), id: batchId });
      }),

    queuedByBatch: async () =>
      balanceByBatch(
        await pooled.rows<BalanceGroup, { states: string[] }>(statements.balanceGroups, {
          states: [...BALANCE_STATES],
        }),
      ),

    supersededBy: (batchId) => batchesOf(pooled, statements.supersededBy, { batchId }),

    latestOfName: async (nameKey) =>
      standingBatches(await batchesOf(pooled, statements.ofName, { nameKey }))[0],

    holdsOfBatch: async (batchId) =>
      (await pooled.rows<HoldsRow, { batchId: number }>(statements.holdsOfBatch, { batchId })).map(
        toHoldSummary,
      ),

    heldRowsOfBatch: async (batchId) =>
      (
        await pooled.rows<HeldRowRow, { batchId: number }>(statements.heldRowsOfBatch, { batchId })
      ).map(toHeldRow),

    ownHeldRowsOfBatch: async (batchId, limit) =>
      (
        await pooled.rows<HeldRowRow, { batchId: number; limit: number }>(
          statements.ownHeldRowsOfBatch,
          { batchId, limit },
        )
      ).map(toHeldRow),
  };
}
