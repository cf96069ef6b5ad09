/**
 * The payouts aggregate of the SQLite journal: admission (admitting.ts), claims under a
 * lease and a fence, the moves answers make, and retries (retries.ts).
 */
import { JournalError } from '../journal-error.js';
import type {
  JournalAdmission,
  JournalAnswers,
  JournalFollowing,
  JournalRecovery,
  JournalReports,
  JournalRetries,
  JournalSending,
} from '../journal.js';
import { forgottenOrderIdsOf, sampleLines } from '../first-send.js';
import type { CashOutRequest } from '../../gateway/contract.js';
import type { RowState } from '../states.js';
import { endsCover } from '../rules/uncover.js';
import type { AdmissionRules, AnswerDetails, Claim, Move } from '../types.js';
import type { Said } from '../../messages/said.js';
import { createAdmitting, heldAtClaim, QUEUED_COLUMNS, type QueuedRow } from './admitting.js';
import {
  english,
  toClaim,
  toPayout,
  type ClaimRow,
  type Context,
  type Synchronous,
} from './context.js';
import { createRetries } from './retries.js';
import type { Rows } from './rows.js';

/** What claims need of the journal's opening: recovery, and the marker (see sendable). */
export interface Sending {
  /** When a person chose recovery after a loss; null outside recovery. */
  recoverySince: () => number | null;
  /** Called after each commit before which requests leave (claims, re-sends). */
  committed: () => void;
}

export function createPayouts(
  context: Context,
  rows: Rows,
  sending: Sending,
): Synchronous<
  Omit<JournalSending, 'sendable'> &
    JournalAnswers &
    Omit<JournalRecovery, 'startRecovery'> &
    JournalFollowing &
    JournalAdmission &
    JournalRetries &
    Pick<JournalReports, 'payout'>
