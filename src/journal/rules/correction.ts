/**
 * The corrected-copy rules (docs/who-is-paid.md, rule 4), decided from facts a store
 * reads: which earlier batch a file may correct (the 24-hour window), whether it is its
 * correction, and what becomes of each row of both batches, as plans of moves.
 */
import { givenName } from '../../csv/given-name.js';
import type { Said } from '../../messages/said.js';
import {
  changesPaidSaid,
  changesPayee,
  changesPayeeSaid,
  coveredSaid,
  failedBeforeSaid,
  type Covering,
  type NamedBatch,
  type Payee,
} from '../admission.js';
import { RETRYABLE, SENT, type HoldReason, type RowState } from '../states.js';
import type { BatchState } from '../batch-states.js';
import type { LineKind } from '../types.js';
import { TURNED_DOWN, withinWindow } from './cover.js';
import type { PlannedMove } from './plan.js';

/**
 * The batches of a name a file is weighed against (same name, corrected copy): those
 * whose rows may still be sent, not a file turned down or unusable.
 */
export function standingBatches<T extends { state: BatchState }>(batches: readonly T[]): T[] {
  return batches.filter((batch) => !TURNED_DOWN.includes(batch.state));
}

/** A file of the same name this soon after a batch may be its corrected copy. */
export const CORRECTION_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A batch as these rules weigh it: its place in the journal and when it arrived. */
export interface ArrivedBatch {
  id: number;
  receivedAt: number;
}

/** An earlier batch of a file's name, and how many of the file's rows share a document with it. */
export interface NamedEarlier extends ArrivedBatch {
  sharedRows: number;
}

/** The earlier batches of a file's name it arrived within 24 hours of: each one it may correct. */
export function inCorrectionWindow<T extends ArrivedBatch>(
  copy: ArrivedBatch,
  earlier: readonly T[],
): T[] {
  return earlier.filter(
    (batch) => batch.id < copy.id && copy.receivedAt - batch.receivedAt < CORRECTION_WINDOW_MS,
  );
}

/**
 * The batch a file may correct: of the earlier batches of its name in the window (refused
 * and unusable ones left out), the one it shares most rows with by document, the latest
 * of equals. A second payroll of the name between a file and its copy is not the one it
 * corrects when the copy repeats the first.
 */
export function correctionCandidate(
  copy: ArrivedBatch,
  earlier: readonly NamedEarlier[],
): number | undefined {
  let best: NamedEarlier | undefined;
  for (const batch of inCorrectionWindow(copy, earlier)) {
    const more = best === undefined || batch.sharedRows > best.sharedRows;
    const asMany = best !== undefined && batch.sharedRows === best.sharedRows && batch.id > best.id;
    if (more || asMany) best = batch;
  }
  return best?.id;
}

/**
 * The earlier batch a file named as it is weighed against (the same-name rule, rule 3):
 * the latest earlier one of its name, unless it arrived `newBatchAfterMs` or more after it
 * (sameNameNewBatchAfter: then it is a new payroll, weighed by the other rules only).
 */
export function sameNameEarlier(
  file: ArrivedBatch,
  latest: ArrivedBatch | undefined,
  newBatchAfterMs: number | null,
): number | undefined {
  if (!latest || latest.id > file.id) return undefined;
  const later = file.receivedAt - latest.receivedAt;
  return newBatchAfterMs !== null && later >= newBatchAfterMs ? undefined : latest.id;
}

/**
 * Rows a copy turned down had closed go back where they were: held for their reason, or
 * queued. `named`: the rows that name the copy; only those still closed (superseded) move.
 */
export function planGiveBack(
  named: readonly { orderId: string; state: RowState; holdReason: HoldReason | null }[],
): PlannedMove[] {
  return named
    .filter((row) => row.state === 'superseded')
    .map((row) => ({
      orderId: row.orderId,
      from: 'superseded',
      to: row.holdReason === null ? 'queued' : 'held',
      fields: { holdReason: row.holdReason },
      reason: { code: 'givenBack' },
    }));
}

/**
 * Whether a copy corrects a batch: at least one of its rows repeats a row of it (one it
 * paid, never sent, or that failed), and it has no more new rows (`fresh`: rows that
 * may be sent and change no paid row) than that batch has rows a correction may replace
 * (invalid, failed, refused, never sent).
 */
export function isCorrection(counts: { repeats: number; fresh: number; replaceable: number }) {
  return counts.repeats > 0 && counts.fresh <= counts.replaceable;
}

/** A line of one batch that is not a payout, and the payout of the other batch its orderId is. */
export interface LineOnPayout {
  line: number;
  kind: LineKind;
  payout: Covering;
}

/**
 * How many rows a copy took over by orderId: the corrected batch's lines a copy's row
 * superseded (`ofCorrected`, on the copy's payouts), and the copy's lines held as
 * repeating an orderId of the corrected batch (`ofCopy`, on its payouts).
 */
