/**
 * The reports aggregate of the SQLite journal: what became of a batch's lines, counted in
 * SQL (a file may have a million rows), its result lines a page at a time, and a payout's
 * history.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import { OWN_HOLDS } from '../answers.js';
import type { JournalReports } from '../journal.js';
import { ROW_STATES, type HoldReason, type RowState } from '../states.js';
import type {
  HeldRow,
  HoldSummary,
  LineKind,
  LineOutcome,
  PayeeEntry,
  ResultEntry,
  ResultPayout,
  ResultRequest,
  RowTotals,
} from '../types.js';
import {
  GATEWAY_ANSWER_COLUMNS,
  gatewayAnswerOf,
  reasonOf,
  saidOf,
  type Context,
  type GatewayAnswerRow,
  type RequestRow,
  type Synchronous,
} from './context.js';

/**
 * A line of a result as both stores read it: the line's columns, and its payout's (each
 * null where the line names none).
 */
export interface ResultLineRow
  extends Omit<RequestRow, 'order_id' | 'email' | 'phone'>, GatewayAnswerRow {
  order_id: string | null;
  state: RowState;
  transaction_id: number | null;
  entry_line: number;
  entry_kind: 'payout' | LineKind;
  entry_order_id: string | null;
  note: string | null;
  column_heading: string | null;
  line_name: string | null;
  line_value_cents: number | null;
  line_value_written: string | null;
  line_said: string | null;
  line_cpf_cnpj: string | null;
  line_pix_key_type: string | null;
  line_pix_key: string | null;
  cover_order_id: string | null;
  cover_state: RowState | null;
  cover_file_name: string | null;
  cover_line: number | null;
  repeats_state: RowState | null;
}

/**
 * A payout's columns a result line shows, the request's as columns: SQLite's `request`
 * is JSON made for each row read, which took most of a 200,000-row result's time.
 */
const RESULT_PAYOUT_COLUMNS = `p.order_id, p.state, p.value_cents, p.pix_key_type, p.pix_key,
      p.cpf_cnpj, p.name, p.request_written, p.transaction_id,
      ${GATEWAY_ANSWER_COLUMNS.map((column) => `p.${column}`).join(', ')}`;

/** A batch's lines that are not payouts, a replay joined to the payout it repeats, a covered line to the payout that covers it. */
const RESULT_LINES = `
    SELECT l.line AS entry_line, l.kind AS entry_kind, l.order_id AS entry_order_id,
      l.message AS note, l.column_heading, l.name AS line_name, l.value_cents AS line_value_cents,
      l.value_written AS line_value_written, l.said AS line_said, l.cpf_cnpj AS line_cpf_cnpj,
      l.pix_key_type AS line_pix_key_type, l.pix_key AS line_pix_key,
      c.order_id AS cover_order_id, c.state AS cover_state, cb.file_name AS cover_file_name,
      c.line AS cover_line, c.state AS repeats_state, ${RESULT_PAYOUT_COLUMNS}
    FROM batch_lines l LEFT JOIN payouts p ON l.kind = 'replay' AND p.order_id = l.order_id
      LEFT JOIN payouts c ON l.kind = 'covered' AND c.order_id = l.order_id
      LEFT JOIN batches cb ON cb.id = c.batch_id
    WHERE l.batch_id = @batchId AND l.line > @after`;

/**
 * Every line of a batch in file order, a replay joined to the payout it repeats, a covered
 * row or line to the payout that covers it (its state now): one text both stores run.
 */
export const RESULT_ENTRIES = `
    SELECT p.line AS entry_line, 'payout' AS entry_kind, p.order_id AS entry_order_id,
      NULL AS note, NULL AS column_heading, NULL AS line_name, NULL AS line_value_cents,
      NULL AS line_value_written, NULL AS line_said, NULL AS line_cpf_cnpj,
      NULL AS line_pix_key_type, NULL AS line_pix_key, c.order_id AS cover_order_id,
      c.state AS cover_state, cb.file_name AS cover_file_name, c.line AS cover_line,
      r.state AS repeats_state, ${RESULT_PAYOUT_COLUMNS}
    FROM payouts p
      LEFT JOIN payouts c ON p.state = 'covered' AND c.order_id = p.covered_by
      LEFT JOIN batches cb ON cb.id = c.batch_id
      LEFT JOIN payouts r ON r.order_id = p.covered_by
    WHERE p.batch_id = @batchId AND p.line > @after
    UNION ALL ${RESULT_LINES}
    ORDER BY entry_line LIMIT @limit`;

