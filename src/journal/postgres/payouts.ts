/**
 * The payouts aggregate of the PostgreSQL journal, as far as it goes: admission by the
 * rules on who is paid (../rules/admission.ts), claims, the moves answers make, and
 * claims given back. A claim takes queued rows in one statement (FOR UPDATE SKIP LOCKED:
 * hosts claiming at once each take other rows, none waits), stamping each with the next
 * claim epoch as its fence, its owner and a lease; every later write for the row is
 * guarded by that fence, and one that changes no row means the claim was taken over.
 */
import type { CashOutRequest } from '../../gateway/contract.js';
import type { Said } from '../../messages/said.js';
import { keptMessage } from '../kept-message.js';
import { english, reasonColumn } from '../sqlite/context.js';
import { admit, documentKey, payloadHash, type Covering } from '../admission.js';
import { JournalError } from '../journal-error.js';
import { failpoint } from '../../runtime/failpoint.js';
import type { Journal } from '../journal.js';
import { isResumed, planAdmission } from '../rules/admission.js';
import {
  claimRange,
  coverKeyOf,
  coverOf,
  coverSince,
  failedRepeated,
  holdAtClaim,
  WHOLE_JOURNAL,
  type CoverCandidate,
} from '../rules/cover.js';
import { QUEUED_COLUMNS, queuedFactsOf, type QueuedRow } from '../sqlite/admitting.js';
import type { RowState } from '../states.js';
import { endsCover } from '../rules/uncover.js';
import { forgottenOrderIdsOf, sampleLines } from '../first-send.js';
import type {
  AdmissionRules,
  AdmittedPayout,
  AnswerDetails,
  Claim,
  FirstSendSample,
  Move,
  PayoutInput,
} from '../types.js';
import { inTransaction, type Runner } from './connection.js';
import { takeOver, type PayoutValues } from './corrections.js';
import {
  BY_AMOUNT,
  CANDIDATE_COLUMNS,
  candidatesOf,
  CLAIM_COLUMNS,
  KNOWN_COLUMNS,
  rowsOn,
  toClaim,
  toKnown,
  toPayout,
  type CandidateParams,
  type ClaimRow,
  type KnownRow,
  type Rows,
} from './rows.js';
import { toCandidate, type CandidateRow } from '../sqlite/rows.js';
import { requestOf } from '../sqlite/context.js';
import { POSTBACK_CHANNEL } from './listen.js';
import { AT, CLUSTER_NOW, statement } from './sql.js';
import type pg from 'pg';

type Payouts = Pick<
  Journal,
  | 'admitPayouts'
  | 'known'
  | 'weigh'
  | 'failedRepeatOf'
  | 'weighMany'
  | 'payout'
  | 'lookUpNeverSent'
  | 'firstSendSamples'
  | 'forgottenOrderIds'
  | 'claimToSend'
  | 'unclaim'
  | 'claimAbandoned'
  | 'claimDue'
  | 'claimPaid'
  | 'nextPollAt'
  | 'pollNow'
  | 'pollBatchSooner'
  | 'markResending'
  | 'move'
  | 'moveMany'
>;

interface Now {
  now: number | null;
}

interface PollHint {
  transactionId: number | null;
  orderId: string | null;
}

interface ClaimCoversParams {
  documents: string[];
  values: number[];
  references: (string | null)[];
  batchIds: number[];
}

type AbandonedParams = Now & {
  owner: string;
  leaseMs: number;
  limit: number;
  batchId: number;
  line: number;
};

/** The rows `picked` (a CTE) leased to @owner, each with the next claim epoch as its fence. */
const LEASE_PICKED = `
  UPDATE payouts p SET lease_owner = @owner, lease_until = ${CLUSTER_NOW} + @leaseMs,
    fence = nextval('claim_epochs'), updated_at = ${AT}
  FROM picked WHERE p.id = picked.id
  RETURNING ${CLAIM_COLUMNS.split(', ')
    .map((column) => `p.${column}`)
    .join(', ')}`;

/**
 * Admissions one at a time across the cluster: admission reads what it weighs a row
 * against (the orderId, its cover), then writes; claims weighing the cover rule and
 * retries take it too.
 */
export const admissionLock = statement('admission-lock', `SELECT pg_advisory_xact_lock(31, 1)`);