export function takenOverLines(
  ofCorrected: readonly LineOnPayout[],
  ofCopy: readonly LineOnPayout[],
): number {
  const superseded = ofCorrected.filter((line) => line.kind === 'superseded').length;
  return superseded + ofCopy.filter((line) => line.kind === 'held').length;
}

/** A copy's lines held as repeating an orderId of the corrected batch that left: that payout covers them. */
export function heldLinesOnSent(ofCopy: readonly LineOnPayout[]): LineOnPayout[] {
  return ofCopy.filter((line) => line.kind === 'held' && SENT.includes(line.payout.state));
}

/**
 * How many of a copy's rows repeat (document and amount) a payout of the corrected batch
 * that failed: like a fixed invalid row, a repeat of a row that needed a person.
 */
export function countRepeatsOfFailed(
  repeats: readonly { orderId: string; payoutState: RowState }[],
): number {
  const failed = repeats.filter((row) => RETRYABLE.includes(row.payoutState));
  return new Set(failed.map((row) => row.orderId)).size;
}

/** How many of a copy's rows its answer sends: the queued ones (a held one waits for its rule). */
export function sendableRows(rows: readonly { state: RowState }[]): number {
  return rows.filter((row) => row.state === 'queued').length;
}

/** The lines of a corrected batch its copy's rows stand for: its invalid ones, the reason for the copy. */
export function linesACopyReplaces<T extends { kind: LineKind }>(lines: readonly T[]): T[] {
  return lines.filter((line) => line.kind === 'invalid');
}

/** States of a batch's payouts a correction may replace: they need a person, or never left. */
const REPLACEABLE: readonly RowState[] = [...RETRYABLE, 'conflict', 'queued', 'held'];

/**
 * How many rows of a batch a correction may replace: its invalid lines, and its payouts
 * that need a person or were never sent, from how many payouts it has in each state.
 */
export function replaceableRows(
  invalidLines: number,
  payouts: readonly { state: RowState; count: number }[],
): number {
  return payouts.reduce(
    (sum, { state, count }) => sum + (REPLACEABLE.includes(state) ? count : 0),
    invalidLines,
  );
}

/** How a copy's row that repeats a payout of the batch it corrects was held when it was read. */
export const HELD_AS_REPEAT = { state: 'held', holdReason: 'duplicate' } as const satisfies {
  state: RowState;
  holdReason: HoldReason;
};

/** A copy's row held as a possible duplicate of a payout of the batch it corrects. */
export interface CopyRepeat {
  orderId: string;
  cents: number;
  payee: Payee;
  /** The payout it repeats, its payee, and why it is held when it is. */
  paid: Covering;
  paidPayee: Payee;
  paidHoldReason: HoldReason | null;
}

/**
 * A copy's repeats of the batch it corrects: of a payout that left, covered by it, or
 * held when it changes its amount (a changed paid row) or its payee (the money may have
 * gone to the wrong person); of a row never sent, taking it over.
 */
export function planRepeats(copy: NamedBatch, repeats: readonly CopyRepeat[]): PlannedMove[] {
  const taken: Said = { code: 'takenOverBy', file: givenName(copy.fileName) };
  return repeats.flatMap((row): PlannedMove[] => {
    const { paid } = row;
    const held = (said: Said, fields = {}): PlannedMove => ({
      orderId: row.orderId,
      from: 'held',
      to: 'held',
      fields: { ...fields, said },
      reason: { code: 'held', said },
    });
    if (!SENT.includes(paid.state)) {
      return [
        {
          orderId: paid.orderId,
          from: paid.state,
          to: 'superseded',
          fields: {
            holdReason: paid.state === 'held' ? row.paidHoldReason : null,
            supersededBy: copy.id,
            said: taken,
          },
          reason: { code: 'takenOver', by: row.orderId },
        },
        {
          orderId: row.orderId,
          from: 'held',
          to: 'queued',
          fields: {},
          reason: { code: 'takesOver', orderId: paid.orderId },
        },
      ];
    }
    if (row.cents !== paid.valueCents) {
      // The same reference at another amount: a changed paid row, never covered.
      return [held(changesPaidSaid(paid, row.cents), { holdReason: 'changes-paid' })];
    }
    if (changesPayee(row.paidPayee, row.payee)) {
      // Linked to the payout it repeats, so a release lists it as a repeat of that payout.
      const said = changesPayeeSaid(paid, row.paidPayee, row.payee, copy);
      return [held(said, { holdReason: 'changes-payee', coveredBy: paid.orderId })];
    }
    const said = coveredSaid(paid);
    return [
      {
        orderId: row.orderId,
        from: 'held',
        to: 'covered',
        fields: { coveredBy: paid.orderId, said },
        reason: { code: 'covered', said },
      },
    ];
  });
}

/**
 * Of the payouts of a corrected batch to a copy's row's document, in line order, the paid
 * row it changes: the first that left. Two references of one document are two payments:
 * only a payout of the row's reference, or without one, is that row.
 */
export function paidRowOf(
  row: { reference: string | null },
  payouts: readonly Covering[],
): Covering | undefined {
  return payouts.find(paysRowOf(row));
}