/**
 * SQLite reads the same lines in two: a batch's payouts alone, with the payout each is
 * covered by read apart (few rows have one), and its other lines. A payout's line then
 * costs the columns it shows, not the other lines' (nulls in the union) nor three joins,
 * which took 0.4 of the 1.0 s of CPU a 200,000-row result's read took.
 */
const RESULT_PAYOUTS = `
    SELECT p.line AS entry_line, p.covered_by, ${RESULT_PAYOUT_COLUMNS}
    FROM payouts p WHERE p.batch_id = @batchId AND p.line > @after ORDER BY p.line LIMIT @limit`;

export interface HoldsRow {
  hold_reason: HoldReason | null;
  n: number;
  cents: number;
  message: string | null;
  said: string | null;
}

export interface HeldRowRow {
  order_id: string;
  line: number;
  name: string;
  value_cents: number;
  hold_reason: HoldReason | null;
  message: string | null;
  said: string | null;
  repeats_order_id: string | null;
  repeats_batch_id: number | null;
  repeats_file_name: string | null;
  repeats_line: number | null;
  repeats_at: number | null;
  repeats_state: RowState | null;
}

/** A payee's columns as a payout row has them, and where its request's own text has each. */
const PAYEE_FIELDS = [
  ['value_cents', '$.value'],
  ['cpf_cnpj', '$.cpfCnpj'],
  ['pix_key', '$.pixKey'],
  ['name', '$.person.name'],
] as const;

export interface PayeeRow {
  line: number;
  state: RowState;
  message: string | null;
  said: string | null;
  value_cents: number;
  cpf_cnpj: string;
  pix_key: string;
  name: string;
}

/** A payee as both stores read it. */
export const toPayee = (row: PayeeRow): PayeeEntry => ({
  line: row.line,
  name: row.name,
  cpfCnpj: row.cpf_cnpj,
  pixKey: row.pix_key,
  valueCents: Number(row.value_cents),
  state: row.state,
  message: row.message,
  said: saidOf(row.said),
});

/** A batch's held rows with the payout each repeats, for a batch's id. */
const HELD_ROWS = `
      SELECT p.order_id, p.line, json_extract(p.request, '$.person.name') AS name, p.value_cents,
        p.hold_reason, p.message, p.said, c.order_id AS repeats_order_id,
        c.batch_id AS repeats_batch_id, cb.file_name AS repeats_file_name,
        c.line AS repeats_line, c.admitted_at AS repeats_at, c.state AS repeats_state
      FROM payouts p
        LEFT JOIN payouts c ON c.order_id = p.covered_by
        LEFT JOIN batches cb ON cb.id = c.batch_id
      WHERE p.batch_id = ? AND p.state = 'held'`;

/** The reasons a row is held by itself, as an SQL list both stores read: constants of ours. */
export const OWN_HOLDS_LIST = OWN_HOLDS.map((reason) => `'${reason}'`).join(', ');