const statements = {
  insertPayout: statement<PayoutValues>(
    'insert-payout',
    `INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, pix_key, document,
       cpf_cnpj, name, email, phone, payload_hash, admitted_at, state, updated_at, reference)
     VALUES (@orderId, @batchId, @line, @value, @pixKeyType, @pixKey, @document, @cpfCnpj,
       @name, @email, @phone, @hash, ${AT}, 'queued', ${AT}, @reference)
     RETURNING id`,
  ),
  // Which of a file's orderIds the journal has, and which of its documents another
  // file's payouts have: a row with neither is weighed against nothing.
  // Payouts of every batch (all after batch 0) of a row's document and amount, with the
  // Pix key each paid (failedRepeated weighs them).
  failedRepeated: statement<CandidateParams>(
    'failed-repeated',
    candidatesOf(BY_AMOUNT, ', p.pix_key'),
  ),
  // What many rows are weighed against (weighMany): the payouts of their orderIds, and
  // those of their documents with their amount or reference (a superset, each row's read
  // as `known`, `cover-by-amount`, `cover-by-reference` and failedRepeated read them).
  knownMany: statement<{ orderIds: string[] }>(
    'known-many',
    `SELECT ${KNOWN_COLUMNS}
     FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = ANY(@orderIds::text[])`,
  ),
  candidatesMany: statement<{
    documents: string[];
    values: number[];
    referenced: string[];
    references: string[];
  }>(
    'candidates-many',
    `SELECT ${CANDIDATE_COLUMNS}, p.document, p.pix_key FROM payouts p
       JOIN batches b ON b.id = p.batch_id
     WHERE (p.document, p.value_cents) IN
       (SELECT * FROM unnest(@documents::text[], @values::bigint[]))
     UNION
     SELECT ${CANDIDATE_COLUMNS}, p.document, p.pix_key FROM payouts p
       JOIN batches b ON b.id = p.batch_id
     WHERE (p.document, p.reference) IN
       (SELECT * FROM unnest(@referenced::text[], @references::text[]))`,
  ),
  recoverySince: statement('recovery-since', `SELECT recovery_since FROM identity WHERE id = 1`),
  // Rows of open batches never sent, looked up first once the journal recovers.
  neverSent: statement<Now & { since: number }>(
    'never-sent',
    `UPDATE payouts SET state = 'unknown', not_found = 0, last_sent_at = @since,
       updated_at = ${AT}
     WHERE state = 'queued' AND attempts = 0
       AND batch_id IN (SELECT id FROM batches WHERE state = 'open')
     RETURNING id, order_id`,
  ),
  // Every open batch with rows to send, sent from before or not: a home restored from a
  // backup taken mid-batch has rows queued that the gateway has had since.
  queuedBatches: statement(
    'queued-batches',
    `SELECT q.batch_id, b.file_name, q.queued FROM (
       SELECT batch_id, COUNT(*)::bigint AS queued FROM payouts WHERE state = 'queued'
       GROUP BY batch_id) q
     JOIN batches b ON b.id = q.batch_id
     WHERE b.state = 'open' ORDER BY q.batch_id`,
  ),
  queuedAt: statement<{ batchId: number; position: number }>(
    'queued-at',
    `SELECT order_id, line FROM payouts WHERE state = 'queued' AND batch_id = @batchId
     ORDER BY line LIMIT 1 OFFSET @position`,
  ),
  highestOfName: statement<{ nameKey: string }>(
    'highest-of-name',
    `SELECT MAX(name_number) AS n FROM batches WHERE name_key = @nameKey`,
  ),
  knownAmong: statement<{ orderIds: string[] }>(
    'known-among',
    `SELECT order_id FROM payouts WHERE order_id = ANY(@orderIds::text[])`,
  ),
  documentsElsewhere: statement<{ documents: string[]; batchId: number }>(
    'documents-elsewhere',
    `SELECT DISTINCT document FROM payouts
     WHERE document = ANY(@documents::text[]) AND batch_id <> @batchId`,
  ),
  // New rows weighed against nothing, journaled together: each with its audit entry.
  insertNew: statement<
    Now & {
      batchId: number;
      orderIds: string[];
      lines: number[];
      values: number[];
      pixKeyTypes: number[];
      pixKeys: string[];
      documents: string[];
      cpfCnpjs: string[];
      names: string[];
      emails: string[];
      phones: string[];
      hashes: string[];
      references: (string | null)[];
      reasons: string[];
    }
  >(
    'insert-new',
    `WITH given AS (
       SELECT * FROM unnest(@orderIds::text[], @lines::integer[], @values::bigint[],
         @pixKeyTypes::integer[], @pixKeys::text[], @documents::text[], @cpfCnpjs::text[],
         @names::text[], @emails::text[], @phones::text[], @hashes::text[],
         @references::text[], @reasons::text[])
         WITH ORDINALITY AS g (order_id, line, value_cents, pix_key_type, pix_key, document,
           cpf_cnpj, name, email, phone, hash, reference, reason, n)),
     inserted AS (
       INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, pix_key,
         document, cpf_cnpj, name, email, phone, payload_hash, admitted_at, state, updated_at,
         reference)
       SELECT order_id, @batchId, line, value_cents, pix_key_type, pix_key, document, cpf_cnpj,
         name, email, phone, decode(hash, 'hex'), ${AT}, 'queued', ${AT}, reference
       FROM given ORDER BY n
       RETURNING id, order_id)
     INSERT INTO audit (payout_id, at, from_state, to_state, reason)
     SELECT i.id, ${AT}, NULL, 'queued', g.reason
     FROM inserted i JOIN given g USING (order_id) ORDER BY i.id`,
  ),
  // The rows a claim may take: queued rows of open batches in file order, locked as they
  // are read, rows another claim holds skipped. A recovering journal sends directly only
  // rows it has sent before (a 429 put back): the others are looked up first. Each open
  // batch's rows are read in line order from the queue's index, so a claim stops at its
  // limit whatever the statistics say (a join sorted every queued row before them).
  queued: statement<{ limit: number }>(
    'claim-candidates',
    `SELECT ${QUEUED_COLUMNS}, p.attempts
     FROM (SELECT id FROM batches WHERE state = 'open') b
     CROSS JOIN LATERAL (
       SELECT * FROM payouts q
       WHERE q.batch_id = b.id AND q.state = 'queued'
         AND (q.attempts > 0 OR (SELECT recovery_since FROM identity WHERE id = 1) IS NULL)
       ORDER BY q.line LIMIT @limit
       FOR UPDATE SKIP LOCKED) p
     ORDER BY b.id, p.line LIMIT @limit`,
  ),
  // The possible covers of a claim's rows (the cover-by-amount and cover-by-reference
  // lookups of each), each by its row's position.
  claimCovers: statement<ClaimCoversParams>(
    'claim-covers',
    `SELECT k.n::integer - 1 AS at, c.* FROM unnest(@documents::text[], @values::bigint[],
       @references::text[], @batchIds::bigint[])
       WITH ORDINALITY AS k (document, value_cents, reference, batch_id, n)
     CROSS JOIN LATERAL (${candidatesOf('p.document = k.document AND p.reference = k.reference', '', 'k.batch_id')}
       UNION ALL ${candidatesOf('p.document = k.document AND p.value_cents = k.value_cents AND (k.reference IS NULL OR p.reference IS NULL)', '', 'k.batch_id')}) c`,
  ),
  // Each row claimed stamped with a fresh epoch as its fence, its owner and lease, and
  // audited with its reason in the same statement, in the order given.
  claimQueued: statement<
    Now & { ids: number[]; reasons: string[]; owner: string; leaseMs: number }
  >(
    'claim-queued',
    `WITH claimed AS (
       UPDATE payouts p SET state = 'sending', attempts = attempts + 1, not_found = 0,
         last_sent_at = ${AT}, updated_at = ${AT}, lease_owner = @owner,
         lease_until = ${CLUSTER_NOW} + @leaseMs, fence = nextval('claim_epochs')
       -- By the key alone: as an index condition, the state read every queued row.
       WHERE p.id = ANY(@ids::bigint[]) AND (p.state = 'queued') IS TRUE
       RETURNING ${CLAIM_COLUMNS.split(', ')
         .map((column) => `p.${column}`)
         .join(', ')}),
     audited AS (
       INSERT INTO audit (payout_id, at, from_state, to_state, reason)
       SELECT c.id, ${AT}, 'queued', 'sending', g.reason FROM claimed c
       JOIN unnest(@ids::bigint[], @reasons::text[]) WITH ORDINALITY AS g (id, reason, n)
         ON g.id = c.id
       ORDER BY g.n)
     SELECT * FROM claimed`,
  ),
  abandoned: statement<AbandonedParams>(
    'claim-abandoned',
    `WITH picked AS (
       SELECT id FROM payouts
       WHERE state IN ('sending', 'unknown') AND (lease_until IS NULL OR lease_until <= ${CLUSTER_NOW})
         AND (batch_id, line) > (@batchId, @line)
       ORDER BY batch_id, line LIMIT @limit
       FOR UPDATE SKIP LOCKED)
     ${LEASE_PICKED}`,
  ),
  // Pending payouts whose poll is due, soonest first, not leased by a live process.
  claimDue: statement<Now & { owner: string; leaseMs: number; limit: number }>(
    'claim-due',
    `WITH picked AS (
       SELECT id FROM payouts
       WHERE state = 'pending' AND transaction_id IS NOT NULL
         AND (next_poll_at IS NULL OR next_poll_at <= ${AT})
         AND (lease_until IS NULL OR lease_until <= ${CLUSTER_NOW})
       ORDER BY next_poll_at NULLS FIRST LIMIT @limit
       FOR UPDATE SKIP LOCKED)
     ${LEASE_PICKED}`,
  ),
  // Paid payouts sent since @since, after orderId @after (paging), to be read again.
  claimPaid: statement<
    Now & { owner: string; leaseMs: number; limit: number; since: number; after: string }
  >(
    'claim-paid',
    `WITH picked AS (
       SELECT id FROM payouts
       WHERE state = 'paid' AND transaction_id IS NOT NULL AND last_sent_at >= @since
         AND (lease_until IS NULL OR lease_until <= ${CLUSTER_NOW}) AND order_id > @after
       ORDER BY order_id LIMIT @limit
       FOR UPDATE SKIP LOCKED)
     ${LEASE_PICKED}`,
  ),
  nextPollAt: statement(
    'next-poll-at',
    `SELECT MIN(COALESCE(next_poll_at, 0)) AS at FROM payouts
     WHERE state = 'pending' AND transaction_id IS NOT NULL`,
  ),
  // A postback names a pending payout: due now, and a poll in flight loses its fence. Due
  // since ever (0), not at the taker's clock: the host following it reads its own.
  pollPendingNow: statement<PollHint>(
    'poll-pending-now',
    `UPDATE payouts SET next_poll_at = 0, fence = nextval('claim_epochs'),
       lease_owner = NULL, lease_until = NULL
     WHERE state = 'pending' AND (transaction_id = @transactionId::bigint
       OR (@transactionId::bigint IS NULL AND order_id = @orderId))
     RETURNING order_id`,
  ),
  // One still sending or unknown is polled as soon as it is pending.
  pollSoon: statement<PollHint>(
    'poll-soon',
    `UPDATE payouts SET next_poll_at = 0
     WHERE state IN ('sending', 'unknown')
       AND (transaction_id = @transactionId::bigint OR order_id = @orderId)
     RETURNING order_id`,
  ),
  // Heard at the commit by every host listening (listen.ts), the one following it among them.
  tellPollNow: statement<{ orderId: string }>(
    'tell-poll-now',
    `SELECT pg_notify('${POSTBACK_CHANNEL}', @orderId)`,
  ),
  // Only ever sooner: a poll a postback brought forward, or a row already due, stays.
  pollBatchSooner: statement<Now & { batchId: number; afterSentMs: number }>(
    'poll-batch-sooner',
    `UPDATE payouts SET next_poll_at = GREATEST(${AT}, last_sent_at + @afterSentMs)
     WHERE batch_id = @batchId AND state = 'pending' AND transaction_id IS NOT NULL
       AND last_sent_at IS NOT NULL
       AND next_poll_at > GREATEST(${AT}, last_sent_at + @afterSentMs)`,
  ),
  // Only while the claim is ours and its lease runs, by the cluster's clock.
  markResending: statement<Now & { orderId: string; fence: number; leaseMs: number }>(
    'mark-resending',
    `UPDATE payouts SET state = 'sending', attempts = attempts + 1, not_found = 0,
       last_sent_at = ${AT}, updated_at = ${AT}, lease_until = ${CLUSTER_NOW} + @leaseMs
     WHERE order_id = @orderId AND fence = @fence AND state = 'unknown' AND lease_until > ${CLUSTER_NOW}
     RETURNING id`,
  ),
  // The rows a group of moves reads, locked: each one's state and fence.
  rowsForMoves: statement<{ orderIds: string[] }>(
    'rows-for-moves',
    `SELECT id, order_id, state, fence FROM payouts WHERE order_id = ANY(@orderIds::text[])
     ORDER BY id FOR UPDATE`,
  ),
  unclaim: statement<Now & { orderId: string; fence: number }>(
    'unclaim',
    `UPDATE payouts SET state = 'queued', attempts = attempts - 1,
       last_sent_at = CASE WHEN attempts = 1 THEN NULL ELSE last_sent_at END,
       lease_owner = NULL, lease_until = NULL, updated_at = ${AT}
     WHERE order_id = @orderId AND fence = @fence AND state = 'sending'
     RETURNING id`,
  ),
  // Moves of distinct rows, each guarded by its fence and the state it was read in, with
  // an audit entry each where a reason is given, in the order given.
  moves: statement<Now & MovesParams>(
    'moves',
    `WITH given AS (
       SELECT * FROM unnest(@orderIds::text[], @fences::bigint[], @froms::text[], @tos::text[],
         @transactionIds::bigint[], @gatewayStatuses::text[], @setMessages::boolean[],
         @messages::text[], @fees::text[], @nets::text[], @gatewayCreatedAts::text[],
         @endToEndIds::text[], @processedAts::text[], @notFounds::integer[],
         @polls::integer[], @nextPollAts::bigint[], @pollsFailed::boolean[],
         @releases::boolean[], @reasons::text[])
         WITH ORDINALITY AS g (order_id, fence, from_state, to_state, transaction_id,
           gateway_status, set_message, message, fee, net, gateway_created_at, end_to_end_id,
           processed_at, not_found, polls, next_poll_at, poll_failed, release, reason, n)),
     moved AS (
       UPDATE payouts p SET state = g.to_state, updated_at = ${AT},
         transaction_id = COALESCE(g.transaction_id, p.transaction_id),
         gateway_status = COALESCE(g.gateway_status, p.gateway_status),
         -- A poll that gets through clears what a failed one said.
         message = CASE WHEN g.set_message THEN g.message
           WHEN g.poll_failed IS FALSE AND p.poll_failed THEN NULL
           ELSE p.message END,
         -- What a rule said is no longer the row's message once an answer's replaces it.
         said = CASE WHEN g.set_message THEN NULL ELSE p.said END,
         poll_failed = COALESCE(g.poll_failed, p.poll_failed),
         fee = COALESCE(g.fee, p.fee),
         net = COALESCE(g.net, p.net),
         gateway_created_at = COALESCE(g.gateway_created_at, p.gateway_created_at),
         end_to_end_id = COALESCE(g.end_to_end_id, p.end_to_end_id),
         processed_at = COALESCE(g.processed_at, p.processed_at),
         not_found = COALESCE(g.not_found, p.not_found),
         polls = COALESCE(g.polls, p.polls),
         -- A row that becomes pending keeps an earlier poll time a postback asked for.
         next_poll_at = CASE WHEN g.from_state <> 'pending' AND p.next_poll_at IS NOT NULL
           THEN LEAST(p.next_poll_at, COALESCE(g.next_poll_at, p.next_poll_at))
           ELSE COALESCE(g.next_poll_at, p.next_poll_at) END,
         lease_owner = CASE WHEN g.release THEN NULL ELSE p.lease_owner END,
         lease_until = CASE WHEN g.release THEN NULL ELSE p.lease_until END
       FROM given g
       WHERE p.order_id = g.order_id AND p.fence = g.fence AND p.state = g.from_state
       RETURNING p.id, g.n, g.from_state, g.to_state, g.reason),
     audited AS (
       INSERT INTO audit (payout_id, at, from_state, to_state, reason)
       SELECT id, ${AT}, from_state, to_state, reason FROM moved WHERE reason IS NOT NULL
       ORDER BY n)
     SELECT n::integer - 1 AS at FROM moved`,
  ),
};

