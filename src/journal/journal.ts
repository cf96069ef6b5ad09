/**
 * The journal: what records every batch, every payout (each orderId once) and every move
 * of a payout, declared by aggregate so that another store can stand in for SQLite (see
 * test/journal/conformance.ts, run against each). `openJournal` (open.ts) opens one by
 * its location.
 *
 * Every method answers with a promise: a network database (several hosts on one inbox)
 * answers later, and its callers must wait for it, so the engine does not change when one
 * stands in. SQLite answers at once: its journal is synchronous inside (a claim and its
 * audit are one synchronous better-sqlite3 transaction) and answers through one adapter
 * (sqlite/open.ts), but for the sending path's writes (claims, their answers, claims
 * given back), which its sending thread commits (sqlite/sending-thread.ts). `npm run lint` refuses a promise nobody waits for: a `sending` mark
 * not awaited would let its request leave before the mark is durable.
 * Lists (`admitPayouts`, `moveMany`) are written in one commit: a batch of rows admitted
 * or moved together is the unit a bulk store would write.
 *
 * Isolation: every call is serialisable. Several journals open on one store at once (the
 * processes of a home, the threads of one) each call as if alone: a member that reads
 * then writes (a claim, `batchForFile`, `admitPayouts`, `resultName`, `takeLock`, a retry,
 * a batch's corrections) sees no other call's write between its read and its write, and
 * a call that fails writes nothing. SQLite gives it by taking the write lock at the start
 * of every writing transaction (BEGIN IMMEDIATE); a store with weaker isolation must lock
 * what each such member reads. The conformance suite tests it with journals in threads of
 * their own.
 */
import type { CashOutRequest } from '../gateway/contract.js';
import type { Admission, Covering, Known } from './admission.js';
import type { BatchState } from './batch-states.js';
import type { Said } from '../messages/said.js';
import type { ClockReading } from './clock-skew.js';
import type { HoldReason, RowState } from './states.js';
import type {
  AdmissionRules,
  AdmittedPayout,
  AnswerDetails,
  ArrivingFile,
  AuditEntry,
  BatchEvent,
  BatchInput,
  BatchLine,
  BatchOfFile,
  BatchRecord,
  Claim,
  FirstSendSample,
  GatewayKind,
  GatewaySight,
  HeldRow,
  HoldSummary,
  JournalIdentity,
  LineKind,
  HostsSeen,
  LockHolder,
  Move,
  PayoutInput,
  PayeeEntry,
  PayoutRecord,
  ResultEntry,
  RetryResult,
  RowTotals,
  WorkClaim,
} from './types.js';

export type * from './types.js';
export type { BatchState } from './batch-states.js';
export { JournalError, type JournalErrorKind } from './journal-error.js';
export { JOURNAL_STORE } from './sqlite.js';
export { writeJournalView } from './sqlite/view.js';

/**
 * The journal as a whole, as a store implements it: every aggregate. A consumer takes the
 * aggregates it uses, not the whole (test/journal/aggregates.test.ts lists who takes which).
 */
export interface Journal
  extends
    JournalStore,
    JournalGateway,
    JournalIntake,
    JournalAdmission,
    JournalBatches,
    JournalApproval,
    JournalCorrections,
    JournalRetries,
    JournalSending,
    JournalAnswers,
    JournalRecovery,
    JournalFollowing,
    JournalLocks,
    JournalLimits,
    JournalReports {}

/** Where a journal is: the kind of store, and its address there. */
export type JournalLocation =
  | {
      kind: 'sqlite';
      /** The journal's file. */
      path: string;
    }
  | {
      kind: 'postgres';
      /** The database's URL, credentials included: never shown (see journalAddress). */
      url: string;
    };