export function createReports({ db }: Context): Synchronous<Omit<JournalReports, 'payout'>> {
  const statements = {
    // A line that is not a payout counts as its kind: a replay or a held orderId of another
    // file never counts as what became of that file's payout (it was not paid by this one).
    // Every state named, as countsOfBatch: a seek of the state index, not a read of each row.
    rowTotalsOfBatch: db.prepare<
      { batchId: number },
      { key: LineOutcome; n: number; cents: number }
    >(`
      SELECT state AS key, COUNT(*) AS n, SUM(value_cents) AS cents
      FROM payouts WHERE state IN (${ROW_STATES.map((state) => `'${state}'`).join(', ')})
        AND batch_id = @batchId GROUP BY state
      UNION ALL
      SELECT kind AS key, COUNT(*) AS n, 0 AS cents
      FROM batch_lines WHERE batch_id = @batchId GROUP BY kind`),
    // As arrays: better-sqlite3 makes an object of a row's columns one property at a
    // time, more than SQLite takes to read the row (the views read them as named).
    resultPayouts: db
      .prepare<{ batchId: number; after: number; limit: number }, unknown[]>(RESULT_PAYOUTS)
      .raw(true),
    resultLines: db
      .prepare<{ batchId: number; after: number; limit: number }, unknown[]>(
        `${RESULT_LINES} ORDER BY l.line LIMIT @limit`,
      )
      .raw(true),
    coverOf: db.prepare<[string], CoverRow>(`
      SELECT c.order_id, c.state, cb.file_name, c.line
      FROM payouts c LEFT JOIN batches cb ON cb.id = c.batch_id WHERE c.order_id = ?`),
    // The request's fields from its columns, or from its own text where one was kept.
    payeesOfBatch: db.prepare<{ batchId: number; after: number; limit: number }, PayeeRow>(`
      SELECT line, state, message, said, ${PAYEE_FIELDS.map(
        ([column, path]) =>
          `CASE WHEN request_written IS NULL THEN ${column}
            ELSE json_extract(request_written, '${path}') END AS ${column}`,
      ).join(', ')}
      FROM payouts WHERE batch_id = @batchId AND line > @after ORDER BY line LIMIT @limit`),
    // Batches whose results show a payout returned since then: its own, those with a row
    // it covers, those with a line naming it (a covered, held or replayed orderId).
    batchesShowingRefundedSince: db.prepare<[number], { batch_id: number }>(`
      WITH r AS (SELECT order_id, batch_id FROM payouts WHERE state = 'refunded' AND updated_at >= ?)
      SELECT batch_id FROM r
      UNION SELECT p.batch_id FROM payouts p JOIN r ON p.covered_by = r.order_id
      UNION SELECT l.batch_id FROM batch_lines l JOIN r ON l.order_id = r.order_id
      ORDER BY batch_id`),
    history: db.prepare<
      [string],
      { at: number; from_state: RowState | null; to_state: RowState; reason: string }
    >(`
      SELECT at, from_state, to_state, reason FROM audit
      WHERE payout_id = (SELECT id FROM payouts WHERE order_id = ?) ORDER BY id`),
    // Both read the state index alone (it holds the amount): all of it, or one state's range.
    countsByState: db.prepare<[], { state: RowState; count: number; cents: number }>(
      `SELECT state, COUNT(*) AS count, SUM(value_cents) AS cents FROM payouts GROUP BY state`,
    ),
    countOfState: db.prepare<[RowState], { count: number; cents: number | null }>(
      `SELECT COUNT(*) AS count, SUM(value_cents) AS cents FROM payouts WHERE state = ?`,
    ),
    // Every state named: SQLite then reads the batch's range of each in the state index,
    // the amount's column beside it, rather than each of its rows (5x slower at 100k).
    countsOfBatch: db.prepare<[number], { state: RowState; count: number }>(
      `SELECT state, COUNT(*) AS count FROM payouts
       WHERE state IN (${ROW_STATES.map((state) => `'${state}'`).join(', ')}) AND batch_id = ?
       GROUP BY state`,
    ),
    // Pending payouts of a batch sent at or before @before, and the oldest of them (SQLite
    // gives a bare column the row MIN chose).
    pendingSentBefore: db.prepare<
      { batchId: number; before: number },
      { n: number; oldest: number | null; order_id: string | null }
    >(`
      SELECT COUNT(*) AS n, MIN(sent_at) AS oldest, order_id FROM (
        SELECT order_id, COALESCE(last_sent_at, admitted_at, updated_at) AS sent_at
        FROM payouts WHERE batch_id = @batchId AND state = 'pending')
      WHERE sent_at <= @before`),
    holdsOfBatch: db.prepare<[number], HoldsRow>(`
      -- SQLite takes the bare column (said) from the row MIN() picked: one row's words.
      SELECT hold_reason, COUNT(*) AS n, SUM(value_cents) AS cents, MIN(message) AS message, said
      FROM payouts WHERE batch_id = ? AND state = 'held' GROUP BY hold_reason ORDER BY hold_reason`),
    heldRowsOfBatch: db.prepare<[number], HeldRowRow>(`${HELD_ROWS} ORDER BY p.line`),
    ownHeldRowsOfBatch: db.prepare<[number, number], HeldRowRow>(
      `${HELD_ROWS} AND p.hold_reason IN (${OWN_HOLDS_LIST}) ORDER BY p.line LIMIT ?`,
    ),
  };

  const LineView = resultLineView(statements.resultLines.columns().map((column) => column.name));
  const PayoutView = resultPayoutView(
    statements.resultPayouts.columns().map((column) => column.name),
  );

  return {
    rowTotalsOfBatch: (batchId) => totalsOf(statements.rowTotalsOfBatch.all({ batchId })),

    resultEntries: (batchId, after, limit) => {
      const page = { batchId, after, limit };
      const covers = new Map<string, CoverRow | undefined>();
      const coverOf = (orderId: string) => {
        if (!covers.has(orderId)) covers.set(orderId, statements.coverOf.get(orderId));
        return covers.get(orderId);
      };
      const payouts = statements.resultPayouts
        .all(page)
        .map((values) => new PayoutView(values, coverOf));
      const lines = statements.resultLines.all(page).map((values) => new LineView(values));
      return mergedByLine<ResultLineRow>(payouts, lines, limit).map(toResultEntry);
    },

    payeesOfBatch: (batchId, after, limit) =>
      statements.payeesOfBatch.all({ batchId, after, limit }).map(toPayee),

    batchesShowingRefundedSince: (since) =>
      statements.batchesShowingRefundedSince.all(since).map((row) => row.batch_id),

    history: (orderId) =>
      statements.history.all(orderId).map((row) => ({
        at: row.at,
        from: row.from_state,
        to: row.to_state,
        reason: reasonOf(row.reason),
      })),

    countsByState: (states) =>
      Object.fromEntries(
        states === undefined
          ? statements.countsByState
              .all()
              .map((row) => [row.state, { count: row.count, cents: row.cents }])
          : states.flatMap((state) => {
              const { count, cents } = statements.countOfState.get(state) ?? { count: 0 };
              return count === 0 ? [] : [[state, { count, cents: cents ?? 0 }]];
            }),
      ),

    countsOfBatch: (batchId) =>
      Object.fromEntries(
        statements.countsOfBatch.all(batchId).map((row) => [row.state, { count: row.count }]),
      ),

    pendingSentBefore: (batchId, before) => {
      const row = statements.pendingSentBefore.get({ batchId, before });
      return !row || row.n === 0 || row.oldest === null || row.order_id === null
        ? undefined
        : { rows: row.n, oldestSentAt: row.oldest, oldestOrderId: row.order_id };
    },

    holdsOfBatch: (batchId) => statements.holdsOfBatch.all(batchId).map(toHoldSummary),

    heldRowsOfBatch: (batchId) => statements.heldRowsOfBatch.all(batchId).map(toHeldRow),

    ownHeldRowsOfBatch: (batchId, limit) =>
      statements.ownHeldRowsOfBatch.all(batchId, limit).map(toHeldRow),
  };
}