/** A move read and allowed, to be written while its row still has `from` and its fence. */
type PlannedWrite = Omit<Move, 'reason'> & {
  from: RowState;
  /** The audit entry's reason; none for a move that leaves the state as it was. */
  reason: Said | null;
};

type MovesParams = ReturnType<typeof movesParams>;

/** The columns of `moves`, one array a field. */
function movesParams(writes: readonly PlannedWrite[]) {
  const details = writes.map((write): AnswerDetails => write.details ?? {});
  return {
    orderIds: writes.map((write) => write.orderId),
    fences: writes.map((write) => write.fence),
    froms: writes.map((write) => write.from),
    tos: writes.map((write) => write.to),
    transactionIds: details.map((d) => d.transactionId ?? null),
    gatewayStatuses: details.map((d) => d.gatewayStatus ?? null),
    setMessages: details.map((d) => d.message !== undefined),
    messages: details.map((d) => d.message ?? null),
    fees: details.map((d) => d.fee ?? null),
    nets: details.map((d) => d.net ?? null),
    gatewayCreatedAts: details.map((d) => d.gatewayCreatedAt ?? null),
    endToEndIds: details.map((d) => d.endToEndId ?? null),
    processedAts: details.map((d) => d.processedAt ?? null),
    notFounds: details.map((d) => d.notFound ?? null),
    polls: details.map((d) => d.polls ?? null),
    nextPollAts: details.map((d) => d.nextPollAt ?? null),
    pollsFailed: details.map((d) => d.pollFailed ?? null),
    releases: writes.map((write) => write.release ?? true),
    reasons: writes.map((write) => (write.reason === null ? null : reasonColumn(write.reason))),
  };
}