/** What a journal says of itself, for people (`payouts doctor`) and its loss check. */
export interface JournalDescription {
  kind: JournalLocation['kind'];
  /** Where it is, as a person finds it: a file's path, or a database's URL without its password. */
  address: string;
  /** Which store, and through what: `SQLite through better-sqlite3 12.11.1`. */
  store: string;
  /** The schema version of the store itself (an older one is brought up to date by a run). */
  schema: number;
  /** The schema version this payouts writes. */
  latestSchema: number;
}

/** Which journal this is: its store, identity and loss facts, and its closing. */
export interface JournalStore {
  path: string;
  describe(): Promise<JournalDescription>;
  identity(): Promise<JournalIdentity | undefined>;
  /** The highest audit id: it only grows, so an older copy of this journal has a lower one. */
  highWater(): Promise<number>;
  /** When the newest audit entry was written; undefined for a journal with none. */
  latestAt(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** The kind of gateway the journal sends to, bound once. */
export interface JournalGateway {
  /** The kind of gateway this journal sends to: the first caller's, kept from then on. */
  bindGateway(kind: GatewayKind): Promise<GatewayKind>;
  /** The kind of gateway this journal has been bound to, if any yet. */
  gatewayKind(): Promise<GatewayKind | undefined>;
}

/** Intake: a file found or made as a batch, its other lines, what reading it found. */
export interface JournalIntake {
  /** Records a file as a batch, with the lines that are not payouts. */
  recordBatch(batch: BatchInput, lines: readonly BatchLine[]): Promise<number>;
  /**
   * The batch for a file's bytes, in one transaction so that two runs cannot both start
   * one: a new `admitting` batch, the `admitting` one a dead run left (to resume), or the
   * batch these bytes already made (`same-file`: nothing is admitted again).
   */
  batchForFile(file: ArrivingFile): Promise<BatchOfFile>;
  /** Adds lines of a batch that are not payouts (invalid rows, skipped lines). */
  recordLines(batchId: number, lines: readonly BatchLine[]): Promise<void>;
  /**
   * Records what reading the whole file found, in one commit with its consequence:
   * open, or every queued row held (`holdReason`) when it may not be sent.
   */
  finishBatch(
    batchId: number,
    figures: Omit<BatchInput, 'fileName' | 'sha256'>,
    holdReason?: string,
    rules?: AdmissionRules & { sameNameNewBatchAfterMs: number | null },
  ): Promise<void>;
  /**
   * Tells `woken` each time another process of this journal may have made rows sendable
   * (a file read whole, a batch approved), until the returned stop is called; also when
   * some may have gone untold (the store was away). A host that shares the journal sends
   * them then, not at its next rescan. One process at a time works on a SQLite journal:
   * never told there.
   */
  onRowsQueued(woken: () => void): Promise<() => Promise<void>>;
}

/** Admission: a file's payouts journaled, or weighed, by the rules on who is paid. */
export interface JournalAdmission {
  /**
   * Journals a batch's payouts in one transaction, each by the rules on who is paid
   * (see admission.ts): new (queued), a row of an earlier batch of its name taken over,
   * held as a possible duplicate, or (its orderId another file's) a held line.
   */
  admitPayouts(
    batchId: number,
    payouts: readonly PayoutInput[],
    rules: AdmissionRules,
  ): Promise<AdmittedPayout[]>;
  /** What admission would weigh a new row of this orderId against. */
  known(orderId: string): Promise<Known | undefined>;
  /**
   * What admitting this row in a new batch of this name would decide, writing nothing
   * (`run --dry-run`).
   */
  weigh(
    request: CashOutRequest,
    nameKey: string,
    rules: AdmissionRules,
    reference?: string,
  ): Promise<Admission>;
  /**
   * A payout of duplicateWindow that definitely failed and that this row repeats
   * unchanged, writing nothing (`run --dry-run`): a run would hold the row for
   * `payouts retry`.
   */
  failedRepeatOf(request: CashOutRequest, rules: AdmissionRules): Promise<Covering | undefined>;
  /**
   * `weigh` of each row and, of a row it finds new, `failedRepeatOf`, in their order
   * (`run --dry-run`, `validate`): a few reads for them all, never a round trip a row.
   */
  weighMany(
    rows: readonly { request: CashOutRequest; reference?: string }[],
    nameKey: string,
    rules: AdmissionRules,
  ): Promise<{ admission: Admission; failed?: Covering }[]>;
}

/** Batches: one per file that arrived, with its lines, state, funding, result name and events. */
export interface JournalBatches {
  batch(batchId: number): Promise<BatchRecord | undefined>;
  /** Every batch, oldest first; or those of one file name. */
  batches(fileName?: string): Promise<BatchRecord[]>;
  /** The batches these bytes made, oldest first. */
  batchesOf(sha256: string): Promise<BatchRecord[]>;
  batchesIn(state: BatchState): Promise<BatchRecord[]>;
  /** The newest batch of a name (copy marks dropped), if any: `run --dry-run` says so. */
  latestOfName(nameKey: string): Promise<BatchRecord | undefined>;
  /** Moves a batch to `state`, if the batch transition table allows it. */
  setBatchState(batchId: number, state: BatchState): Promise<void>;
  /**
   * A batch's result file name: the one it has, or the first of `candidates` no other
   * batch has, kept from then on.
   */
  resultName(batchId: number, candidates: readonly string[]): Promise<string>;
  /**
   * How many lines of these kinds a batch has, and the first `limit` of them in line order:
   * a file's lines may be a million, so no one reads them all at once.
   */
  linesOfBatch(
    batchId: number,
    kinds: readonly LineKind[],
    limit: number,
  ): Promise<{ count: number; first: BatchLine[] }>;
  /** An underfunded batch the balance now covers: its rows queued again, and it opens. */
  fundBatch(batchId: number): Promise<void>;
  /** A batch the balance does not cover: its queued rows held, checked again every run. */
  underfundBatch(batchId: number, why: Said): Promise<void>;
  /** What each open or underfunded batch still has to send, oldest batch first. */
  queuedByBatch(): Promise<{ batchId: number; cents: number; count: number }[]>;
  /** Records a person's decision about a batch, with who and when. */
  recordBatchEvent(
    batchId: number,
    event: BatchEvent['event'],
    by: string,
    detail: Said,
  ): Promise<void>;
  batchEvents(batchId: number): Promise<BatchEvent[]>;
  /** The approvals of every batch from `since` on, oldest first: a range of an index on their time. */
  approvalsSince(since: number): Promise<(BatchEvent & { batchId: number })[]>;
}

/** Approval: a batch waiting for a person, and the batches a corrected copy closes or freezes. */
export interface JournalApproval {
  setAwaitingName(batchId: number, name: string): Promise<void>;
  /** A person approved a waiting batch: it opens. False when it was not waiting (any more). */
  approveBatch(batchId: number): Promise<boolean>;
  /**
   * A person turned a waiting batch down: its rows held, never sent (a later file may
   * take them over). False when it was not waiting (any more): nothing changes then.
   */
  refuseBatch(batchId: number, why: Said): Promise<boolean>;
  /**
   * The corrected copies that closed rows of a batch (superseded), oldest first. One still
   * waiting for approval gives them back if it is turned down.
   */
  supersededBy(batchId: number): Promise<BatchRecord[]>;
  /**
   * Earlier batches of a file's name frozen while it waits for a person (held whole: see
   * the same-name rule), with what each holds back.
   */
  frozenFor(
    copy: number,
  ): Promise<{ batchId: number; fileName: string; rows: number; cents: number }[]>;
}

/** Corrections: a person's answers about a batch's held rows. */
export interface JournalCorrections {
  /**
   * A person's answer that a batch corrects `corrected` (another name, or later than a
   * day): the corrected-copy rules applied by hand, and its rows to send weighed by the
   * cover rule as a claim would (one another file has paid is held, naming that payout).
   * Returns how many of its rows will be sent.
   */
  correctBatch(copy: number, corrected: number, why: Said, rules: AdmissionRules): Promise<number>;
  /**
   * A person's release of a batch's rows held for `reason` (of those `only` names, when
   * given): queued, to be sent, each move audited with who released it and why.
   */
  releaseHolds(
    batchId: number,
    reason: HoldReason,
    why: Said,
    only?: readonly string[],
  ): Promise<{ rows: number; cents: number }>;
}

/** Retries: definitely failed payouts sent again at a person's request. */
export interface JournalRetries {
  /**
   * A person's request to send definitely failed payouts again (`payouts retry`), each
   * by its orderId (or a copy's row held because it repeats one), in one commit; one that
   * another file's payout has covered since is held as its possible duplicate, not sent.
   */
  retryPayouts(
    orderIds: readonly string[],
    by: string,
    rules: AdmissionRules,
  ): Promise<RetryResult[]>;
  /** A batch's payouts a retry of its file would send again, by orderId, in file order. */
  retryTargetsOf(batchId: number): Promise<string[]>;
  /** Whether some payout of a batch was sent again by `payouts retry`. */
  hasRetries(batchId: number): Promise<boolean>;
}

/** Sending: queued rows claimed and marked `sending` before their requests leave. */
export interface JournalSending {
  /** Resolves when requests of the rows claimed so far may leave (the marker is written). */
  sendable(): Promise<void>;
  /**
   * Claims up to `limit` queued rows and marks them `sending`, durably, in one commit:
   * a request may leave the process only after this returns. `answers` (of rows sent
   * before) are written first in the same commit, each as `moveMany` writes it: the
   * engine's answers ride on its next claim rather than costing a commit of their own.
   */
  claimToSend(
    owner: string,
    limit: number,
    leaseMs: number,
    rules?: AdmissionRules,
    answers?: readonly Move[],
  ): Promise<Claim[]>;
  /**
   * Gives back claims whose request never left (made ahead of a free place, then the run
   * stopped or paused): each row `queued` again, with the attempts it had, if its fence
   * still holds; in one commit. Returns how many were given back.
   */
  unclaim(claims: readonly Claim[], reason: Said): Promise<number>;
}

/** Answers: the moves a gateway's answer makes of a claimed row. */
export interface JournalAnswers {
  /**
   * Moves a claimed row to `to`, if this process still holds it (same fence) and the
   * move is allowed. False when the lease was taken over: write nothing more then.
   */
  move(
    orderId: string,
    fence: number,
    to: RowState,
    reason: string,
    details?: AnswerDetails,
    options?: { release?: boolean },
  ): Promise<boolean>;
  /**
   * Several moves in one commit (the group commit of answers): each is written only if
   * its row is still held with its fence, as `move` does; returns which were written.
   */
  moveMany(moves: readonly Move[]): Promise<boolean[]>;
}

/** Recovery: rows left with no clear answer, and a journal lost, restored or replaced. */
export interface JournalRecovery {
  /**
   * A person chose to go on after a lost, replaced or older journal: from now on every
   * payout not yet sent from this journal is looked up before its first send, and the
   * re-send grace counts from now (a request of the lost journal may still be landing).
   */
  startRecovery(reason: string): Promise<void>;
  /**
   * In a recovering journal, the queued rows never sent from it become `unknown`, as if
   * sent when recovery began: resolution looks each up (found: adopted; not found twice
   * after the grace period: sent). Returns how many; none outside recovery.
   */
  lookUpNeverSent(): Promise<number>;
  /**
   * For each open batch with rows queued, a few of its queued orderIds (its first, middle
   * and last: see sampleLines), to be looked up at the gateway before a pass sends them:
   * before the batch's first send, and again after a home restored from a backup taken
   * mid-batch. None in a recovering journal, which looks up every row before its first
   * send.
   */
  firstSendSamples(): Promise<FirstSendSample[]>;
  /**
   * A derived orderId as the next FORGOTTEN_BATCHES batches of its name would have made
   * it, past the highest this journal has: a home restored from a backup may have sent
   * the same row under one of them. None for an orderId a file gave.
   */
  forgottenOrderIds(orderId: string): Promise<string[]>;
  /**
   * Claims rows left `sending` or `unknown` by a process that is gone (its lease
   * expired), to be resolved by lookup; `sending` ones become `unknown` first.
   */
  claimAbandoned(
    owner: string,
    limit: number,
    leaseMs: number,
    after?: { batchId: number; line: number },
  ): Promise<Claim[]>;
  /**
   * Marks a claimed `unknown` row `sending` again, for a re-send with its own orderId,
   * and renews its lease; false when the row is no longer ours or its lease has ended.
   * The marker is told after the commit (see sendable).
   */
  markResending(claim: Claim, reason: Said, leaseMs: number): Promise<boolean>;
}

/** Following: pending payouts polled until they settle, and paid ones read again. */
export interface JournalFollowing {
  /** Claims pending payouts whose poll is due, to be followed by their transactionId. */
  claimDue(owner: string, limit: number, leaseMs: number): Promise<Claim[]>;
  /**
   * Claims `paid` payouts sent since `since`, after orderId `after` (paging), to be read
   * again: a Pix payment can come back (refunded) after it was paid.
   */
  claimPaid(
    owner: string,
    limit: number,
    leaseMs: number,
    since: number,
    after?: string,
  ): Promise<Claim[]>;
  /** When the next poll falls due (0: now), or undefined when nothing is pending. */
  nextPollAt(): Promise<number | undefined>;
  /**
   * A postback named this payout: its poll falls due now, on any host's clock (the host
   * that takes postbacks may not be the one following, nor on time). A poll in flight for
   * it loses its fence (its answer may be older than the news) and the row is polled
   * again; a row still `sending` or `unknown` is polled as soon as it is pending. False
   * when it names no payout we follow.
   */
  pollNow(hint: { transactionId?: number; orderId?: string }): Promise<boolean>;
  /**
   * Tells `woken` the orderId of each payout a postback brought forward (`pollNow`) from
   * now on, by this process or any other on the journal, until the returned stop is
   * called; with no orderId when some may have gone untold (the store was away): look
   * again. One untold costs its payout a wait for its next poll, nothing else.
   */
  onPollNow(woken: (orderId?: string) => void): Promise<() => Promise<void>>;
  /**
   * Brings forward the polls of a batch's pending payouts to `afterSentMs` after each
   * one's last send (now, for those already past it); a poll planned sooner stays.
   * Returns how many were brought forward.
   */
  pollBatchSooner(batchId: number, afterSentMs: number): Promise<number>;
}

/** Locks: which process holds the home folder, with a heartbeat. */
export interface JournalLocks {
  /**
   * Takes the lock `name` when it is free, or its holder is gone: its heartbeat older
   * than `staleMs`, or (on this host) its process no longer running. Otherwise says who
   * holds it.
   */
  takeLock(
    name: string,
    me: { holder: string; host: string; pid: number; command: string },
    staleMs: number,
    isRunning: (pid: number) => boolean,
  ): Promise<{ taken: true } | { taken: false; heldBy: LockHolder }>;
  /** Keeps the lock ours; false when another process has taken it over. */
  renewLock(name: string, holder: string): Promise<boolean>;
  releaseLock(name: string, holder: string): Promise<void>;
  /** The hosts seen at work in the last `withinMs`, the locks' holders and the live leases. */
  hostsSeen(withinMs: number): Promise<HostsSeen>;
  /**
   * Takes `claim` for the lock holder `me` when no other holder has it, or its holder's
   * lock is stale (its heartbeat older than `staleMs`, or gone): a claim lives as long as
   * its holder's lock. Otherwise says the host that has it. A journal one host works on
   * (SQLite: the home's one lock) gives every claim.
   */
  takeClaim(
    claim: WorkClaim,
    me: { holder: string; host: string },
    staleMs: number,
  ): Promise<{ taken: true } | { taken: false; host: string }>;
  /** Gives `claim` back, when `holder` has it. */
  releaseClaim(claim: WorkClaim, holder: string): Promise<void>;
  /**
   * How far the clock `now` of host `host` reads from the store's, in milliseconds (ahead
   * positive), measured by one round trip and kept as the host's sight when the round trip
   * tells which side of `boundMs` it is on; null on a store that is one host's own
   * (SQLite), whose clock is the host's.
   */
  clockOffset(host: string, now: () => number, boundMs: number): Promise<ClockReading | null>;
}

/**
 * The gateway's limits kept by the hosts together: a pause one host was asked for (a 429),
 * and who sends, so each takes its part of `maxRequestsPerSecond`. A journal one host
 * owns (SQLite) answers for that host alone.
 */
export interface JournalLimits {
  /**
   * Says `host` sends now, and what it must keep to: the pause still running and the other
   * hosts that said so within the last `withinMs`, by the journal's clock.
   */
  lookAtGateway(host: string, withinMs: number): Promise<GatewaySight>;
  /** No host starts a request for `ms` from now; a longer pause already set stands. */
  pauseGateway(ms: number): Promise<void>;
}

/** Reports: what became of a batch's lines, its result lines, a payout and its history. */
export interface JournalReports {
  payout(orderId: string): Promise<PayoutRecord | undefined>;
  /**
   * How many lines of a batch have each outcome, and their cents: payouts by state,
   * other lines by kind, replays by their payout's state.
   */
  rowTotalsOfBatch(batchId: number): Promise<RowTotals>;
  /**
   * Up to `limit` lines of a batch after line `after`, in file order: read a page at a
   * time (a file may be large), never holding a cursor open across the caller's awaits.
   */
  resultEntries(batchId: number, after: number, limit: number): Promise<ResultEntry[]>;
  /**
   * Up to `limit` payouts of a batch after line `after`, in file order, as a report lists
   * their payees: the few columns it shows, not each payout whole (a file may be large).
   */
  payeesOfBatch(batchId: number, after: number, limit: number): Promise<PayeeEntry[]>;
  /**
   * Batches whose results show a payout that became refunded since `since`: its own
   * batch, and every later one with a row it covered or a line naming its orderId.
   */
  batchesShowingRefundedSince(since: number): Promise<number[]>;
  history(orderId: string): Promise<AuditEntry[]>;
  /**
   * How many payouts are in each state, and their cents: of `states` only, when given (a
   * read of those rows alone, however many payouts are final), or of every state.
   */
  countsByState(
    states?: readonly RowState[],
  ): Promise<Partial<Record<RowState, { count: number; cents: number }>>>;
  /** How many of a batch's payouts are in each state: a read of its rows' index alone. */
  countsOfBatch(batchId: number): Promise<Partial<Record<RowState, { count: number }>>>;
  /**
   * A batch's payouts still pending that were sent at or before `before`: how many, and
   * the oldest (when it was sent, and its orderId); undefined when there are none.
   */
  pendingSentBefore(
    batchId: number,
    before: number,
  ): Promise<{ rows: number; oldestSentAt: number; oldestOrderId: string } | undefined>;
  /** Held rows of a batch by reason, with what one of them says. */
  holdsOfBatch(batchId: number): Promise<HoldSummary[]>;
  /** Every held row of a batch in file order, with the payout each repeats. */
  heldRowsOfBatch(batchId: number): Promise<HeldRow[]>;
  /**
   * The first `limit` rows of a batch held by themselves (OWN_HOLDS), in file order: what a
   * report lists of them, however many a file holds.
   */
  ownHeldRowsOfBatch(batchId: number, limit: number): Promise<HeldRow[]>;
}