/** A held row as both stores read it, with the payout it repeats. */
export const toHeldRow = (row: HeldRowRow): HeldRow => ({
  orderId: row.order_id,
  line: row.line,
  name: row.name,
  cents: row.value_cents,
  reason: row.hold_reason,
  message: row.message,
  said: saidOf(row.said),
  repeats:
    row.repeats_order_id === null || row.repeats_batch_id === null || row.repeats_state === null
      ? null
      : {
          orderId: row.repeats_order_id,
          batchId: row.repeats_batch_id,
          fileName: row.repeats_file_name ?? '',
          line: row.repeats_line ?? 0,
          at: row.repeats_at,
          state: row.repeats_state,
        },
});

/** Held rows of a batch by reason, as both stores count them. */
export const toHoldSummary = (row: HoldsRow): HoldSummary => ({
  reason: row.hold_reason,
  rows: row.n,
  cents: row.cents,
  message: row.message,
  said: saidOf(row.said),
});

/** A batch's lines by outcome, as both stores count them (a key may come from both tables). */
export function totalsOf(
  counted: readonly { key: LineOutcome; n: number; cents: number }[],
): RowTotals {
  const totals: RowTotals = { rows: {}, cents: {} };
  for (const row of counted) {
    totals.rows[row.key] = (totals.rows[row.key] ?? 0) + row.n;
    totals.cents[row.key] = (totals.cents[row.key] ?? 0) + row.cents;
  }
  return totals;
}

/** A result line as both stores read it, with its payout (or the one a replay repeats). */
export const toResultEntry = (row: ResultLineRow): ResultEntry => ({
  line: row.entry_line,
  kind: row.entry_kind,
  orderId: row.entry_order_id,
  payout: row.order_id === null ? null : toResultPayout(row, row.order_id),
  note: row.note,
  column: row.column_heading,
  name: row.line_name,
  valueCents: row.line_value_cents,
  valueWritten: row.line_value_written,
  cpfCnpj: row.line_cpf_cnpj,
  pixKeyType: row.line_pix_key_type,
  pixKey: row.line_pix_key,
  said: saidOf(row.line_said),
  repeatsState: row.repeats_state,
  cover:
    row.cover_order_id === null || row.cover_state === null
      ? null
      : {
          orderId: row.cover_order_id,
          state: row.cover_state,
          fileName: row.cover_file_name ?? '',
          line: row.cover_line ?? 0,
        },
});