/** Writes moves of distinct rows in one statement: which of them moved, by position. */
async function writeMoves(
  tx: Runner,
  writes: readonly PlannedWrite[],
  now: number | null,
): Promise<boolean[]> {
  const moved = await tx.rows<{ at: number }, Now & MovesParams>(statements.moves, {
    now,
    ...movesParams(writes),
  });
  const written = writes.map(() => false);
  for (const { at } of moved) written[at] = true;
  return written;
}

/**
 * Moves of claimed rows, each written only while its fence is still the row's, with the
 * outcomes of writing them one after another: rows read together (locked), each move
 * checked against the transition table, written together; a group ends before a row
 * seen in it already and after a move that ends a cover, whose uncovering comes next.
 */
async function applyMoves(
  tx: Runner,
  rows: Rows,
  moves: readonly Move[],
  now: number | null,
): Promise<boolean[]> {
  const written: boolean[] = [];
  while (written.length < moves.length) {
    const group: Move[] = [];
    const seen = new Set<string>();
    for (const move of moves.slice(written.length)) {
      if (seen.has(move.orderId)) break;
      seen.add(move.orderId);
      group.push(move);
    }
    const read = await tx.rows<
      { id: number; order_id: string; state: RowState; fence: number },
      { orderIds: string[] }
    >(statements.rowsForMoves, { orderIds: [...seen] });
    const found = new Map(read.map((row) => [row.order_id, row]));
    const writes: (PlannedWrite | null)[] = [];
    let ended: string | undefined;
    for (const move of group) {
      const row = found.get(move.orderId);
      if (!row || row.fence !== move.fence) {
        writes.push(null);
        continue;
      }
      const from = row.state;
      rows.allowMove(from, move.to, move.orderId);
      writes.push({ ...move, from, reason: from === move.to ? null : english(move.reason) });
      if (endsCover(from, move.to)) {
        ended = move.orderId;
        break;
      }
    }
    const planned = writes.filter((write) => write !== null);
    const moved = planned.length > 0 ? await writeMoves(tx, planned, now) : [];
    let next = 0;
    for (const write of writes) written.push(write !== null && moved[next++] === true);
    if (ended !== undefined && written[written.length - 1]) await rows.uncoverRowsOf(ended);
  }
  return written;
}

