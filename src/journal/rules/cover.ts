/**
 * The cover rule (docs/who-is-paid.md, rule 2), decided from the payouts a store read by
 * a row's document and amount or reference: which earlier payout of another file covers
 * the row, and the payouts a retry or a repeat of a failed payout is weighed against.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import { isPeriod } from '../../csv/reference.js';
import { documentKey, duplicateSaid, type Covering } from '../admission.js';
import type { Said } from '../../messages/said.js';
import type { BatchState } from '../batch-states.js';
import { MAY_MOVE_MONEY, RETRYABLE, SENT, type RowState } from '../states.js';
import type { AdmissionRules } from '../types.js';

/**
 * What the cover rule weighs a row by: its document, amount and reference (when its file
 * gives one), and its orderId (never its own cover).
 */
export interface CoverKey {
  orderId: string;
  document: string;
  valueCents: number;
  reference: string | null;
}

export const coverKeyOf = (request: CashOutRequest, reference: string | undefined): CoverKey => ({
  orderId: request.orderId,
  document: documentKey(request.cpfCnpj),
  valueCents: request.value,
  reference: reference ?? null,
});

/**
 * A payout a store read as a possible cover: of the row's document, with its amount, or
 * its reference, or neither (the store reads by key, these rules weigh the rest).
 */
export interface CoverCandidate {
  covering: Covering;
  /** Its place in the journal (its row id): payouts in the order they were journaled. */
  journalOrder: number;
  lastSentAt: number | null;
  updatedAt: number;
  batchState: BatchState;
  /** The rows that name it as their cover, each with its state and its batch's. */
  coveredRows: readonly { state: RowState; batchState: BatchState }[];
}

/** Where duplicateWindow begins, for a row weighed at `now`. */
export const coverSince = (now: number, rules: AdmissionRules): number =>
  now - rules.duplicateWindowMs;

/** Batches whose rows will never be sent: a file turned down, or unusable. */
export const TURNED_DOWN: readonly BatchState[] = ['refused', 'unusable'];

/**
 * A payout's own time, from which duplicateWindow counts: the later of when it was last
 * sent and when it last moved (settled, say), never when its row was journaled; a row
 * held for days and then paid counts from the day it was paid. A row queued and never
 * sent counts as now, however long it waited: the next run sends it.
 */
export function withinWindow(
  candidate: Pick<CoverCandidate, 'covering' | 'lastSentAt' | 'updatedAt'>,
  since: number,
): boolean {
  const { lastSentAt, updatedAt, covering } = candidate;
  const neverSent = covering.state === 'queued' && lastSentAt === null;
  return neverSent || Math.max(lastSentAt ?? 0, updatedAt) >= since;
}

/**
 * Of a file that may still move money: its own state, and its batch's (a row of a file
 * turned down will never be sent).
 */
const mayMoveMoney = (candidate: CoverCandidate): boolean =>
  MAY_MOVE_MONEY.includes(candidate.covering.state) && !TURNED_DOWN.includes(candidate.batchState);

/**
 * Covers a row already: one held as its possible duplicate, or covered by it, in a file
 * not turned down (a row of such a file no longer uses its cover up: it will never be sent).
 */
const usedUp = (candidate: CoverCandidate): boolean =>
  candidate.coveredRows.some(
    (row) =>
      (row.state === 'held' || row.state === 'covered') && !TURNED_DOWN.includes(row.batchState),
  );

/**
 * The same document and reference, at any age; a month (isPeriod) with the amount too.
 * Else the same document and amount within the window; for a row with a reference, only
 * against payouts without one (journaled before references were read, or from a file
 * without the column).
 */
function matches(key: CoverKey, candidate: CoverCandidate, since: number): boolean {
  const { reference, valueCents } = candidate.covering;
  const sameAmount = valueCents === key.valueCents;
  if (key.reference !== null && reference === key.reference) {
    return sameAmount || !isPeriod(key.reference);
  }
  const byAmount = sameAmount && withinWindow(candidate, since);
  return key.reference === null ? byAmount : byAmount && reference === null;
}

/**
 * Which payouts of the journal a row is weighed against: those journaled before `before`
 * (a row id), or that have left since (a row waiting for balance beyond the window, whose
 * copy was paid meanwhile, is not paid again); and after `after`.
 */
export interface CoverRange {
  before: number;
  after: number;
}