/** Whether a payout that left paid a row's document for its reference (or either has none). */
const paysRowOf =
  (row: { reference: string | null }) =>
  (payout: Covering): boolean =>
    SENT.includes(payout.state) &&
    (row.reference === null || payout.reference === null || payout.reference === row.reference);

/** A file's row that may be sent (queued, or held for its name), and its reference. */
export interface RowOfName {
  orderId: string;
  state: RowState;
  cents: number;
  reference: string | null;
  /** Payouts to its document in the batches of its name within the day: newest batch first, each in line order. */
  payouts: readonly Covering[];
}

/**
 * A file's rows that give another amount to someone a batch of its name paid within the
 * day are held (changes a paid row), naming the first such payout, whether or not the
 * file is a correction. A row that repeats an amount paid changes nothing: the same-name
 * rule or the corrected copy weighs it.
 */
export function planChangesOfPaid(rows: readonly RowOfName[]): PlannedMove[] {
  return planCopyRows(
    rows.flatMap((row) => {
      const paid = row.payouts.filter(paysRowOf(row));
      const [sent] = paid;
      if (!sent || paid.some((payout) => payout.valueCents === row.cents)) return [];
      return [{ orderId: row.orderId, state: row.state, cents: row.cents, sent }];
    }),
  );
}

/** Whether a file's row may yet be sent: queued, or held for its name alone (an answer sends it). */
export function maySend(row: { state: RowState; holdReason: HoldReason | null }): boolean {
  return row.state === 'queued' || (row.state === 'held' && row.holdReason === 'same-name');
}

/** A copy's row that may be sent (maySend), and the payout it changes. */
export interface CopyRow {
  orderId: string;
  state: RowState;
  cents: number;
  /** A payout of the corrected batch to its document (and reference) that left, if any. */
  sent: Covering | undefined;
}

/**
 * A copy's other rows: one that gives another amount to a document the corrected batch
 * paid is held (changes a paid row); one held for its name is sent, in place of a row
 * that needed a person.
 */
export function planCopyRows(rows: readonly CopyRow[]): PlannedMove[] {
  return rows.flatMap((row): PlannedMove[] => {
    if (row.sent) {
      const said = changesPaidSaid(row.sent, row.cents);
      // Held already (its name an earlier batch's): held now for the paid row it changes.
      return [
        {
          orderId: row.orderId,
          from: row.state,
          to: 'held',
          fields: { holdReason: 'changes-paid', said },
          reason: { code: 'held', said },
        },
      ];
    }
    if (row.state !== 'held') return [];
    return [
      {
        orderId: row.orderId,
        from: 'held',
        to: 'queued',
        fields: {},
        reason: { code: 'replaces' },
      },
    ];
  });
}

/** A row of the corrected batch still unsent (queued or held), and why it is held. */
export interface UnsentRow {
  orderId: string;
  state: RowState;
  holdReason: HoldReason | null;
}

/** Every row of the corrected batch still unsent is closed: never sent because a copy came. */
export function planLeftOut(copy: NamedBatch, unsent: readonly UnsentRow[]): PlannedMove[] {
  const file = givenName(copy.fileName);
  const said: Said = { code: 'leftOutByCopy', file };
  return unsent.map((row) => ({
    orderId: row.orderId,
    from: row.state,
    to: 'superseded',
    fields: {
      holdReason: row.state === 'held' ? row.holdReason : null,
      supersededBy: copy.id,
      said,
    },
    reason: { code: 'leftOut', file },
  }));
}

/** A file's row and a payout it repeats unchanged (document, amount, Pix key), as read. */
export interface RepeatOfPayout {
  orderId: string;
  state: RowState;
  payout: Covering;
  /** The payout's own times, from which duplicateWindow counts (withinWindow). */
  lastSentAt: number | null;
  updatedAt: number;
}

/**
 * A file's queued rows that repeat, unchanged, a payout that definitely failed at the
 * gateway are held, each naming the first such payout of `repeats` (read in the file's
 * order, then the payouts' own): a failed payout is sent again only when a person asks
 * (`payouts retry`), never because a file repeats it. `since`: where duplicateWindow
 * begins, counted from each payout's own time, as `payouts run --dry-run` weighs it; null
 * for the batch a copy corrects, whatever its age.
 */
export function planRepeatsOfFailed(
  repeats: readonly RepeatOfPayout[],
  since: number | null,
): PlannedMove[] {
  const held = new Set<string>();
  return repeats.flatMap((row): PlannedMove[] => {
    if (row.state !== 'queued' || !RETRYABLE.includes(row.payout.state) || held.has(row.orderId))
      return [];
    if (since !== null && !withinWindow({ ...row, covering: row.payout }, since)) return [];
    held.add(row.orderId);
    const said = failedBeforeSaid(row.payout);
    return [
      {
        orderId: row.orderId,
        from: 'queued',
        to: 'held',
        fields: { holdReason: 'failed-before', coveredBy: row.payout.orderId, said },
        reason: { code: 'held', said },
      },
    ];
  });
}