/**
 * The cover rule once more, inside a claim's transaction (the SQLite store's heldAtClaim):
 * a queued row another file's earlier payout now covers is held, not sent; a row a person
 * released is weighed only against what was journaled after it and the repeat they confirmed.
 */
export async function heldAtClaim(
  rows: Rows,
  row: QueuedRow,
  rules: AdmissionRules,
  when: 'claimed' | 'correctionAnswered' = 'claimed',
): Promise<boolean> {
  const facts = queuedFactsOf(row);
  const covering = await rows.coveringOf(facts.key, facts.batchId, rules, claimRange(facts));
  if (!covering) return false;
  await holdCovered(rows, row, covering, rules, when);
  return true;
}

/** Holds a queued row that `covering` now covers, saying why. */
async function holdCovered(
  rows: Rows,
  row: QueuedRow,
  covering: Covering,
  rules: AdmissionRules,
  when: 'claimed' | 'correctionAnswered',
): Promise<void> {
  const fileName = (await rows.batchRow(row.batch_id))?.file_name ?? '';
  const hold = holdAtClaim(queuedFactsOf(row), covering, fileName, rules, when);
  await rows.holdQueuedRow(row.order_id, 'duplicate', hold.said, hold);
}

/**
 * A claim's rows the cover rule lets go, weighed in file order as heldAtClaim weighs each:
 * every row's possible covers read by one statement; once a row is held, the rows after it
 * are weighed by heldAtClaim, against what that hold changed.
 */
async function sendableAtClaim<R extends QueuedRow>(
  tx: Runner,
  rows: Rows,
  queued: readonly R[],
  rules: AdmissionRules,
): Promise<R[]> {
  if (queued.length === 0) return [];
  const facts = queued.map(queuedFactsOf);
  const candidates = facts.map((): CoverCandidate[] => []);
  const read = await tx.rows<CandidateRow & { at: number }, ClaimCoversParams>(
    statements.claimCovers,
    {
      documents: facts.map((row) => row.key.document),
      values: facts.map((row) => row.key.valueCents),
      references: facts.map((row) => row.key.reference),
      batchIds: facts.map((row) => row.batchId),
    },
  );
  for (const row of read) candidates[row.at]?.push(toCandidate(row));
  const since = coverSince(await rows.at(), rules);
  const sendable: R[] = [];
  let held = false;
  for (const [at, row] of queued.entries()) {
    if (held) {
      if (!(await heldAtClaim(rows, row, rules))) sendable.push(row);
      continue;
    }
    const { key, batchId } = facts[at]!;
    const covering = coverOf(key, batchId, candidates[at]!, {
      since,
      range: claimRange(facts[at]!),
    });
    if (!covering) {
      sendable.push(row);
      continue;
    }
    await holdCovered(rows, row, covering, rules, 'claimed');
    held = true;
  }
  return sendable;
}