/** A row being taken in is weighed against the whole journal. */
export const WHOLE_JOURNAL: CoverRange = { before: Number.MAX_SAFE_INTEGER, after: 0 };

/**
 * The payout that covers a row of batch `batchId`: of the candidates a store read, the
 * first journaled of another file, in `range`, that may move money, matches the row
 * (see matches) and covers no other row yet. The journal's own order, never the clock
 * (which may step back), so a claim's check never holds the older of two unsent rows.
 */
export function coverOf(
  key: CoverKey,
  batchId: number,
  candidates: readonly CoverCandidate[],
  { since, range }: { since: number; range: CoverRange },
): Covering | undefined {
  return firstOf(
    candidates.filter(
      (candidate) =>
        candidate.covering.batchId !== batchId &&
        candidate.covering.orderId !== key.orderId &&
        inRange(candidate, range) &&
        mayMoveMoney(candidate) &&
        !usedUp(candidate) &&
        matches(key, candidate, since),
    ),
  );
}

const inRange = ({ covering, journalOrder }: CoverCandidate, range: CoverRange): boolean =>
  (journalOrder < range.before || SENT.includes(covering.state)) && journalOrder > range.after;

/**
 * The part of the journal a queued row is weighed against as it is claimed: what was
 * journaled before it; or, once a person released it, only what was journaled after it
 * and after the repeat they confirmed (they were shown what came before).
 */
export function claimRange(row: {
  journalOrder: number;
  releasedAt: number | null;
  confirmedOrder: number | null;
}): CoverRange {
  return row.releasedAt === null
    ? { before: row.journalOrder, after: 0 }
    : { before: 0, after: Math.max(row.journalOrder, row.confirmedOrder ?? 0) };
}

/** A queued row as a claim weighs it again, from the store's columns of it. */
export interface QueuedFacts {
  key: CoverKey;
  batchId: number;
  journalOrder: number;
  releasedAt: number | null;
  /** Of a released row: the journal order of the payout the person said it repeats. */
  confirmedOrder: number | null;
}

/**
 * Why a claim holds a queued row that `covering` now covers: the row's message, its cover,
 * and the audit's reason (`when`: a claim, or a person's answer about a copy).
 */
export function holdAtClaim(
  row: QueuedFacts,
  covering: Covering,
  fileName: string,
  rules: AdmissionRules,
  when: 'claimed' | 'correctionAnswered',
): { said: Said; coveredBy: string; reason: Said } {
  const said = duplicateSaid(
    covering,
    { id: row.batchId, fileName },
    { cents: row.key.valueCents, reference: row.key.reference },
  );
  return { said, coveredBy: covering.orderId, reason: { code: 'auditCheckedAgain', when, said } };
}

/**
 * A payout of another file that has paid (or may pay) a failed payout's person its
 * amount within the window, as it is sent again: any but the failed payout's own copies
 * (held as its repeats, and their copies in turn, in `copies`). First the oldest.
 */
export function paidSince(
  failed: { batchId: number; valueCents: number },
  candidates: readonly CoverCandidate[],
  { since, copies }: { since: number; copies: ReadonlySet<string> },
): Covering | undefined {
  return firstOf(
    candidates.filter(
      (candidate) =>
        candidate.covering.batchId !== failed.batchId &&
        candidate.covering.valueCents === failed.valueCents &&
        !copies.has(candidate.covering.orderId) &&
        mayMoveMoney(candidate) &&
        withinWindow(candidate, since),
    ),
  );
}

/**
 * A payout within the window that definitely failed, paying that amount to that Pix key
 * (of the row's document): the row repeats it. First the oldest.
 */
export function failedRepeated(
  row: { valueCents: number; pixKey: string },
  candidates: readonly (CoverCandidate & { pixKey: string })[],
  since: number,
): Covering | undefined {
  return firstOf(
    candidates.filter(
      (candidate) =>
        candidate.covering.valueCents === row.valueCents &&
        candidate.pixKey === row.pixKey &&
        RETRYABLE.includes(candidate.covering.state) &&
        withinWindow(candidate, since),
    ),
  );
}

function firstOf(candidates: readonly CoverCandidate[]): Covering | undefined {
  let first: CoverCandidate | undefined;
  for (const candidate of candidates) {
    if (first === undefined || candidate.journalOrder < first.journalOrder) first = candidate;
  }
  return first?.covering;
}