const toResultPayout = (row: ResultLineRow, orderId: string): ResultPayout => ({
  orderId,
  request: resultRequestOf(row),
  valueCents: row.value_cents,
  state: row.state,
  transactionId: row.transaction_id,
  ...gatewayAnswerOf(row),
});

/** The request as a result line shows it, from its columns or its own text where one was kept. */
function resultRequestOf(row: ResultLineRow): ResultRequest {
  if (row.request_written === null) {
    const {
      value_cents: value,
      pix_key_type: pixKeyType,
      pix_key: pixKey,
      cpf_cnpj: cpfCnpj,
    } = row;
    return { value, pixKeyType, pixKey, cpfCnpj, person: { name: row.name } };
  }
  const { value, pixKeyType, pixKey, cpfCnpj, person } = JSON.parse(
    row.request_written,
  ) as CashOutRequest;
  return { value, pixKeyType, pixKey, cpfCnpj, person: { name: person.name } };
}

/**
 * A row read as an array, its columns named by getters on one prototype: a page of rows
 * costs an object of one field each, not one of 33 properties added one at a time.
 */
function resultLineView(names: readonly string[]): new (values: unknown[]) => ResultLineRow {
  class View {
    constructor(readonly values: unknown[]) {}
  }
  names.forEach((name, i) =>
    Object.defineProperty(View.prototype, name, {
      get(this: View) {
        return this.values[i];
      },
    }),
  );
  return View as unknown as new (values: unknown[]) => ResultLineRow;
}

/** The payout a row is covered by (`covered_by`), as a result line shows it. */
interface CoverRow {
  order_id: string;
  state: RowState;
  file_name: string | null;
  line: number;
}

/** What RESULT_ENTRIES gives a payout's line that RESULT_PAYOUTS leaves to be made. */
const PAYOUT_LINE: Partial<Record<keyof ResultLineRow, (row: PayoutRow) => unknown>> = {
  entry_kind: () => 'payout',
  entry_order_id: (row) => row.order_id,
  // As RESULT_ENTRIES' joins: the cover's columns for a covered row alone, its state for any.
  cover_order_id: (row) => row.coverShown()?.order_id ?? null,
  cover_state: (row) => row.coverShown()?.state ?? null,
  cover_file_name: (row) => row.coverShown()?.file_name ?? null,
  cover_line: (row) => row.coverShown()?.line ?? null,
  repeats_state: (row) => row.cover()?.state ?? null,
};

type PayoutRow = ResultLineRow & {
  covered_by: string | null;
  cover(): CoverRow | undefined;
  coverShown(): CoverRow | undefined;
};

/** A payout's row of RESULT_PAYOUTS as RESULT_ENTRIES names it: a line's own columns null. */
function resultPayoutView(
  names: readonly string[],
): new (values: unknown[], coverOf: (orderId: string) => CoverRow | undefined) => ResultLineRow {
  class View {
    constructor(
      readonly values: unknown[],
      readonly coverOf: (orderId: string) => CoverRow | undefined,
    ) {}
    cover(this: PayoutRow & View) {
      return this.covered_by === null ? undefined : this.coverOf(this.covered_by);
    }
    coverShown(this: PayoutRow & View) {
      return this.state === 'covered' ? this.cover() : undefined;
    }
  }
  names.forEach((name, i) =>
    Object.defineProperty(View.prototype, name, {
      get(this: View) {
        return this.values[i];
      },
    }),
  );
  for (const name of [
    'note',
    'column_heading',
    'line_name',
    'line_value_cents',
    'line_value_written',
    'line_said',
    'line_cpf_cnpj',
    'line_pix_key_type',
    'line_pix_key',
  ] as const) {
    Object.defineProperty(View.prototype, name, { value: null });
  }
  for (const [name, made] of Object.entries(PAYOUT_LINE)) {
    Object.defineProperty(View.prototype, name, {
      get(this: PayoutRow) {
        return made(this);
      },
    });
  }
  return View as unknown as new (
    values: unknown[],
    coverOf: (orderId: string) => CoverRow | undefined,
  ) => ResultLineRow;
}

/** Two runs of rows in line order as one, up to `limit` of them (each has at most that). */
function mergedByLine<Row extends { entry_line: number }>(
  a: Row[],
  b: Row[],
  limit: number,
): Row[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const merged: Row[] = [];
  let i = 0;
  let j = 0;
  while (merged.length < limit && (i < a.length || j < b.length)) {
    const next = j >= b.length || (i < a.length && a[i]!.entry_line < b[j]!.entry_line);
    merged.push(next ? a[i++]! : b[j++]!);
  }
  return merged;
}