export function createPayouts(pool: pg.Pool, pooled: Runner, clock: () => number | null): Payouts {
  const transaction = <T>(work: (tx: Runner, rows: Rows, now: number | null) => Promise<T>) => {
    const now = clock();
    return inTransaction(pool, (tx) => work(tx, rowsOn(tx, now), now));
  };

  /** When a person chose recovery after a loss; null outside recovery. */
  const recoverySince = async (runner: Runner): Promise<number | null> =>
    (await runner.rows<{ recovery_since: number | null }, object>(statements.recoverySince, {}))[0]
      ?.recovery_since ?? null;

  /** The orderIds of this row as the batches of its name a restored journal may have forgotten. */
  async function forgottenOrderIds(orderId: string): Promise<string[]> {
    const rows = rowsOn(pooled, clock());
    const row = await rows.payoutRow(orderId);
    const batch = row && (await rows.batchRow(row.batch_id));
    if (!row || !batch?.name_key || batch.name_number === null) return [];
    const [highest] = await pooled.rows<{ n: number | null }, { nameKey: string }>(
      statements.highestOfName,
      { nameKey: batch.name_key },
    );
    return forgottenOrderIdsOf(
      requestOf(row),
      { nameKey: batch.name_key, nameNumber: batch.name_number, orderIdHome: batch.order_id_home },
      highest?.n ?? batch.name_number,
    );
  }

  async function admitOne(
    tx: Runner,
    rows: Rows,
    now: number | null,
    batch: { id: number; fileName: string; nameKey: string | null },
    payout: PayoutInput,
    rules: AdmissionRules,
  ) {
    const { line, request } = payout;
    const hash = payloadHash(request);
    const previous = await rows.knownOf(request.orderId, batch.nameKey);
    if (isResumed(previous, { batchId: batch.id, line, hash })) {
      return { orderId: request.orderId, line, admission: 'same' as const };
    }
    const covering = await rows.coveringOf(coverKeyOf(request, payout.reference), batch.id, rules);
    const plan = planAdmission(batch, payout, { previous, covering, hash });
    switch (plan.write) {
      case 'insert': {
        const [inserted] = await tx.rows<{ id: number }, ReturnType<typeof valuesFor>>(
          statements.insertPayout,
          valuesFor({ request, batchId: batch.id, line, hash, reference: payout.reference, now }),
        );
        if (!inserted) throw new JournalError('refused', `${request.orderId}: not journaled`);
        await rows.auditById(inserted.id, null, 'queued', journaledFrom(batch.id, line));
        break;
      }
      case 'replace':
        await takeOver(
          tx,
          rows,
          plan,
          valuesFor({ request, batchId: batch.id, line, hash, reference: payout.reference, now }),
        );
        break;
      case 'held-line':
        await rows.insertLines(batch.id, [
          {
            line,
            kind: 'held',
            orderId: request.orderId,
            column: null,
            message: keptMessage(plan.said),
            said: plan.said,
            name: request.person.name,
            valueCents: request.value,
          },
        ]);
        break;
    }
    if (plan.write !== 'held-line' && plan.hold) {
      const { reason, said, coveredBy } = plan.hold;
      await rows.holdQueuedRow(request.orderId, reason, said, coveredBy ? { coveredBy } : {});
    }
    return { orderId: request.orderId, line, admission: plan.admission.kind };
  }

  return {
    admitPayouts: (batchId, payouts, rules) => {
      failpoint('admitting-chunk');
      return transaction(async (tx, rows, now) => {
        await tx.rows(admissionLock, {});
        const row = await rows.batchRow(batchId);
        if (!row) throw new JournalError('refused', `batch ${batchId} is not in the journal`);
        const batch = { id: batchId, fileName: row.file_name, nameKey: row.name_key };
        // One after the other: a transaction is one connection, which runs one query at a time.
        const known = await tx.rows<{ order_id: string }, { orderIds: string[] }>(
          statements.knownAmong,
          { orderIds: payouts.map(({ request }) => request.orderId) },
        );
        const elsewhere = await tx.rows<
          { document: string },
          { documents: string[]; batchId: number }
        >(statements.documentsElsewhere, {
          documents: [...new Set(payouts.map(({ request }) => documentKey(request.cpfCnpj)))],
          batchId,
        });
        const journaled = new Set(known.map((r) => r.order_id));
        const covered = new Set(elsewhere.map((r) => r.document));
        const admitted: AdmittedPayout[] = [];
        // Rows weighed against nothing wait to be journaled together, in file order: any
        // other row is weighed alone after them, as it sees what they wrote.
        let waiting: PayoutInput[] = [];
        const journalWaiting = async () => {
          if (waiting.length > 0)
            await tx.count(statements.insertNew, newRows(batchId, waiting, now));
          waiting = [];
        };
        for (const payout of payouts) {
          const { orderId } = payout.request;
          const alone =
            !journaled.has(orderId) && !covered.has(documentKey(payout.request.cpfCnpj));
          journaled.add(orderId);
          const hash = payloadHash(payout.request);
          const plan = alone
            ? planAdmission(batch, payout, { previous: undefined, covering: undefined, hash })
            : undefined;
          if (plan?.write === 'insert' && plan.hold === null) {
            waiting.push(payout);
            admitted.push({ orderId, line: payout.line, admission: plan.admission.kind });
            continue;
          }
          await journalWaiting();
          admitted.push(await admitOne(tx, rows, now, batch, payout, rules));
        }
        await journalWaiting();
        return admitted;
      });
    },

    known: (orderId) => rowsOn(pooled, clock()).knownOf(orderId, null),

    weigh: async (request, nameKey, rules, reference) => {
      const rows = rowsOn(pooled, clock());
      return admit(
        await rows.knownOf(request.orderId, nameKey),
        await rows.coveringOf(coverKeyOf(request, reference), 0, rules),
        payloadHash(request),
      );
    },

    failedRepeatOf: async (request, rules) => {
      const rows = rowsOn(pooled, clock());
      const candidates = (
        await pooled.rows<CandidateRow & { pix_key: string }, CandidateParams>(
          statements.failedRepeated,
          { document: documentKey(request.cpfCnpj), value: request.value, batchId: 0 },
        )
      ).map((row) => ({ ...toCandidate(row), pixKey: row.pix_key }));
      const row = { valueCents: request.value, pixKey: request.pixKey };
      return failedRepeated(row, candidates, coverSince(await rows.at(), rules));
    },

    weighMany: async (payouts, nameKey, rules) => {
      const rows = rowsOn(pooled, clock());
      const since = coverSince(await rows.at(), rules);
      const known = new Map(
        (
          await pooled.rows<KnownRow & { order_id: string }, { orderIds: string[] }>(
            statements.knownMany,
            { orderIds: payouts.map(({ request }) => request.orderId) },
          )
        ).map((row) => [row.order_id, toKnown(row, nameKey)]),
      );
      const keys = payouts.map(({ request, reference }) => coverKeyOf(request, reference));
      const withReference = keys.filter((key) => key.reference !== null);
      const byDocument = new Map<string, ManyCandidate[]>();
      for (const row of await pooled.rows<
        CandidateRow & { document: string; pix_key: string },
        { documents: string[]; values: number[]; referenced: string[]; references: string[] }
      >(statements.candidatesMany, {
        documents: keys.map((key) => key.document),
        values: keys.map((key) => key.valueCents),
        referenced: withReference.map((key) => key.document),
        references: withReference.map((key) => key.reference ?? ''),
      })) {
        const candidate = {
          ...toCandidate(row),
          pixKey: row.pix_key,
          reference: row.reference ?? null,
        };
        byDocument.set(row.document, [...(byDocument.get(row.document) ?? []), candidate]);
      }
      return payouts.map(({ request }, at) => {
        const key = keys[at]!;
        const ofDocument = byDocument.get(key.document) ?? [];
        const sameAmount = (c: ManyCandidate) => c.covering.valueCents === key.valueCents;
        // As cover-by-amount reads them, or cover-by-reference given a reference.
        const covers = ofDocument.filter((c) =>
          key.reference === null
            ? sameAmount(c)
            : c.reference === key.reference || (sameAmount(c) && c.reference === null),
        );
        const admission = admit(
          known.get(request.orderId),
          coverOf(key, 0, covers, { since, range: WHOLE_JOURNAL }),
          payloadHash(request),
        );
        if (admission.kind !== 'new') return { admission };
        const row = { valueCents: request.value, pixKey: request.pixKey };
        const failed = failedRepeated(row, ofDocument.filter(sameAmount), since);
        return failed ? { admission, failed } : { admission };
      });
    },

    lookUpNeverSent: () =>
      transaction(async (tx, rows, now) => {
        const since = (await recoverySince(tx)) ?? null;
        if (since === null) return 0;
        const moved = await rows.movedTogether(
          'queued',
          'unknown',
          { code: 'auditLookedUpAfterLoss' },
          () =>
            tx.rows<{ id: number; order_id: string }, Now & { since: number }>(
              statements.neverSent,
              { now, since },
            ),
        );
        return moved.length;
      }),

    firstSendSamples: async () => {
      if ((await recoverySince(pooled)) !== null) return [];
      const batches = await pooled.rows<
        { batch_id: number; file_name: string; queued: number },
        object
      >(statements.queuedBatches, {});
      const samples: FirstSendSample[] = [];
      for (const batch of batches) {
        const payouts: FirstSendSample['payouts'] = [];
        for (const position of sampleLines(batch.queued)) {
          const [row] = await pooled.rows<
            { order_id: string; line: number },
            { batchId: number; position: number }
          >(statements.queuedAt, { batchId: batch.batch_id, position });
          if (!row) continue;
          const forgotten = await forgottenOrderIds(row.order_id);
          payouts.push({ orderId: row.order_id, line: row.line, forgotten });
        }
        samples.push({ batchId: batch.batch_id, fileName: batch.file_name, payouts });
      }
      return samples;
    },

    forgottenOrderIds: (orderId) => forgottenOrderIds(orderId),

    payout: async (orderId) => {
      const row = await rowsOn(pooled, clock()).payoutRow(orderId);
      return row && toPayout(row);
    },

    claimToSend: (owner, limit, leaseMs, rules, answers = []) =>
      transaction(async (tx, rows, now) => {
        // The cover rule reads what admissions and other claims write: one at a time. Taken
        // before the answers lock their rows, in the order a retry takes them.
        if (rules) await tx.rows(admissionLock, {});
        await applyMoves(tx, rows, answers, now);
        const queued = await tx.rows<QueuedRow & { attempts: number }, { limit: number }>(
          statements.queued,
          { limit },
        );
        const sendable = rules ? await sendableAtClaim(tx, rows, queued, rules) : queued;
        if (sendable.length === 0) return [];
        rows.allowMove('queued', 'sending', owner);
        // Locked as read, so each row's attempt is the one it was read with, plus this one.
        const reasons = sendable.map((row) =>
          reasonColumn({ code: 'auditClaimed', owner, attempt: row.attempts + 1 }),
        );
        const claimed = await tx.rows<
          ClaimRow,
          Now & { ids: number[]; reasons: string[]; owner: string; leaseMs: number }
        >(statements.claimQueued, {
          now,
          ids: sendable.map((row) => row.id),
          reasons,
          owner,
          leaseMs,
        });
        // Read queued and locked in this very transaction: none can have moved since.
        if (claimed.length !== sendable.length) {
          throw new JournalError('refused', `${owner}: rows claimed moved meanwhile`);
        }
        // In file order: RETURNING gives none.
        claimed.sort((a, b) => a.batch_id - b.batch_id || a.line - b.line);
        return claimed.map(toClaim);
      }),

    unclaim: (claims, reason) =>
      transaction(async (tx, rows, now) => {
        let given = 0;
        for (const { orderId, fence } of claims) {
          const moved = await rows.guardedMove(orderId, 'sending', 'queued', reason, () =>
            tx.rows(statements.unclaim, { now, orderId, fence }),
          );
          if (moved) given += 1;
        }
        return given;
      }),

    claimAbandoned: (owner, limit, leaseMs, after = { batchId: 0, line: 0 }) =>
      transaction(async (tx, rows, now) => {
        const leased = await tx.rows<ClaimRow, AbandonedParams>(statements.abandoned, {
          now,
          owner,
          leaseMs,
          limit,
          batchId: after.batchId,
          line: after.line,
        });
        leased.sort((a, b) => a.batch_id - b.batch_id || a.line - b.line);
        const claims = leased.map(toClaim);
        // Left sending past its lease: unknown, to be looked up before anyone sends it again.
        const sending = claims.filter((claim) => claim.state === 'sending');
        if (sending.length > 0) {
          rows.allowMove('sending', 'unknown', owner);
          const moved = await writeMoves(
            tx,
            sending.map((claim) => ({
              ...claim,
              from: 'sending' as const,
              to: 'unknown' as const,
              release: false,
              reason: { code: 'auditLeaseEnded', owner } as const,
            })),
            now,
          );
          const stale = sending.find((_, at) => !moved[at]);
          if (stale) throw new JournalError('refused', `${stale.orderId}: not sending any more`);
        }
        return claims.map((claim) =>
          claim.state === 'sending' ? { ...claim, state: 'unknown' as const } : claim,
        );
      }),

    claimDue: (owner, limit, leaseMs) =>
      transaction(async (tx, _rows, now) =>
        (
          await tx.rows<ClaimRow, Now & { owner: string; leaseMs: number; limit: number }>(
            statements.claimDue,
            { now, owner, leaseMs, limit },
          )
        ).map(toClaim),
      ),

    claimPaid: (owner, limit, leaseMs, since, after = '') =>
      transaction(async (tx, _rows, now) =>
        (
          await tx.rows<
            ClaimRow,
            Now & { owner: string; leaseMs: number; limit: number; since: number; after: string }
          >(statements.claimPaid, { now, owner, leaseMs, limit, since, after })
        ).map(toClaim),
      ),

    nextPollAt: async () =>
      (await pooled.rows<{ at: number | null }, object>(statements.nextPollAt, {}))[0]?.at ??
      undefined,

    pollNow: (hint) =>
      transaction(async (tx) => {
        const params = {
          transactionId: hint.transactionId ?? null,
          orderId: hint.orderId ?? null,
        };
        const named = [
          ...(await tx.rows<{ order_id: string }, PollHint>(statements.pollPendingNow, params)),
          ...(await tx.rows<{ order_id: string }, PollHint>(statements.pollSoon, params)),
        ];
        for (const { order_id: orderId } of named) {
          await tx.rows(statements.tellPollNow, { orderId });
        }
        return named.length > 0;
      }),

    pollBatchSooner: (batchId, afterSentMs) =>
      pooled.count(statements.pollBatchSooner, { now: clock(), batchId, afterSentMs }),

    markResending: (claim, reason, leaseMs) =>
      transaction((tx, rows, now) =>
        rows.guardedMove(claim.orderId, 'unknown', 'sending', reason, () =>
          tx.rows(statements.markResending, {
            now,
            orderId: claim.orderId,
            fence: claim.fence,
            leaseMs,
          }),
        ),
      ),

    move: (orderId, fence, to, reason, details = {}, options = {}) =>
      transaction(async (tx, rows, now) => {
        const move = { orderId, fence, to, reason, details, release: options.release ?? true };
        const [written] = await applyMoves(tx, rows, [move], now);
        return written === true;
      }),

    moveMany: (moves) => transaction((tx, rows, now) => applyMoves(tx, rows, moves, now)),
  };
}