> {
  const { db, now, writing } = context;
  const statements = {
    // Only rows of open batches: a file still being read, or held, sends nothing.
    queued: db.prepare<[number], QueuedRow>(`
      SELECT ${QUEUED_COLUMNS} FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.state = 'queued' AND b.state = 'open'
      ORDER BY p.batch_id, p.line LIMIT ?`),
    // A recovering journal sends directly only rows it has sent before (a 429 put back).
    queuedSentBefore: db.prepare<[number], QueuedRow>(`
      SELECT ${QUEUED_COLUMNS} FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.state = 'queued' AND b.state = 'open' AND p.attempts > 0
      ORDER BY p.batch_id, p.line LIMIT ?`),
    neverSent: db.prepare<{ since: number; now: number }, { order_id: string }>(`
      UPDATE payouts SET state = 'unknown', not_found = 0, last_sent_at = @since, updated_at = @now
      WHERE state = 'queued' AND attempts = 0
        AND batch_id IN (SELECT id FROM batches WHERE state = 'open')
      RETURNING order_id`),
    // Counted per batch first: the batch's rows are then read once, not once per queued row.
    // Every open batch with rows to send, sent from before or not: a home restored from a
    // backup taken mid-batch has rows queued that the gateway has had since.
    queuedBatches: db.prepare<[], { batch_id: number; file_name: string; queued: number }>(`
      SELECT q.batch_id, b.file_name, q.queued FROM (
        SELECT batch_id, COUNT(*) AS queued FROM payouts WHERE state = 'queued' GROUP BY batch_id
      ) q JOIN batches b ON b.id = q.batch_id
      WHERE b.state = 'open'
      ORDER BY q.batch_id`),
    queuedAt: db.prepare<[number, number], { order_id: string; line: number }>(`
      SELECT order_id, line FROM payouts WHERE state = 'queued' AND batch_id = ?
      ORDER BY line LIMIT 1 OFFSET ?`),
    highestOfName: db.prepare<[string], { n: number | null }>(
      `SELECT MAX(name_number) AS n FROM batches WHERE name_key = ?`,
    ),
    abandoned: db.prepare<[number, number, number, number], { order_id: string }>(`
      SELECT order_id FROM payouts
      WHERE state IN ('sending', 'unknown') AND (lease_until IS NULL OR lease_until <= ?)
        AND (batch_id, line) > (?, ?)
      ORDER BY batch_id, line LIMIT ?`),
    takeLease: db.prepare<[string, number, number, string], ClaimRow>(`
      UPDATE payouts SET lease_owner = ?, lease_until = ?, fence = fence + 1, updated_at = ?
      WHERE order_id = ?
      RETURNING order_id, batch_id, line, fence, state, request, attempts, not_found, last_sent_at, transaction_id, polls`),
    // Pending payouts whose poll is due, soonest first, not leased by a live process: by
    // the index of poll times, which SQLite would pass over for the state's, reading every
    // pending payout of a large batch each poll.
    due: db.prepare<{ now: number; limit: number }, { order_id: string }>(`
      SELECT order_id FROM payouts INDEXED BY payouts_by_poll_due
      WHERE state = 'pending' AND transaction_id IS NOT NULL
        AND COALESCE(next_poll_at, 0) <= @now
        AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY COALESCE(next_poll_at, 0) LIMIT @limit`),
    paidSince: db.prepare<
      { now: number; since: number; after: string; limit: number },
      { order_id: string }
    >(`
      SELECT order_id FROM payouts
      WHERE state = 'paid' AND transaction_id IS NOT NULL AND last_sent_at >= @since
        AND (lease_until IS NULL OR lease_until <= @now) AND order_id > @after
      ORDER BY order_id LIMIT @limit`),
    nextPollAt: db.prepare<[], { at: number | null }>(`
      SELECT MIN(COALESCE(next_poll_at, 0)) AS at FROM payouts INDEXED BY payouts_by_poll_due
      WHERE state = 'pending' AND transaction_id IS NOT NULL`),
    // Due since ever (0), whatever the clock, as on a journal hosts share.
    pollPendingNow: db.prepare<PollHint, { order_id: string }>(`
      UPDATE payouts SET next_poll_at = 0, fence = fence + 1, lease_owner = NULL, lease_until = NULL
      WHERE state = 'pending'
        AND (transaction_id = @transactionId OR (@transactionId IS NULL AND order_id = @orderId))
      RETURNING order_id`),
    pollSoon: db.prepare<PollHint, { order_id: string }>(`
      UPDATE payouts SET next_poll_at = 0
      WHERE state IN ('sending', 'unknown')
        AND (transaction_id = @transactionId OR order_id = @orderId)
      RETURNING order_id`),
    // Only ever sooner: a poll a postback brought forward, or a row already due, stays.
    pollBatchSooner: db.prepare<{ now: number; batchId: number; afterSentMs: number }>(`
      UPDATE payouts SET next_poll_at = MAX(@now, last_sent_at + @afterSentMs)
      WHERE batch_id = @batchId AND state = 'pending' AND transaction_id IS NOT NULL
        AND last_sent_at IS NOT NULL
        AND next_poll_at > MAX(@now, last_sent_at + @afterSentMs)`),
    markResending: db.prepare<{ now: number; leaseUntil: number; orderId: string; fence: number }>(`
      UPDATE payouts SET state = 'sending', attempts = attempts + 1, not_found = 0,
        last_sent_at = @now, updated_at = @now, lease_until = @leaseUntil
      WHERE order_id = @orderId AND fence = @fence AND state = 'unknown' AND lease_until > @now`),
    // The rows a claim takes, all at once: leased with a fresh fence and marked `sending`.
    // Found by id; `+state` keeps SQLite from reading every queued row of payouts_by_state
    // instead (its plan on a journal without statistics).
    claimQueued: db.prepare<
      { ids: string; owner: string; leaseUntil: number; now: number },
      ClaimRow & { id: number }
    >(`
      UPDATE payouts SET state = 'sending', attempts = attempts + 1, not_found = 0,
        last_sent_at = @now, updated_at = @now, lease_owner = @owner, lease_until = @leaseUntil,
        fence = fence + 1
      WHERE id IN (SELECT value FROM json_each(@ids)) AND +state = 'queued'
      RETURNING id, order_id, batch_id, line, fence, state, request, attempts, not_found, last_sent_at, transaction_id, polls`),
    // A row sent before keeps this claim's time as its last send: read only while it is
    // `sending`, `unknown` or `pending`, and its next claim writes it again.
    unclaim: db.prepare<{ now: number; orderId: string; fence: number }>(`
      UPDATE payouts SET state = 'queued', attempts = attempts - 1,
        last_sent_at = CASE WHEN attempts = 1 THEN NULL ELSE last_sent_at END,
        lease_owner = NULL, lease_until = NULL, updated_at = @now
      WHERE order_id = @orderId AND fence = @fence AND state = 'sending'`),
    rowForMove: db.prepare<[string], { id: number; state: RowState; fence: number }>(
      `SELECT id, state, fence FROM payouts WHERE order_id = ?`,
    ),
    move: db.prepare<MoveParams>(`
      UPDATE payouts SET state = @to, updated_at = @now,
        transaction_id = COALESCE(@transactionId, transaction_id),
        gateway_status = COALESCE(@gatewayStatus, gateway_status),
        -- A poll that gets through clears what a failed one said.
        message = CASE WHEN @setMessage THEN @message
          WHEN @pollFailed = 0 AND poll_failed = 1 THEN NULL
          ELSE message END,
        -- What a rule said is no longer the row's message once an answer's replaces it.
        said = CASE WHEN @setMessage THEN NULL ELSE said END,
        poll_failed = COALESCE(@pollFailed, poll_failed),
        fee = COALESCE(@fee, fee),
        net = COALESCE(@net, net),
        gateway_created_at = COALESCE(@gatewayCreatedAt, gateway_created_at),
        end_to_end_id = COALESCE(@endToEndId, end_to_end_id),
        processed_at = COALESCE(@processedAt, processed_at),
        not_found = COALESCE(@notFound, not_found),
        polls = COALESCE(@polls, polls),
        -- A row that becomes pending keeps an earlier poll time a postback asked for.
        next_poll_at = CASE WHEN @from <> 'pending' AND next_poll_at IS NOT NULL
          THEN MIN(next_poll_at, COALESCE(@nextPollAt, next_poll_at))
          ELSE COALESCE(@nextPollAt, next_poll_at) END,
        lease_owner = CASE WHEN @release THEN NULL ELSE lease_owner END,
        lease_until = CASE WHEN @release THEN NULL ELSE lease_until END
      WHERE order_id = @orderId AND fence = @fence AND state = @from`),
  };

  /** A move of a claimed row, written only while its fence is still the row's. */
  function applyMove(move: Move): boolean {
    const row = statements.rowForMove.get(move.orderId);
    if (!row || row.fence !== move.fence) return false;
    const from = row.state;
    const params = moveParams(
      move.orderId,
      move.fence,
      from,
      move.to,
      move.details ?? {},
      move.release ?? true,
      now(),
    );
    const moved = rows.guardedMove(
      move.orderId,
      from,
      move.to,
      from === move.to ? null : english(move.reason),
      () => statements.move.run(params),
      row.id,
    );
    if (moved && endsCover(from, move.to)) rows.uncoverRowsOf(move.orderId);
    return moved;
  }

  const moveOne = writing((move: Move) => applyMove(move));
  const moveAll = writing((moves: readonly Move[]) => moves.map(applyMove));

  /** Takes leases on these rows (a fresh fence each), inside the caller's transaction. */
  function lease(orderIds: readonly string[], owner: string, leaseMs: number): Claim[] {
    const at = now();
    return orderIds.map((orderId) => {
      const row = statements.takeLease.get(owner, at + leaseMs, at, orderId);
      // Read in this very transaction: a row cannot have gone.
      if (!row) throw new JournalError('refused', `${orderId}: not in the journal any more`);
      return toClaim(row);
    });
  }

  /** The re-send mark itself, in one transaction; see markResending below. */
  const markResending = writing((claim: Claim, reason: Said, leaseMs: number): boolean => {
    const at = now();
    return rows.guardedMove(claim.orderId, 'unknown', 'sending', reason, () =>
      statements.markResending.run({
        now: at,
        leaseUntil: at + leaseMs,
        orderId: claim.orderId,
        fence: claim.fence,
      }),
    );
  });

  /** The orderIds of this row as the batches of its name a restored journal may have forgotten. */
  function forgottenOrderIds(orderId: string): string[] {
    const row = rows.payoutRow(orderId);
    const batch = row && rows.batchRow(row.batch_id);
    if (!row || !batch?.name_key || batch.name_number === null) return [];
    const highest = statements.highestOfName.get(batch.name_key)?.n ?? batch.name_number;
    return forgottenOrderIdsOf(
      JSON.parse(row.request) as CashOutRequest,
      { nameKey: batch.name_key, nameNumber: batch.name_number, orderIdHome: batch.order_id_home },
      highest,
    );
  }

  /** The orderIds of the rows a postback's hint brought forward. */
  const pollNow = writing((hint: { transactionId?: number; orderId?: string }): string[] => {
    const params = {
      transactionId: hint.transactionId ?? null,
      orderId: hint.orderId ?? null,
    };
    return [...statements.pollPendingNow.all(params), ...statements.pollSoon.all(params)].map(
      (row) => row.order_id,
    );
  });
  /** Who is told of a poll a postback brought forward. */
  const wakes = new Set<(orderId?: string) => void>();

  return {
    forgottenOrderIds: (orderId) => forgottenOrderIds(orderId),

    payout: (orderId) => {
      const row = rows.payoutRow(orderId);
      return row ? toPayout(row) : undefined;
    },

    lookUpNeverSent: writing((): number => {
      const since = sending.recoverySince();
      if (since === null) return 0;
      return rows.movedTogether('queued', 'unknown', { code: 'auditLookedUpAfterLoss' }, () =>
        statements.neverSent.all({ since, now: now() }),
      ).length;
    }),

    firstSendSamples: () => {
      if (sending.recoverySince() !== null) return [];
      return statements.queuedBatches.all().map((batch) => ({
        batchId: batch.batch_id,
        fileName: batch.file_name,
        payouts: sampleLines(batch.queued).flatMap((position) => {
          const row = statements.queuedAt.get(batch.batch_id, position);
          if (!row) return [];
          const forgotten = forgottenOrderIds(row.order_id);
          return [{ orderId: row.order_id, line: row.line, forgotten }];
        }),
      }));
    },

    claimToSend: (
      owner: string,
      limit: number,
      leaseMs: number,
      rules?: AdmissionRules,
      answers: readonly Move[] = [],
    ): Claim[] => {
      const claims = db
        .transaction(() => {
          answers.forEach(applyMove);
          const candidates =
            sending.recoverySince() === null ? statements.queued : statements.queuedSentBefore;
          const queued = candidates
            .all(limit)
            .filter((row) => !rules || !heldAtClaim(rows, row, rules));
          if (queued.length === 0) return [];
          const at = now();
          // One statement for the claim's rows, not three a row: then each row's audit entry.
          return rows
            .movedTogether(
              'queued',
              'sending',
              (row) => ({ code: 'auditClaimed', owner, attempt: row.attempts }),
              () => {
                const claimed = statements.claimQueued.all({
                  ids: JSON.stringify(queued.map((row) => row.id)),
                  owner,
                  leaseUntil: at + leaseMs,
                  now: at,
                });
                const byId = new Map(claimed.map((row) => [row.id, row]));
                // In the order they were read (file order): RETURNING gives none.
                return queued.map(({ id, order_id: orderId }) => {
                  const row = byId.get(id);
                  // Read queued in this very transaction: it cannot have moved since.
                  if (!row) throw new JournalError('refused', `${orderId}: not queued any more`);
                  return row;
                });
              },
            )
            .map(toClaim);
        })
        .immediate();
      if (claims.length > 0) sending.committed();
      return claims;
    },

    unclaim: writing(
      (claims: readonly Claim[], reason: Said): number =>
        claims.filter(({ orderId, fence }) =>
          rows.guardedMove(orderId, 'sending', 'queued', reason, () =>
            statements.unclaim.run({ now: now(), orderId, fence }),
          ),
        ).length,
    ),

    claimAbandoned: (owner, limit, leaseMs, after = { batchId: 0, line: 0 }) =>
      db
        .transaction(() => {
          const ids = statements.abandoned
            .all(now(), after.batchId, after.line, limit)
            .map((r) => r.order_id);
          return lease(ids, owner, leaseMs).map((claim) => {
            if (claim.state !== 'sending') return claim;
            rows.mustMove(
              claim.orderId,
              'sending',
              'unknown',
              { code: 'auditLeaseEnded', owner },
              () =>
                statements.move.run(
                  moveParams(claim.orderId, claim.fence, 'sending', 'unknown', {}, false, now()),
                ),
            );
            return { ...claim, state: 'unknown' as const };
          });
        })
        .immediate(),

    claimDue: (owner, limit, leaseMs) =>
      db
        .transaction(() => {
          const ids = statements.due.all({ now: now(), limit }).map((r) => r.order_id);
          return lease(ids, owner, leaseMs);
        })
        .immediate(),

    claimPaid: (owner, limit, leaseMs, since, after = '') =>
      db
        .transaction(() => {
          const ids = statements.paidSince
            .all({ now: now(), since, after, limit })
            .map((r) => r.order_id);
          return lease(ids, owner, leaseMs);
        })
        .immediate(),

    nextPollAt: () => statements.nextPollAt.get()?.at ?? undefined,

    pollNow: (hint) => {
      const named = pollNow(hint);
      // Told after the commit: one process on this journal, so told in process.
      for (const orderId of named) for (const woken of wakes) woken(orderId);
      return named.length > 0;
    },

    onPollNow: (woken) => {
      const wake = (orderId?: string) => woken(orderId);
      wakes.add(wake);
      return async () => {
        wakes.delete(wake);
      };
    },

    pollBatchSooner: (batchId, afterSentMs) =>
      statements.pollBatchSooner.run({ now: now(), batchId, afterSentMs }).changes,

    markResending: (claim, reason, leaseMs) => {
      const changed = markResending(claim, reason, leaseMs);
      if (changed) sending.committed();
      return changed;
    },

    move: (orderId, fence, to, reason, details = {}, options = {}) =>
      moveOne({ orderId, fence, to, reason, details, release: options.release ?? true }),

    moveMany: (moves) => moveAll(moves),

    ...createAdmitting(context, rows),
    ...createRetries(context, rows),
  };
}

interface PollHint {
  transactionId: number | null;
  orderId: string | null;
}

type MoveParams = ReturnType<typeof moveParams>;

function moveParams(
  orderId: string,
  fence: number,
  from: RowState,
  to: RowState,
  details: AnswerDetails,
  release: boolean,
  at: number,
) {
  return {
    orderId,
    fence,
    from,
    to,
    now: at,
    transactionId: details.transactionId ?? null,
    gatewayStatus: details.gatewayStatus ?? null,
    setMessage: details.message === undefined ? 0 : 1,
    message: details.message ?? null,
    fee: details.fee ?? null,
    net: details.net ?? null,
    gatewayCreatedAt: details.gatewayCreatedAt ?? null,
    endToEndId: details.endToEndId ?? null,
    processedAt: details.processedAt ?? null,
    notFound: details.notFound ?? null,
    polls: details.polls ?? null,
    nextPollAt: details.nextPollAt ?? null,
    pollFailed: details.pollFailed === undefined ? null : Number(details.pollFailed),
    release: release ? 1 : 0,
  };
}