/** A payout many rows are weighed against, with what the cover rules read of it. */
type ManyCandidate = CoverCandidate & { pixKey: string; reference: string | null };

/** Rows weighed against nothing, as insertNew journals them together. */
function newRows(batchId: number, payouts: readonly PayoutInput[], now: number | null) {
  const requests = payouts.map((payout) => payout.request);
  return {
    now,
    batchId,
    orderIds: requests.map((request) => request.orderId),
    lines: payouts.map((payout) => payout.line),
    values: requests.map((request) => request.value),
    pixKeyTypes: requests.map((request) => request.pixKeyType),
    pixKeys: requests.map((request) => request.pixKey),
    documents: requests.map((request) => documentKey(request.cpfCnpj)),
    cpfCnpjs: requests.map((request) => request.cpfCnpj),
    names: requests.map((request) => request.person.name),
    emails: requests.map((request) => request.person.email),
    phones: requests.map((request) => request.person.phone),
    hashes: requests.map((request) => payloadHash(request)),
    references: payouts.map((payout) => payout.reference ?? null),
    reasons: payouts.map((payout) => reasonColumn(journaledFrom(batchId, payout.line))),
  };
}

const journaledFrom = (batchId: number, line: number): Said => ({
  code: 'auditJournaled',
  batchId,
  line,
});

export function valuesFor(row: {
  request: CashOutRequest;
  batchId: number;
  line: number;
  hash: string;
  reference: string | undefined;
  now: number | null;
}) {
  const { request } = row;
  return {
    now: row.now,
    orderId: request.orderId,
    batchId: row.batchId,
    line: row.line,
    value: request.value,
    pixKeyType: request.pixKeyType,
    pixKey: request.pixKey,
    document: documentKey(request.cpfCnpj),
    cpfCnpj: request.cpfCnpj,
    name: request.person.name,
    email: request.person.email,
    phone: request.person.phone,
    hash: Buffer.from(row.hash, 'hex'),
    reference: row.reference ?? null,
  };
}
