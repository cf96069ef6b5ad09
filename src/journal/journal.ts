/**
 * The journal: a SQLite file (WAL, synchronous=FULL) that holds every orderId once and
 * every move of every payout. Rows are claimed inside BEGIN IMMEDIATE with a lease and
 * a fencing token, so two processes on one home folder never send the same row, and a
 * process whose lease was taken over can write nothing more for that row.
 *
 * One prepared statement per query; every state change is guarded by the row's fence
 * and current state, checked against the transition table, and audited.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, openSync, closeSync, statfsSync, chmodSync } from 'node:fs';
import { dirname } from 'node:path';
import { PayoutsError } from '../errors.js';
import type { CashOutRequest } from '../gateway/contract.js';
import {
  admit,
  changesPaidMessage,
  coveredMessage,
  documentKey,
  duplicateMessage,
  failedBeforeMessage,
  journaledMessage,
  payloadHash,
  type Admission,
  type Covering,
  type Known,
} from './admission.js';
import { MIGRATIONS } from './migrations.js';
import { Database } from './sqlite.js';
import { canMoveBatch, type BatchState } from './batch-states.js';
import {
  canMove,
  MAY_MOVE_MONEY,
  RETRYABLE,
  SENT,
  type HoldReason,
  type RowState,
} from './states.js';
import type { Said } from '../messages/said.js';

export type { BatchState } from './batch-states.js';

/** The embedded sandbox (no baseUrl), or a gateway the config names. */
export type GatewayKind = 'sandbox' | 'configured';

export interface BatchInput {
  fileName: string;
  sha256: string;
  state: BatchState;
  rows: number;
  valid: number;
  invalid: number;
  totalCents: number;
  /** Why the file is held or cannot be used, as values: said in the reader's language. */
  problems: readonly Said[];
}

export interface BatchRecord extends BatchInput {
  id: number;
  receivedAt: number;
  /** The file's name in awaiting-approval/, while it waits there. */
  awaitingName: string | null;
  /** Why the balance check holds it, while it is `underfunded`. */
  heldBecause: string | null;
  /** Its name as it names a payroll (copy marks dropped); null for batches of old journals. */
  nameKey: string | null;
  /** Its number among the batches of that name (1 for the first). */
  nameNumber: number;
  /** Its result file's name in results/, once chosen (see resultName). */
  resultName: string | null;
}

/** A line of a file that is not a payout of its own. */
export interface BatchLine {
  line: number;
  /**
   * `superseded`: a row a later file took over (it was held or refused, never sent).
   * `held`: its orderId is journaled from another file: never sent under it again.
   * `covered`: the same, in a corrected copy, of a payout the file it corrects made.
   * `replay` and `conflict`: written by earlier versions, read as they were.
   */
  kind: 'invalid' | 'skipped' | 'held' | 'covered' | 'replay' | 'conflict' | 'superseded';
  orderId: string | null;
  column: string | null;
  message: string;
  /** The message as a value, for an invalid or skipped line: said in the reader's language. */
  said?: Said | null;
  /** The row's name and amount, for its result line (none for a total line). */
  name?: string | null;
  valueCents?: number | null;
  /** The amount as written, when it could not be read as one. */
  valueWritten?: string | null;
}

export interface PayoutInput {
  line: number;
  request: CashOutRequest;
  /** An earlier line of its file with the same content: held until a person confirms. */
  identicalTo?: number;
}

export interface AdmittedPayout {
  orderId: string;
  line: number;
  /** `same`: already journaled from this very line of this batch (a resumed admission). */
  admission: Admission['kind'] | 'same';
}

/** What the rules on who is paid weigh a file's rows against. */
export interface AdmissionRules {
  /** duplicateWindow: payouts journaled this long ago or less cover a row. */
  duplicateWindowMs: number;
  /** Global flags the commands in hints need (see hintFlagsOf), '' by default. */
  hintFlags?: string;
}

/** A person's decision about a batch. */
export interface BatchEvent {
  at: number;
  /** `approved`, `refused`, `released`, `corrects`, `retried`. */
  event: string;
  by: string;
  detail: string;
}

/** Held rows of a batch by reason: how many, and what one of them says. */
export interface HoldSummary {
  reason: HoldReason | null;
  rows: number;
  cents: number;
  message: string | null;
}

/** A row this process may act on until `leaseUntil`, and only with this `fence`. */
export interface Claim {
  orderId: string;
  /** Where the row sits, in file order: resolution pages through rows by it. */
  batchId: number;
  line: number;
  fence: number;
  state: RowState;
  request: CashOutRequest;
  attempts: number;
  notFound: number;
  lastSentAt: number | null;
  transactionId: number | null;
  /** Polls of its transaction so far (following). */
  polls: number;
}

/** What an answer from the gateway adds to a row. */
export interface AnswerDetails {
  transactionId?: number;
  gatewayStatus?: string;
  message?: string | null;
  fee?: string;
  net?: string;
  gatewayCreatedAt?: string;
  endToEndId?: string | null;
  processedAt?: string | null;
  /** Not-found answers seen since the last send (for the re-send rule). */
  notFound?: number;
  /** Polls of its transaction so far, and when the next one is due (following). */
  polls?: number;
  nextPollAt?: number;
  /**
   * A poll got no answer (its message says why), or got one: a message a failed poll
   * left is cleared by the next poll that gets through.
   */
  pollFailed?: boolean;
}

/** A move of a claimed row to `to`, written only while `fence` is still the row's. */
export interface Move {
  orderId: string;
  fence: number;
  to: RowState;
  reason: string;
  details?: AnswerDetails;
  /** Drops the lease with the move (the default). */
  release?: boolean;
}

export interface PayoutRecord {
  orderId: string;
  batchId: number;
  line: number;
  request: CashOutRequest;
  valueCents: number;
  state: RowState;
  attempts: number;
  notFound: number;
  lastSentAt: number | null;
  transactionId: number | null;
  gatewayStatus: string | null;
  message: string | null;
  fee: string | null;
  net: string | null;
  gatewayCreatedAt: string | null;
  endToEndId: string | null;
  processedAt: string | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
  fence: number;
}

/** Who holds the home folder's lock. */
export interface LockHolder {
  holder: string;
  host: string;
  pid: number;
  since: number;
  heartbeatAt: number;
}

/** Rows of a batch per state (other lines per kind), and their cents. */
export interface RowTotals {
  rows: Partial<Record<RowState | BatchLine['kind'], number>>;
  cents: Partial<Record<RowState | BatchLine['kind'], number>>;
}

/** One input line as the result file shows it: a payout, or a line that is not one. */
export interface ResultEntry {
  line: number;
  kind: 'payout' | BatchLine['kind'];
  orderId: string | null;
  /** The payout, or for a replay the payout it repeats; null for other lines. */
  payout: PayoutRecord | null;
  /** Why a line is not a payout of its own (invalid, skipped, replay, conflict). */
  note: string | null;
  column: string | null;
  /** A line's own name and amount (null for a payout, whose request has them). */
  name: string | null;
  valueCents: number | null;
  valueWritten: string | null;
  /** A line's message as a value, where the journal has it (see BatchLine). */
  said: Said | null;
  /**
   * For a covered row or line, the payout that covered it, as it is now: a row covered by
   * a payout that was returned (refunded) or failed was not paid after all.
   */
  cover: { orderId: string; state: RowState; fileName: string; line: number } | null;
}

export interface AuditEntry {
  at: number;
  from: RowState | null;
  to: RowState;
  reason: string;
}

/** The journal refused a change, or cannot be used as it is; the message names what. */
export class JournalError extends PayoutsError {
  override readonly name = 'JournalError';
  constructor(message: string) {
    super('journal', message);
  }
}

// statfs magic numbers of filesystems that share one file between hosts: SQLite's
// locks are not to be trusted there (NFS, SMB/CIFS, FUSE mounts such as sshfs, 9P).
const NETWORK_FILESYSTEMS = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997,
]);

export interface JournalOptions {
  /** Milliseconds since the epoch; injected by tests. */
  now?: () => number;
  /**
   * Told the highest audit id after each commit before which requests leave (claims,
   * re-sends); requests wait for what it returns (see `sendable`). The journal's marker.
   */
  onSending?: (highWater: number) => Promise<void>;
}

/** Which journal this is, and since when it is recovering from a lost one. */
export interface JournalIdentity {
  journalId: string;
  createdAt: number;
  /** When a person chose recovery after a loss: every first send is looked up first. */
  recoverySince: number | null;
  recoveryReason: string | null;
}

export function openJournal(path: string, options: JournalOptions = {}) {
  const now = options.now ?? Date.now;
  const folder = dirname(path);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const { type } = statfsSync(folder);
  if (NETWORK_FILESYSTEMS.has(type)) {
    throw new JournalError(
      `the journal folder ${folder} is on a network filesystem (type 0x${type.toString(16)}): SQLite locking is not safe there; put the home folder on a local disk`,
    );
  }
  // Created owner-only before SQLite opens it; its -wal and -shm files take the same mode.
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);

  // The busy time-out first: two processes opening at once must wait for each other,
  // even for switching to WAL.
  const db = new Database(path, { timeout: BUSY_WAIT_MS });
  // A damaged or unreadable file fails here: closed, so that a process that goes on (a
  // daemon, a test running commands in its own process) does not keep it open.
  try {
    switchToWal(db);
    // FULL: a commit is on disk before it returns, so a `sending` mark survives a power cut.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    // A random identity, made once: a journal from elsewhere (or a new one) has another.
    db.prepare(`INSERT OR IGNORE INTO identity (id, journal_id, created_at) VALUES (1, ?, ?)`).run(
      randomUUID(),
      now(),
    );
  } catch (error) {
    db.close();
    throw error;
  }

  const statements = {
    insertBatch: db.prepare(`
      INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid, total_cents, problems, name_key, name_number)
      VALUES (@fileName, @sha256, @receivedAt, @state, @rows, @valid, @invalid, @totalCents, @problems, @nameKey, @nameNumber)`),
    batchesOfName: db.prepare(
      `SELECT * FROM batches WHERE name_key = ? AND id <> ? AND state NOT IN ('unusable', 'refused') ORDER BY id DESC`,
    ),
    lastNameNumber: db.prepare(
      `SELECT COALESCE(MAX(name_number), 0) AS n FROM batches WHERE name_key = ?`,
    ),
    // Does a row of this batch repeat (same document and amount) a row of an earlier
    // batch of its name?
    repeatsEarlierOfName: db.prepare(`
      SELECT 1 FROM payouts p
      WHERE p.batch_id = @batchId AND EXISTS (
        SELECT 1 FROM payouts q JOIN batches qb ON qb.id = q.batch_id
        WHERE q.document = p.document AND q.value_cents = p.value_cents
          AND qb.name_key = @nameKey AND qb.id < @batchId
          AND qb.state NOT IN ('unusable', 'refused'))
      LIMIT 1`),
    batchesBySha256: db.prepare(`SELECT * FROM batches WHERE sha256 = ? ORDER BY id`),
    batchById: db.prepare(`SELECT * FROM batches WHERE id = ?`),
    batchesInState: db.prepare(`SELECT * FROM batches WHERE state = ? ORDER BY id`),
    resultNameTaken: db.prepare(`SELECT 1 FROM batches WHERE result_name = ?`),
    setResultName: db.prepare(`UPDATE batches SET result_name = ? WHERE id = ?`),
    setAwaitingName: db.prepare(`UPDATE batches SET awaiting_name = ? WHERE id = ?`),
    batchesNamed: db.prepare(`SELECT * FROM batches WHERE file_name = ? ORDER BY id`),
    allBatches: db.prepare(`SELECT * FROM batches ORDER BY id`),
    moveBatch: db.prepare(`UPDATE batches SET state = @to WHERE id = @batchId AND state = @from`),
    setHeldBecause: db.prepare(`UPDATE batches SET held_because = ? WHERE id = ?`),
    bindGateway: db.prepare(`INSERT OR IGNORE INTO gateway (id, kind) VALUES (1, ?)`),
    boundGateway: db.prepare(`SELECT kind FROM gateway WHERE id = 1`),
    finishBatch: db.prepare(`
      UPDATE batches SET rows = @rows, valid = @valid, invalid = @invalid,
        total_cents = @totalCents, problems = @problems
      WHERE id = @id`),
    queuedCentsByBatch: db.prepare(`
      SELECT p.batch_id AS batch_id, SUM(p.value_cents) AS cents, COUNT(*) AS count
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE (p.state = 'queued' AND b.state = 'open')
        OR (p.state = 'held' AND b.state = 'underfunded'
          AND (p.hold_reason = 'balance' OR p.hold_reason IS NULL))
      GROUP BY p.batch_id ORDER BY p.batch_id`),
    // Only what the balance check held (rows held before reasons were kept have none).
    releaseHeld: db.prepare(`
      UPDATE payouts SET state = 'queued', hold_reason = NULL, updated_at = ?
      WHERE batch_id = ? AND state = 'held' AND (hold_reason = 'balance' OR hold_reason IS NULL)
      RETURNING order_id`),
    holdQueued: db.prepare(`
      UPDATE payouts SET state = 'held', hold_reason = @reason,
        message = COALESCE(@message, message), updated_at = @now
      WHERE batch_id = @batchId AND state = 'queued'
      RETURNING order_id`),
    holdsOfBatch: db.prepare(`
      SELECT hold_reason, COUNT(*) AS n, SUM(value_cents) AS cents, MIN(message) AS message
      FROM payouts WHERE batch_id = ? AND state = 'held' GROUP BY hold_reason ORDER BY hold_reason`),
    releaseHolds: db.prepare(`
      UPDATE payouts SET state = 'queued', hold_reason = NULL, covered_by = NULL, message = NULL,
        released_at = @now, updated_at = @now
      WHERE batch_id = @batchId AND state = 'held' AND hold_reason = @reason
      RETURNING order_id, value_cents`),
    insertLine: db.prepare(`
      INSERT OR REPLACE INTO batch_lines (batch_id, line, kind, order_id, column_heading, message,
        name, value_cents, value_written, said)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    requestOf: db.prepare(`SELECT request FROM payouts WHERE order_id = ?`),
    linesOfBatch: db.prepare(`SELECT * FROM batch_lines WHERE batch_id = ? ORDER BY line`),
    known: db.prepare(`
      SELECT p.payload_hash, p.state, p.batch_id, p.line, p.admitted_at, b.file_name, b.name_key
      FROM payouts p JOIN batches b ON b.id = p.batch_id WHERE p.order_id = ?`),
    insertPayout: db.prepare(`
      INSERT INTO payouts (order_id, batch_id, line, request, payload_hash, value_cents, document, admitted_at, state, updated_at)
      VALUES (@orderId, @batchId, @line, @request, @hash, @value, @document, @now, 'queued', @now)`),
    replacePayout: db.prepare(`
      UPDATE payouts SET batch_id = @batchId, line = @line, request = @request, payload_hash = @hash,
        value_cents = @value, document = @document, admitted_at = @now,
        state = 'queued', attempts = 0, not_found = 0, last_sent_at = NULL, transaction_id = NULL,
        gateway_status = NULL, message = NULL, fee = NULL, net = NULL, gateway_created_at = NULL,
        end_to_end_id = NULL, processed_at = NULL, lease_owner = NULL, lease_until = NULL,
        hold_reason = NULL, covered_by = NULL, updated_at = @now
      WHERE order_id = @orderId AND state = @from`),
    // The oldest payout of another file with this document and amount that may have
    // moved money within the window, and covers no other row yet.
    covering: db.prepare(`
      SELECT p.order_id, p.batch_id, p.line, p.state, p.admitted_at, p.transaction_id,
        p.value_cents, b.file_name
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.document = @document AND p.value_cents = @value AND p.admitted_at >= @since
        AND p.batch_id <> @batchId AND p.order_id <> @orderId
        -- Only what came first covers: a claim's check never holds the older of two rows.
        AND (p.admitted_at < @admittedAt OR (p.admitted_at = @admittedAt AND p.batch_id < @batchId))
        AND p.state IN (${inList(MAY_MOVE_MONEY)})
        AND b.state NOT IN ('refused', 'unusable')
        AND NOT EXISTS (
          SELECT 1 FROM payouts c WHERE c.covered_by = p.order_id AND c.state IN ('held', 'covered'))
      ORDER BY p.admitted_at, p.batch_id, p.line LIMIT 1`),
    // Corrected copies (see correctBatch).
    copyRepeats: db.prepare(`
      SELECT r.order_id AS row_id, p.order_id, p.batch_id, p.line, p.state, p.admitted_at,
        p.transaction_id, p.value_cents, b.file_name
      FROM payouts r JOIN payouts p ON p.order_id = r.covered_by JOIN batches b ON b.id = p.batch_id
      WHERE r.batch_id = @copy AND r.state = 'held' AND r.hold_reason = 'duplicate'
        AND p.batch_id = @corrected
      ORDER BY r.line`),
    copyMaySend: db.prepare(`
      SELECT order_id, document, value_cents, state FROM payouts
      WHERE batch_id = ? AND (state = 'queued' OR (state = 'held' AND hold_reason = 'same-name'))
      ORDER BY line`),
    sentOfDocument: db.prepare(`
      SELECT p.order_id, p.batch_id, p.line, p.state, p.admitted_at, p.transaction_id,
        p.value_cents, b.file_name
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.batch_id = ? AND p.document = ? AND p.state IN (${inList(SENT)})
      ORDER BY p.line LIMIT 1`),
    // Rows of a batch a correction may replace: invalid lines and payouts that need a
    // person or were never sent.
    replaceableIn: db.prepare(`
      SELECT (SELECT COUNT(*) FROM batch_lines WHERE batch_id = @batchId AND kind = 'invalid')
        + (SELECT COUNT(*) FROM payouts WHERE batch_id = @batchId
           AND state IN ('failed', 'rejected', 'canceled', 'conflict', 'refunded', 'queued', 'held'))
        AS n`),
    // Rows of `corrected` a copy took over by their orderId, or repeats by orderId.
    takenOverBy: db.prepare(`
      SELECT (SELECT COUNT(*) FROM batch_lines l JOIN payouts p ON p.order_id = l.order_id
              WHERE l.batch_id = @corrected AND l.kind = 'superseded' AND p.batch_id = @copy)
        + (SELECT COUNT(*) FROM batch_lines l JOIN payouts p ON p.order_id = l.order_id
           WHERE l.batch_id = @copy AND l.kind = 'held' AND p.batch_id = @corrected) AS n`),
    heldLinesOf: db.prepare(`
      SELECT l.line, p.order_id, p.batch_id, p.line AS p_line, p.state, p.admitted_at,
        p.transaction_id, p.value_cents, b.file_name
      FROM batch_lines l JOIN payouts p ON p.order_id = l.order_id JOIN batches b ON b.id = p.batch_id
      WHERE l.batch_id = @copy AND l.kind = 'held' AND p.batch_id = @corrected
        AND p.state IN (${inList(SENT)})`),
    setLine: db.prepare(
      `UPDATE batch_lines SET kind = ?, message = ?, said = NULL WHERE batch_id = ? AND line = ?`,
    ),
    unsentOf: db.prepare(
      `SELECT order_id, state FROM payouts WHERE batch_id = ? AND state IN ('queued', 'held') ORDER BY line`,
    ),
    supersededBy: db.prepare(
      `SELECT order_id, hold_reason FROM payouts WHERE superseded_by = ? AND state = 'superseded'`,
    ),
    setCorrects: db.prepare(`UPDATE batches SET corrects = ? WHERE id = ?`),
    addBatchEvent: db.prepare(
      `INSERT INTO batch_events (batch_id, at, event, by, detail) VALUES (?, ?, ?, ?, ?)`,
    ),
    batchEvents: db.prepare(
      `SELECT at, event, by, detail FROM batch_events WHERE batch_id = ? ORDER BY id`,
    ),
    supersedeInvalid: db.prepare(`
      UPDATE batch_lines SET kind = 'superseded', message = message || ?, said = NULL
      WHERE batch_id = ? AND kind = 'invalid'`),
    supersededByWaiting: db.prepare(`
      SELECT COUNT(*) AS n FROM payouts p JOIN batches c ON c.id = p.superseded_by
      WHERE p.batch_id = ? AND p.state = 'superseded' AND c.state = 'awaiting-approval'`),
    // A row moved by the rules on who is paid (never by an answer of the gateway).
    setRow: db.prepare(`
      UPDATE payouts SET state = @to, hold_reason = @holdReason, covered_by = @coveredBy,
        message = @message, superseded_by = @supersededBy, updated_at = @now
      WHERE order_id = @orderId AND state = @from`),
    holdIdentical: db.prepare(`
      UPDATE payouts SET state = 'held', hold_reason = 'identical', message = @message,
        updated_at = @now
      WHERE order_id = @orderId AND state = 'queued'`),
    holdAsDuplicate: db.prepare(`
      UPDATE payouts SET state = 'held', hold_reason = 'duplicate', covered_by = @coveredBy,
        message = @message, updated_at = @now
      WHERE order_id = @orderId AND state = 'queued'`),
    // Only rows of open batches: a file still being read, or held, sends nothing.
    queued: db.prepare(`
      SELECT p.order_id FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.state = 'queued' AND b.state = 'open'
      ORDER BY p.batch_id, p.line LIMIT ?`),
    // A recovering journal sends directly only rows it has sent before (a 429 put back).
    queuedSentBefore: db.prepare(`
      SELECT p.order_id FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.state = 'queued' AND b.state = 'open' AND p.attempts > 0
      ORDER BY p.batch_id, p.line LIMIT ?`),
    neverSent: db.prepare(`
      UPDATE payouts SET state = 'unknown', not_found = 0, last_sent_at = @since, updated_at = @now
      WHERE state = 'queued' AND attempts = 0
        AND batch_id IN (SELECT id FROM batches WHERE state = 'open')
      RETURNING order_id`),
    identity: db.prepare(`SELECT * FROM identity WHERE id = 1`),
    startRecovery: db.prepare(
      `UPDATE identity SET recovery_since = @now, recovery_reason = @reason WHERE id = 1`,
    ),
    highWater: db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM audit`),
    abandoned: db.prepare(`
      SELECT order_id FROM payouts
      WHERE state IN ('sending', 'unknown') AND (lease_until IS NULL OR lease_until <= ?)
        AND (batch_id, line) > (?, ?)
      ORDER BY batch_id, line LIMIT ?`),
    takeLease: db.prepare(`
      UPDATE payouts SET lease_owner = ?, lease_until = ?, fence = fence + 1, updated_at = ?
      WHERE order_id = ?
      RETURNING order_id, batch_id, line, fence, state, request, attempts, not_found, last_sent_at, transaction_id, polls`),
    // Pending payouts whose poll is due, soonest first, not leased by a live process.
    due: db.prepare(`
      SELECT order_id FROM payouts
      WHERE state = 'pending' AND transaction_id IS NOT NULL
        AND (next_poll_at IS NULL OR next_poll_at <= @now)
        AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_poll_at LIMIT @limit`),
    paidSince: db.prepare(`
      SELECT order_id FROM payouts
      WHERE state = 'paid' AND transaction_id IS NOT NULL AND last_sent_at >= @since
        AND (lease_until IS NULL OR lease_until <= @now) AND order_id > @after
      ORDER BY order_id LIMIT @limit`),
    nextPollAt: db.prepare(`
      SELECT MIN(COALESCE(next_poll_at, 0)) AS at FROM payouts
      WHERE state = 'pending' AND transaction_id IS NOT NULL`),
    pollPendingNow: db.prepare(`
      UPDATE payouts SET next_poll_at = @now, fence = fence + 1, lease_owner = NULL, lease_until = NULL
      WHERE state = 'pending'
        AND (transaction_id = @transactionId OR (@transactionId IS NULL AND order_id = @orderId))`),
    pollSoon: db.prepare(`
      UPDATE payouts SET next_poll_at = @now
      WHERE state IN ('sending', 'unknown')
        AND (transaction_id = @transactionId OR order_id = @orderId)`),
    markResending: db.prepare(`
      UPDATE payouts SET state = 'sending', attempts = attempts + 1, not_found = 0,
        last_sent_at = @now, updated_at = @now, lease_until = @leaseUntil
      WHERE order_id = @orderId AND fence = @fence AND state = 'unknown' AND lease_until > @now`),
    markSending: db.prepare(`
      UPDATE payouts SET state = 'sending', attempts = attempts + 1, not_found = 0,
        last_sent_at = @now, updated_at = @now
      WHERE order_id = @orderId AND fence = @fence AND state = @from`),
    rowForMove: db.prepare(`SELECT state, fence FROM payouts WHERE order_id = ?`),
    move: db.prepare(`
      UPDATE payouts SET state = @to, updated_at = @now,
        transaction_id = COALESCE(@transactionId, transaction_id),
        gateway_status = COALESCE(@gatewayStatus, gateway_status),
        -- A poll that gets through clears what a failed one said.
        message = CASE WHEN @setMessage THEN @message
          WHEN @pollFailed = 0 AND poll_failed = 1 THEN NULL
          ELSE message END,
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
    audit: db.prepare(
      `INSERT INTO audit (order_id, at, from_state, to_state, reason) VALUES (?, ?, ?, ?, ?)`,
    ),
    payout: db.prepare(`SELECT * FROM payouts WHERE order_id = ?`),
    // A line that is not a payout counts as its kind: a replay or a held orderId of another
    // file never counts as what became of that file's payout (it was not paid by this one).
    rowTotalsOfBatch: db.prepare(`
      SELECT state AS key, COUNT(*) AS n, SUM(value_cents) AS cents
      FROM payouts WHERE batch_id = @batchId GROUP BY state
      UNION ALL
      SELECT kind AS key, COUNT(*) AS n, 0 AS cents
      FROM batch_lines WHERE batch_id = @batchId GROUP BY kind`),
    // Every line of a batch in file order, a replay joined to the payout it repeats, a
    // covered row or line to the payout that covers it (its state now).
    resultEntries: db.prepare(`
      SELECT p.line AS entry_line, 'payout' AS entry_kind, p.order_id AS entry_order_id,
        NULL AS note, NULL AS column_heading, NULL AS line_name, NULL AS line_value_cents,
        NULL AS line_value_written, NULL AS line_said, c.order_id AS cover_order_id,
        c.state AS cover_state, cb.file_name AS cover_file_name, c.line AS cover_line, p.*
      FROM payouts p
        LEFT JOIN payouts c ON p.state = 'covered' AND c.order_id = p.covered_by
        LEFT JOIN batches cb ON cb.id = c.batch_id
      WHERE p.batch_id = @batchId AND p.line > @after
      UNION ALL
      SELECT l.line, l.kind, l.order_id, l.message, l.column_heading, l.name, l.value_cents,
        l.value_written, l.said, c.order_id, c.state,
        cb.file_name, c.line, p.*
      FROM batch_lines l LEFT JOIN payouts p ON l.kind = 'replay' AND p.order_id = l.order_id
        LEFT JOIN payouts c ON l.kind = 'covered' AND c.order_id = l.order_id
        LEFT JOIN batches cb ON cb.id = c.batch_id
      WHERE l.batch_id = @batchId AND l.line > @after
      ORDER BY entry_line LIMIT @limit`),
    // Batches whose results show a payout returned since then: its own, those with a row
    // it covers, those with a line naming it (a covered, held or replayed orderId).
    batchesShowingRefundedSince: db.prepare(`
      WITH r AS (SELECT order_id, batch_id FROM payouts WHERE state = 'refunded' AND updated_at >= ?)
      SELECT batch_id FROM r
      UNION SELECT p.batch_id FROM payouts p JOIN r ON p.covered_by = r.order_id
      UNION SELECT l.batch_id FROM batch_lines l JOIN r ON l.order_id = r.order_id
      ORDER BY batch_id`),
    lock: db.prepare(`SELECT * FROM locks WHERE name = ?`),
    setLock: db.prepare(`
      INSERT OR REPLACE INTO locks (name, holder, host, pid, since, heartbeat_at)
      VALUES (@name, @holder, @host, @pid, @now, @now)`),
    renewLock: db.prepare(`UPDATE locks SET heartbeat_at = ? WHERE name = ? AND holder = ?`),
    releaseLock: db.prepare(`DELETE FROM locks WHERE name = ? AND holder = ?`),
    history: db.prepare(
      `SELECT at, from_state, to_state, reason FROM audit WHERE order_id = ? ORDER BY id`,
    ),
    countsByState: db.prepare(
      `SELECT state, COUNT(*) AS count, SUM(value_cents) AS cents FROM payouts GROUP BY state`,
    ),
    // Pending payouts of a batch sent at or before @before, and the oldest of them (SQLite
    // gives a bare column the row MIN chose).
    pendingSentBefore: db.prepare(`
      SELECT COUNT(*) AS n, MIN(sent_at) AS oldest, order_id FROM (
        SELECT order_id, COALESCE(last_sent_at, admitted_at, updated_at) AS sent_at
        FROM payouts WHERE batch_id = @batchId AND state = 'pending')
      WHERE sent_at <= @before`),
    // Retry on purpose. Rows of a copy that repeat unchanged (document, amount, Pix key)
    // a payout of the batch it corrects that definitely failed.
    repeatsOfFailed: db.prepare(repeatsOfFailedIn('p.batch_id = @corrected')),
    failedRepeated: db.prepare(`
      SELECT p.order_id, p.batch_id, p.line, p.state, p.admitted_at, p.transaction_id,
        p.value_cents, b.file_name
      FROM payouts p JOIN batches b ON b.id = p.batch_id
      WHERE p.document = @document AND p.value_cents = @value AND p.admitted_at >= @since
        AND json_extract(p.request, '$.pixKey') = @pixKey AND p.state IN (${inList(RETRYABLE)})
      ORDER BY p.admitted_at, p.line LIMIT 1`),
    repeatsOfFailedSince: db.prepare(
      repeatsOfFailedIn('p.admitted_at >= @since AND p.batch_id <> @copy'),
    ),
    holdFailedBefore: db.prepare(`
      UPDATE payouts SET state = 'held', hold_reason = 'failed-before', covered_by = @coveredBy,
        message = @message, updated_at = @now
      WHERE order_id = @orderId AND state = 'queued'`),
    retryOf: db.prepare(`
      SELECT order_id, batch_id, line, request, value_cents, document, state, message,
        covered_by, hold_reason, retry_of, attempt_number
      FROM payouts WHERE order_id = ?`),
    retriesOf: db.prepare(`SELECT order_id FROM payouts WHERE retry_of = ? ORDER BY order_id`),
    // Released as it is made: a person asked for it, so the cover rule checked at claim
    // time leaves it be (a held copy of the row it sends again must not hold it back).
    insertRetry: db.prepare(`
      INSERT INTO payouts (order_id, batch_id, line, request, payload_hash, value_cents, document,
        admitted_at, state, updated_at, retry_of, attempt_number, released_at)
      VALUES (@orderId, @batchId, @line, @request, @hash, @value, @document, @now, 'queued', @now,
        @retryOf, @attempt, @now)`),
    heldAsFailedBefore: db.prepare(`
      SELECT order_id FROM payouts
      WHERE covered_by = ? AND state = 'held' AND hold_reason = 'failed-before'`),
    retryTargetsOf: db.prepare(`
      SELECT order_id FROM payouts
      WHERE batch_id = ? AND (state IN (${inList(RETRYABLE)})
        OR (state = 'held' AND hold_reason = 'failed-before'))
      ORDER BY line, order_id`),
    batchHasRetries: db.prepare(
      `SELECT 1 FROM payouts WHERE batch_id = ? AND retry_of IS NOT NULL LIMIT 1`,
    ),
  };

  /**
   * A write transaction that takes the write lock at BEGIN: a deferred one that reads
   * first would fail at once, not wait, when another process writes meanwhile.
   */
  const writing = <A extends unknown[], R>(fn: (...args: A) => R) => {
    const transaction = db.transaction(fn);
    return (...args: A): R => transaction.immediate(...args);
  };

  const audit = (orderId: string, from: RowState | null, to: RowState, reason: string) =>
    statements.audit.run(orderId, now(), from, to, reason);

  /**
   * The one guarded, audited move of a row, inside the caller's transaction: refused
   * unless the transition table allows it (a state repeats only where it says so),
   * written by `write` (an UPDATE guarded by the row's state, and by its fence where it
   * has one), audited, unless `reason` is null: an answer that leaves a row where it was
   * records what it said, not a move. False when no row changed (the caller says whether
   * that is an error).
   */
  function guardedMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: string | null,
    write: () => { changes: number },
  ): boolean {
    if (!canMove(from, to)) {
      throw new JournalError(
        `${orderId}: a move from ${from} to ${to} is not allowed (${reason ?? 'an answer'})`,
      );
    }
    if (write().changes !== 1) return false;
    if (reason !== null) audit(orderId, from, to, reason);
    return true;
  }

  /**
   * Rows moved together by one guarded UPDATE ... RETURNING (all of a batch's queued rows
   * held, say), inside the caller's transaction: the move checked once, each row audited.
   */
  function movedTogether<R extends { order_id: string }>(
    from: RowState,
    to: RowState,
    reason: string,
    write: () => R[],
  ): R[] {
    if (!canMove(from, to)) {
      throw new JournalError(`a move from ${from} to ${to} is not allowed (${reason})`);
    }
    const rows = write();
    for (const row of rows) audit(row.order_id, from, to, reason);
    return rows;
  }

  /** A guarded move of a row this transaction has just read in `from`: it must happen. */
  function mustMove(
    orderId: string,
    from: RowState,
    to: RowState,
    reason: string,
    write: () => { changes: number },
  ): void {
    if (!guardedMove(orderId, from, to, reason, write)) {
      throw new JournalError(`${orderId}: not ${from} any more (${reason})`);
    }
  }

  /** A move of a claimed row, written only while its fence is still the row's. */
  function applyMove(move: Move): boolean {
    const row = statements.rowForMove.get(move.orderId) as
      { state: string; fence: number } | undefined;
    if (!row || row.fence !== move.fence) return false;
    const from = row.state as RowState;
    const params = moveParams(
      move.orderId,
      move.fence,
      from,
      move.to,
      move.details ?? {},
      move.release ?? true,
      now(),
    );
    return guardedMove(move.orderId, from, move.to, from === move.to ? null : move.reason, () =>
      statements.move.run(params),
    );
  }

  /**
   * One guarded batch move, inside the caller's transaction: checked against the batch
   * transition table, and guarded by the state it was read in.
   */
  function moveBatch(batchId: number, to: BatchState): void {
    const from = batchStateOf(batchId);
    if (!canMoveBatch(from, to)) {
      throw new JournalError(`batch ${batchId}: a move from ${from} to ${to} is not allowed`);
    }
    if (statements.moveBatch.run({ batchId, from, to }).changes !== 1) {
      throw new JournalError(`batch ${batchId}: not ${from} any more`);
    }
  }

  function batchStateOf(batchId: number): BatchState {
    const batch = statements.batchById.get(batchId) as BatchRow | undefined;
    if (!batch) throw new JournalError(`batch ${batchId} is not in the journal`);
    return batch.state as BatchState;
  }

  /** Records lines of a batch that are not payouts, inside the caller's transaction. */
  function insertLines(batchId: number, lines: readonly BatchLine[]): void {
    for (const line of lines) {
      statements.insertLine.run(
        batchId,
        line.line,
        line.kind,
        line.orderId,
        line.column,
        line.message,
        line.name ?? null,
        line.valueCents ?? null,
        line.valueWritten ?? null,
        line.said ? JSON.stringify(line.said) : null,
      );
    }
  }

  /** Holds a batch's queued rows, inside the caller's transaction. */
  function holdQueuedRows(
    batchId: number,
    kind: HoldReason,
    reason: string,
    message: string | null = null,
  ): void {
    movedTogether(
      'queued',
      'held',
      reason,
      () =>
        statements.holdQueued.all({ now: now(), batchId, reason: kind, message }) as {
          order_id: string;
        }[],
    );
  }

  /**
   * The cover rule once more, inside the claim's transaction: a queued row that an earlier
   * payout of another file now covers (two copies approved together, say) is held, not
   * sent. A row a person released as a new payment is left be.
   */
  function heldAtClaim(orderId: string, rules: AdmissionRules): boolean {
    const row = statements.payout.get(orderId) as
      (PayoutRow & { released_at: number | null; admitted_at: number | null }) | undefined;
    if (!row || row.released_at !== null) return false;
    const request = JSON.parse(row.request) as CashOutRequest;
    const covering = coveringOf(request, row.batch_id, rules, row.admitted_at ?? now());
    if (!covering) return false;
    const batch = statements.batchById.get(row.batch_id) as BatchRow;
    const message = duplicateMessage(covering, batch.file_name, rules.hintFlags ?? '');
    mustMove(orderId, 'queued', 'held', `checked again as it was claimed: ${message}`, () =>
      statements.holdAsDuplicate.run({ orderId, coveredBy: covering.orderId, message, now: now() }),
    );
    return true;
  }

  /** The payout that would cover a row of this batch (see the `covering` statement). */
  function coveringOf(
    request: CashOutRequest,
    batchId: number,
    rules: AdmissionRules,
    admittedAt = now(),
  ): Covering | undefined {
    const row = statements.covering.get({
      document: documentKey(request.cpfCnpj),
      value: request.value,
      since: now() - rules.duplicateWindowMs,
      batchId,
      orderId: request.orderId,
      admittedAt,
    }) as CoveringRow | undefined;
    return row && toCovering(row);
  }

  function knownOf(orderId: string, nameKey: string | null): Known | undefined {
    const row = statements.known.get(orderId) as KnownRow | undefined;
    return (
      row && {
        payloadHash: row.payload_hash,
        state: row.state as RowState,
        batchId: row.batch_id,
        line: row.line,
        fileName: row.file_name,
        admittedAt: row.admitted_at,
        sameName: nameKey !== null && row.name_key === nameKey,
      }
    );
  }

  /**
   * The same-name rule, once a file has been read: a file named as an earlier batch that
   * repeats any of its rows (same document and amount) is held whole, whatever its age,
   * until a person says whether it is a new payroll. Next month's payroll and last
   * month's file dropped again by mistake look the same; only a person can tell.
   */
  /** The batch of the same name a file arrived within 24 hours of, which it may correct. */
  function correctionCandidate(batchId: number): number | undefined {
    const batch = statements.batchById.get(batchId) as BatchRow | undefined;
    if (!batch?.name_key) return undefined;
    const [latest] = statements.batchesOfName.all(batch.name_key, batchId) as BatchRow[];
    if (!latest || latest.id > batchId) return undefined;
    return batch.received_at - latest.received_at < CORRECTION_WINDOW_MS ? latest.id : undefined;
  }

  function holdIfNamedAsEarlier(
    batchId: number,
    newBatchAfterMs: number | null,
    hintFlags: string,
  ): void {
    const batch = statements.batchById.get(batchId) as BatchRow | undefined;
    if (!batch?.name_key) return;
    const [latest] = statements.batchesOfName.all(batch.name_key, batchId) as BatchRow[];
    if (!latest || latest.id > batchId) return;
    if (newBatchAfterMs !== null && batch.received_at - latest.received_at >= newBatchAfterMs) {
      return;
    }
    if (!statements.repeatsEarlierOfName.get({ batchId, nameKey: batch.name_key })) return;
    const when = new Date(latest.received_at).toISOString().slice(0, 10);
    const message = `held with its whole file: it has the same name as ${latest.file_name} (batch ${latest.id}, ${when}) and repeats some of its rows, so it may be that file again or the next payroll; if it is a new payroll, run: payouts approve "${batch.file_name}" --new-batch${hintFlags}`;
    holdQueuedRows(batchId, 'same-name', message, message);
  }

  /**
   * Moves a row for a rule on who is paid, inside the caller's transaction: checked
   * against the transition table, guarded by the state it is in, audited.
   */
  function moveRow(
    orderId: string,
    from: RowState,
    to: RowState,
    fields: {
      holdReason?: HoldReason | null;
      coveredBy?: string | null;
      message?: string | null;
      supersededBy?: number | null;
    },
    reason: string,
  ): void {
    mustMove(orderId, from, to, reason, () =>
      statements.setRow.run({
        orderId,
        from,
        to,
        holdReason: fields.holdReason ?? null,
        coveredBy: fields.coveredBy ?? null,
        message: fields.message ?? null,
        supersededBy: fields.supersededBy ?? null,
        now: now(),
      }),
    );
  }

  /**
   * Whether a batch corrects `corrected`: at least one of its rows repeats a row of it,
   * and it has no more new rows than `corrected` has rows a correction may replace
   * (invalid, failed, refused, never sent). A row that changes a payout `corrected` made
   * does not count: it is held, never sent.
   */
  function isCorrectionOf(copy: number, corrected: number): boolean {
    const repeats =
      (statements.copyRepeats.all({ copy, corrected }) as unknown[]).length +
      (statements.takenOverBy.get({ copy, corrected }) as { n: number }).n;
    if (repeats === 0) return false;
    const fresh = (statements.copyMaySend.all(copy) as MaySendRow[]).filter(
      (row) => !statements.sentOfDocument.get(corrected, row.document),
    ).length;
    return fresh <= (statements.replaceableIn.get({ batchId: corrected }) as { n: number }).n;
  }

  /**
   * Links a copy to the batch it corrects, inside the caller's transaction. Its repeats of
   * rows that batch paid or has in flight are `covered`; its repeats of rows it never sent
   * take them over (the earlier rows are closed, superseded); its other rows are sent,
   * except those that change a payout that batch made (held: changes a paid row). Every
   * row of that batch still unsent is closed: nothing of it is ever sent because a copy
   * arrived.
   */
  function applyCorrection(copy: number, corrected: number, why: string): void {
    const copyBatch = statements.batchById.get(copy) as BatchRow;
    for (const row of statements.copyRepeats.all({ copy, corrected }) as (CoveringRow & {
      row_id: string;
    })[]) {
      const covering = toCovering(row);
      if (SENT.includes(covering.state)) {
        moveRow(
          row.row_id,
          'held',
          'covered',
          { coveredBy: covering.orderId, message: coveredMessage(covering) },
          `${why}: ${coveredMessage(covering)}`,
        );
      } else {
        moveRow(
          covering.orderId,
          covering.state,
          'superseded',
          {
            holdReason: covering.state === 'held' ? holdReasonOf(covering.orderId) : null,
            supersededBy: copy,
            message: `never sent; taken over by ${copyBatch.file_name}`,
          },
          `${why}: taken over by ${row.row_id}`,
        );
        moveRow(row.row_id, 'held', 'queued', {}, `${why}: takes over ${covering.orderId}`);
      }
    }
    for (const line of statements.heldLinesOf.all({ copy, corrected }) as (CoveringRow & {
      p_line: number;
    })[]) {
      const covering = toCovering({ ...line, line: line.p_line });
      statements.setLine.run('covered', coveredMessage(covering), copy, line.line);
    }
    for (const row of statements.copyMaySend.all(copy) as MaySendRow[]) {
      const sent = statements.sentOfDocument.get(corrected, row.document) as
        CoveringRow | undefined;
      const from = row.state as RowState;
      if (sent) {
        const message = changesPaidMessage(toCovering(sent), row.value_cents);
        // Held already (its name an earlier batch's): held now for the paid row it changes.
        moveRow(row.order_id, from, 'held', { holdReason: 'changes-paid', message }, message);
      } else if (from === 'held') {
        moveRow(row.order_id, 'held', 'queued', {}, `${why}: replaces a row that needed a person`);
      }
    }
    for (const row of statements.unsentOf.all(corrected) as { order_id: string; state: string }[]) {
      const from = row.state as RowState;
      moveRow(
        row.order_id,
        from,
        'superseded',
        {
          holdReason: from === 'held' ? holdReasonOf(row.order_id) : null,
          supersededBy: copy,
          message: `never sent; changed or left out by its corrected copy ${copyBatch.file_name}`,
        },
        `${why}: changed or left out by ${copyBatch.file_name}`,
      );
    }
    // Its invalid rows were the reason for the copy: the copy's rows stand for them now.
    statements.supersedeInvalid.run(`; corrected in ${copyBatch.file_name}`, corrected);
    statements.setCorrects.run(corrected, copy);
  }

  /**
   * A batch's rows that repeat, unchanged, a payout that failed at the gateway (of the
   * batch a copy corrects, or of any batch within duplicateWindow) are held, inside the
   * caller's transaction: a failed payout is sent again only when a person asks
   * (`payouts retry`), never because a file repeats it. A row that changes it (another
   * key, say) is a fix, and is sent.
   */
  function holdRepeatsOfFailed(
    copy: number,
    failedIn: { corrected: number } | { since: number },
    hintFlags: string,
  ): void {
    const held = new Set<string>();
    const repeats =
      'corrected' in failedIn
        ? statements.repeatsOfFailed.all({ copy, corrected: failedIn.corrected })
        : statements.repeatsOfFailedSince.all({ copy, since: failedIn.since });
    for (const row of repeats as (CoveringRow & { row_id: string })[]) {
      if (held.has(row.row_id)) continue;
      held.add(row.row_id);
      const message = failedBeforeMessage(toCovering(row), hintFlags);
      mustMove(row.row_id, 'queued', 'held', message, () =>
        statements.holdFailedBefore.run({
          orderId: row.row_id,
          coveredBy: row.order_id,
          message,
          now: now(),
        }),
      );
    }
  }

  /**
   * Sends a definitely failed payout again, on a person's request, inside the caller's
   * transaction: a new row on its line, under its orderId with the next attempt suffix
   * (-r2, -r3), queued; the failed one becomes `retried`, naming it; copies held because
   * they repeat it are covered by it; its batch, if done, opens again to send it.
   */
  function retryOne(orderId: string, by: string): RetryResult {
    let row = statements.retryOf.get(orderId) as RetryRow | undefined;
    if (!row) return { kind: 'absent', orderId };
    // A copy's row held because it repeats a failed payout: that payout is sent again.
    if (row.state === 'held' && row.hold_reason === 'failed-before' && row.covered_by) {
      row = statements.retryOf.get(row.covered_by) as RetryRow | undefined;
      if (!row) return { kind: 'absent', orderId };
    }
    if (!RETRYABLE.includes(row.state as RowState)) {
      const [latest] = statements.retriesOf.all(row.order_id) as { order_id: string }[];
      return {
        kind: 'not-failed',
        orderId: row.order_id,
        state: row.state as RowState,
        ...(latest ? { retriedAs: latest.order_id } : {}),
      };
    }
    const attempt = (row.attempt_number ?? 1) + 1;
    const base = row.retry_of === null ? row.order_id : row.order_id.replace(/-r\d+$/, '');
    const retryId = `${base}-r${attempt}`;
    if (statements.payout.get(retryId)) {
      throw new JournalError(
        `${row.order_id}: cannot be sent again as ${retryId}: that orderId is already in the journal (from another file); nothing changed`,
      );
    }
    const request = { ...(JSON.parse(row.request) as CashOutRequest), orderId: retryId };
    const at = now();
    statements.insertRetry.run({
      orderId: retryId,
      batchId: row.batch_id,
      line: row.line,
      request: JSON.stringify(request),
      hash: payloadHash(request),
      value: row.value_cents,
      document: row.document,
      now: at,
      retryOf: row.order_id,
      attempt,
    });
    const day = new Date(at).toISOString().slice(0, 10);
    const why = `sent again on purpose by ${by} on ${day} (payouts retry)`;
    audit(
      retryId,
      null,
      'queued',
      `attempt ${attempt} of ${base}, after ${row.order_id} ${row.state}: ${why}`,
    );
    moveRow(
      row.order_id,
      row.state as RowState,
      'retried',
      { message: [row.message, `${why}, as ${retryId}`].filter(Boolean).join('; ') },
      `${why}, as ${retryId}`,
    );
    for (const copy of statements.heldAsFailedBefore.all(row.order_id) as { order_id: string }[]) {
      moveRow(
        copy.order_id,
        'held',
        'covered',
        {
          coveredBy: retryId,
          message: `the payout it repeats is ${why}, as ${retryId}: not sent from this file`,
        },
        `covered by ${retryId}, ${why}`,
      );
    }
    statements.addBatchEvent.run(
      row.batch_id,
      at,
      'retried',
      by,
      `line ${row.line}: ${row.order_id} (${row.state}) sent again as ${retryId} (payouts retry)`,
    );
    if (batchStateOf(row.batch_id) === 'done') moveBatch(row.batch_id, 'open');
    return {
      kind: 'retried',
      orderId: retryId,
      retryOf: row.order_id,
      batchId: row.batch_id,
      line: row.line,
      valueCents: row.value_cents,
    };
  }

  function holdReasonOf(orderId: string): HoldReason | null {
    return (statements.payout.get(orderId) as { hold_reason: HoldReason | null }).hold_reason;
  }

  /** Rows a copy turned down had closed go back to where they were. */
  function giveBack(copy: number, why: string): void {
    for (const row of statements.supersededBy.all(copy) as {
      order_id: string;
      hold_reason: HoldReason | null;
    }[]) {
      moveRow(
        row.order_id,
        'superseded',
        row.hold_reason === null ? 'queued' : 'held',
        { holdReason: row.hold_reason },
        `given back: ${why}`,
      );
    }
  }

  const moveOne = writing((move: Move) => applyMove(move));
  const moveAll = writing((moves: readonly Move[]) => moves.map(applyMove));

  /** Takes leases on these rows (a fresh fence each), inside the caller's transaction. */
  function lease(orderIds: readonly string[], owner: string, leaseMs: number): Claim[] {
    const at = now();
    return orderIds.map((orderId) =>
      toClaim(statements.takeLease.get(owner, at + leaseMs, at, orderId) as ClaimRow),
    );
  }

  /** The re-send mark itself, in one transaction; see markResending below. */
  const markResending = writing((claim: Claim, reason: string, leaseMs: number): boolean => {
    const at = now();
    return guardedMove(claim.orderId, 'unknown', 'sending', reason, () =>
      statements.markResending.run({
        now: at,
        leaseUntil: at + leaseMs,
        orderId: claim.orderId,
        fence: claim.fence,
      }),
    );
  });

  const identity = (): JournalIdentity | undefined => {
    const row = statements.identity.get() as
      | {
          journal_id: string;
          created_at: number;
          recovery_since: number | null;
          recovery_reason: string | null;
        }
      | undefined;
    return (
      row && {
        journalId: row.journal_id,
        createdAt: row.created_at,
        recoverySince: row.recovery_since,
        recoveryReason: row.recovery_reason,
      }
    );
  };
  let recoverySince = identity()?.recoverySince ?? null;
  const highWater = (): number => (statements.highWater.get() as { id: number }).id;
  // What requests must wait for: the marker saying what the last sending commit wrote.
  let sendingSaved: Promise<void> = Promise.resolve();
  const sendingCommitted = (): void => {
    if (options.onSending) sendingSaved = options.onSending(highWater());
  };

  return {
    path,

    identity,

    /** The highest audit id: it only grows, so an older copy of this journal has a lower one. */
    highWater,

    /**
     * A person chose to go on after a lost, replaced or older journal: from now on every
     * payout not yet sent from this journal is looked up before its first send, and the
     * re-send grace counts from now (a request of the lost journal may still be landing).
     */
    startRecovery: writing((reason: string): void => {
      const at = now();
      statements.startRecovery.run({ now: at, reason });
      recoverySince = at;
    }),

    /** Resolves when requests of the rows claimed so far may leave (the marker is written). */
    sendable: (): Promise<void> => sendingSaved,

    /**
     * In a recovering journal, the queued rows never sent from it become `unknown`, as if
     * sent when recovery began: resolution looks each up (found: adopted; not found twice
     * after the grace period: sent). Returns how many; none outside recovery.
     */
    lookUpNeverSent: writing((): number => {
      if (recoverySince === null) return 0;
      const since = recoverySince;
      return movedTogether(
        'queued',
        'unknown',
        'recovery: looked up at the gateway before its first send from this journal (the lost journal may have sent it)',
        () => statements.neverSent.all({ since, now: now() }) as { order_id: string }[],
      ).length;
    }),

    /** Records a file as a batch, with the lines that are not payouts. */
    /** The kind of gateway this journal sends to: the first caller's, kept from then on. */
    bindGateway: writing((kind: GatewayKind): GatewayKind => {
      statements.bindGateway.run(kind);
      return (statements.boundGateway.get() as { kind: GatewayKind }).kind;
    }),

    /** The kind of gateway this journal has been bound to, if any yet. */
    gatewayKind(): GatewayKind | undefined {
      return (statements.boundGateway.get() as { kind: GatewayKind } | undefined)?.kind;
    },

    recordBatch: writing((batch: BatchInput, lines: readonly BatchLine[]): number => {
      const { lastInsertRowid } = statements.insertBatch.run({
        ...batch,
        receivedAt: now(),
        problems: JSON.stringify(batch.problems),
        // Recorded whole, not read from a named file: no part in the same-name rule.
        nameKey: null,
        nameNumber: 1,
      });
      const batchId = Number(lastInsertRowid);
      insertLines(batchId, lines);
      return batchId;
    }),

    batch: (batchId: number): BatchRecord | undefined => {
      const row = statements.batchById.get(batchId) as BatchRow | undefined;
      return row ? toBatch(row) : undefined;
    },

    /** Every batch, oldest first; or those of one file name. */
    batches: (fileName?: string): BatchRecord[] =>
      (fileName === undefined
        ? (statements.allBatches.all() as BatchRow[])
        : (statements.batchesNamed.all(fileName) as BatchRow[])
      ).map(toBatch),

    /**
     * A batch's result file name: the one it has, or the first of `candidates` no other
     * batch has, kept from then on.
     */
    resultName: writing((batchId: number, candidates: readonly string[]): string => {
      const row = statements.batchById.get(batchId) as BatchRow | undefined;
      if (row?.result_name) return row.result_name;
      const name = candidates.find((candidate) => !statements.resultNameTaken.get(candidate));
      if (name === undefined) throw new JournalError(`batch ${batchId}: no free result file name`);
      statements.setResultName.run(name, batchId);
      return name;
    }),

    batchesIn: (state: BatchState): BatchRecord[] =>
      (statements.batchesInState.all(state) as BatchRow[]).map(toBatch),

    /** Moves a batch to `state`, if the batch transition table allows it. */
    setBatchState: writing((batchId: number, state: BatchState): void => {
      moveBatch(batchId, state);
    }),

    /**
     * The batch for a file's bytes, in one transaction so that two runs cannot both start
     * one: a new `admitting` batch, the `admitting` one a dead run left (to resume), or the
     * batch these bytes already made (`same-file`: nothing is admitted again).
     */
    batchForFile: writing(
      (file: {
        name: string;
        nameKey: string;
        sha256: string;
        arrived: boolean;
      }): { kind: 'new' | 'resume' | 'same-file'; batchId: number; nameNumber: number } => {
        const earlier = (statements.batchesBySha256.all(file.sha256) as BatchRow[]).map(toBatch);
        const resuming = earlier.find((batch) => batch.state === 'admitting');
        if (resuming)
          return { kind: 'resume', batchId: resuming.id, nameNumber: resuming.nameNumber };
        // A file an earlier run left in processing/: its rows are followed, not journaled
        // again. One that has just arrived is a batch of its own whatever its bytes (next
        // month's fixed payroll may be byte for byte this month's): the rules on who is
        // paid judge its rows.
        const made = earlier.findLast(
          (batch) => !file.arrived && !['unusable', 'refused', 'done'].includes(batch.state),
        );
        if (made) return { kind: 'same-file', batchId: made.id, nameNumber: made.nameNumber };
        const nameNumber = (statements.lastNameNumber.get(file.nameKey) as { n: number }).n + 1;
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
        });
        return { kind: 'new', batchId: Number(lastInsertRowid), nameNumber };
      },
    ),

    /**
     * Records what reading the whole file found, in one commit with its consequence:
     * open, or every queued row held (`holdReason`) when it may not be sent.
     */
    finishBatch: writing(
      (
        batchId: number,
        figures: Omit<BatchInput, 'fileName' | 'sha256'>,
        holdReason?: string,
        rules?: AdmissionRules & { sameNameNewBatchAfterMs: number | null },
      ): void => {
        if (figures.state === 'held' || figures.state === 'unusable') {
          holdQueuedRows(batchId, 'file', holdReason ?? figures.state);
        } else if (rules) {
          const corrected = correctionCandidate(batchId);
          if (corrected !== undefined && isCorrectionOf(batchId, corrected)) {
            applyCorrection(batchId, corrected, `a corrected copy of batch ${corrected}`);
            holdRepeatsOfFailed(batchId, { corrected }, rules.hintFlags ?? '');
          } else {
            holdIfNamedAsEarlier(batchId, rules.sameNameNewBatchAfterMs, rules.hintFlags ?? '');
            // Another file repeating a failed payout is a drop, not a person's request.
            const since = now() - rules.duplicateWindowMs;
            holdRepeatsOfFailed(batchId, { since }, rules.hintFlags ?? '');
          }
        }
        moveBatch(batchId, figures.state);
        statements.finishBatch.run({
          ...figures,
          id: batchId,
          problems: JSON.stringify(figures.problems),
        });
      },
    ),

    /**
     * Rows of a batch closed by a corrected copy that still waits for approval: turning
     * the copy down gives them back, so the batch is not finished while it waits.
     */
    supersededByWaiting: (batchId: number): number =>
      (statements.supersededByWaiting.get(batchId) as { n: number }).n,

    /** Records a person's decision about a batch, with who and when. */
    recordBatchEvent: writing(
      (batchId: number, event: BatchEvent['event'], by: string, detail: string): void => {
        statements.addBatchEvent.run(batchId, now(), event, by, detail);
      },
    ),

    batchEvents: (batchId: number): BatchEvent[] =>
      statements.batchEvents.all(batchId) as BatchEvent[],

    /** The newest batch of a name (copy marks dropped), if any: `run --dry-run` says so. */
    latestOfName: (nameKey: string): BatchRecord | undefined => {
      const [latest] = statements.batchesOfName.all(nameKey, 0) as BatchRow[];
      return latest && toBatch(latest);
    },

    /** Held rows of a batch by reason, with what one of them says. */
    holdsOfBatch: (batchId: number): HoldSummary[] =>
      (
        statements.holdsOfBatch.all(batchId) as {
          hold_reason: HoldReason | null;
          n: number;
          cents: number;
          message: string | null;
        }[]
      ).map((row) => ({
        reason: row.hold_reason,
        rows: row.n,
        cents: row.cents,
        message: row.message,
      })),

    /**
     * A person's answer that a batch corrects `corrected` (another name, or later than a
     * day): the corrected-copy rules applied by hand (see applyCorrection). Returns how
     * many of its rows may now be sent.
     */
    correctBatch: writing((copy: number, corrected: number, why: string): number => {
      applyCorrection(copy, corrected, why);
      holdRepeatsOfFailed(copy, { corrected }, '');
      return (statements.copyMaySend.all(copy) as MaySendRow[]).filter(
        (row) => row.state === 'queued',
      ).length;
    }),

    /**
     * A person's release of a batch's rows held for `reason`: queued, to be sent, each move
     * audited with who released it and why.
     */
    releaseHolds: writing(
      (batchId: number, reason: HoldReason, why: string): { rows: number; cents: number } => {
        const rows = movedTogether(
          'held',
          'queued',
          why,
          () =>
            statements.releaseHolds.all({ now: now(), batchId, reason }) as {
              order_id: string;
              value_cents: number;
            }[],
        );
        return { rows: rows.length, cents: rows.reduce((sum, row) => sum + row.value_cents, 0) };
      },
    ),

    setAwaitingName: (batchId: number, name: string): void => {
      statements.setAwaitingName.run(name, batchId);
    },

    /** The batches these bytes made, oldest first. */
    batchesOf: (sha256: string): BatchRecord[] =>
      (statements.batchesBySha256.all(sha256) as BatchRow[]).map(toBatch),

    /** A person approved a waiting batch: it opens. False when it was not waiting (any more). */
    approveBatch: writing((batchId: number): boolean => {
      if (
        (statements.batchById.get(batchId) as BatchRow | undefined)?.state !== 'awaiting-approval'
      )
        return false;
      moveBatch(batchId, 'open');
      return true;
    }),

    /**
     * A person turned a waiting batch down: its rows held, never sent (a later file may
     * take them over). False when it was not waiting (any more): nothing changes then.
     */
    refuseBatch: writing((batchId: number, why: string): boolean => {
      if (
        (statements.batchById.get(batchId) as BatchRow | undefined)?.state !== 'awaiting-approval'
      )
        return false;
      moveBatch(batchId, 'refused');
      holdQueuedRows(batchId, 'file', why);
      giveBack(batchId, `the copy that had taken it over was turned down (${why})`);
      return true;
    }),

    /** An underfunded batch the balance now covers: its rows queued again, and it opens. */
    fundBatch: writing((batchId: number): void => {
      movedTogether(
        'held',
        'queued',
        'the balance now covers its batch',
        () => statements.releaseHeld.all(now(), batchId) as { order_id: string }[],
      );
      moveBatch(batchId, 'open');
      statements.setHeldBecause.run(null, batchId);
    }),

    /** A batch the balance does not cover: its queued rows held, checked again every run. */
    underfundBatch: writing((batchId: number, why: string): void => {
      holdQueuedRows(batchId, 'balance', why);
      moveBatch(batchId, 'underfunded');
      statements.setHeldBecause.run(why, batchId);
    }),

    /** What each open or underfunded batch still has to send, oldest batch first. */
    queuedByBatch: (): { batchId: number; cents: number; count: number }[] =>
      (
        statements.queuedCentsByBatch.all() as { batch_id: number; cents: number; count: number }[]
      ).map((row) => ({
        batchId: row.batch_id,
        cents: row.cents,
        count: row.count,
      })),

    /** Adds lines of a batch that are not payouts (invalid rows, skipped lines). */
    recordLines: writing((batchId: number, lines: readonly BatchLine[]): void => {
      insertLines(batchId, lines);
    }),

    linesOfBatch: (batchId: number): BatchLine[] =>
      (statements.linesOfBatch.all(batchId) as LineRow[]).map((row) => ({
        line: row.line,
        kind: row.kind as BatchLine['kind'],
        orderId: row.order_id,
        column: row.column_heading,
        message: row.message,
        ...(row.said === null ? {} : { said: saidOf(row.said) }),
      })),

    /**
     * Journals a batch's payouts in one transaction, each by the rules on who is paid
     * (see admission.ts): new (queued), a row of an earlier batch of its name taken over,
     * held as a possible duplicate, or (its orderId another file's) a held line.
     */
    admitPayouts: writing(
      (
        batchId: number,
        payouts: readonly PayoutInput[],
        rules: AdmissionRules,
      ): AdmittedPayout[] => {
        const batch = statements.batchById.get(batchId) as BatchRow | undefined;
        if (!batch) throw new JournalError(`batch ${batchId} is not in the journal`);
        return payouts.map(({ line, request, identicalTo }) => {
          const hash = payloadHash(request);
          const previous = knownOf(request.orderId, batch.name_key);
          // The same row of the same batch again: an interrupted admission resuming.
          if (
            previous &&
            previous.batchId === batchId &&
            previous.line === line &&
            previous.payloadHash === hash
          ) {
            return { orderId: request.orderId, line, admission: 'same' as const };
          }
          const at = now();
          const document = documentKey(request.cpfCnpj);
          const admission = admit(previous, coveringOf(request, batchId, rules), hash);
          const params = {
            orderId: request.orderId,
            batchId,
            line,
            request: JSON.stringify(request),
            hash,
            value: request.value,
            document,
            now: at,
          };
          let covering: Covering | undefined;
          switch (admission.kind) {
            case 'new':
            case 'duplicate':
              statements.insertPayout.run(params);
              audit(
                request.orderId,
                null,
                'queued',
                `journaled from batch ${batchId}, line ${line}`,
              );
              covering = admission.kind === 'duplicate' ? admission.covering : undefined;
              break;
            case 'retry': {
              // The earlier row's own request, before the new one takes its place.
              const earlier = statements.requestOf.get(request.orderId) as
                { request: string } | undefined;
              // Not a move: a new payload takes the place of one the gateway never saw
              // (admission decided), guarded by the state admission read.
              const from = admission.previous.state;
              if (statements.replacePayout.run({ ...params, from }).changes !== 1) {
                throw new JournalError(`${request.orderId}: not ${from} any more`);
              }
              audit(
                request.orderId,
                from,
                'queued',
                `replaced by batch ${batchId}, line ${line}: the earlier payload never reached the gateway`,
              );
              if (admission.previous.batchId !== batchId) {
                // The earlier file keeps a line for it, so its result still has every row.
                const was = earlier && (JSON.parse(earlier.request) as CashOutRequest);
                insertLines(admission.previous.batchId, [
                  {
                    line: admission.previous.line,
                    kind: 'superseded',
                    orderId: request.orderId,
                    column: null,
                    message: `was ${admission.previous.state}, never sent; taken over by line ${line} of ${batch.file_name}`,
                    name: was ? was.person.name : null,
                    valueCents: was ? was.value : null,
                  },
                ]);
              }
              covering = admission.covering;
              break;
            }
            case 'journaled':
              insertLines(batchId, [
                {
                  line,
                  kind: 'held',
                  orderId: request.orderId,
                  column: null,
                  message: journaledMessage(request.orderId, admission.previous, rules.hintFlags),
                  name: request.person.name,
                  valueCents: request.value,
                },
              ]);
              break;
          }
          if (covering) {
            const message = duplicateMessage(covering, batch.file_name, rules.hintFlags ?? '');
            mustMove(request.orderId, 'queued', 'held', message, () =>
              statements.holdAsDuplicate.run({
                orderId: request.orderId,
                coveredBy: covering.orderId,
                message,
                now: at,
              }),
            );
          } else if (identicalTo !== undefined && admission.kind !== 'journaled') {
            const message = `identical to line ${identicalTo} of this file (the same name, document, Pix key and amount): not sent until a person confirms both are due: payouts approve "${batch.file_name}" --identical${rules.hintFlags ?? ''}`;
            mustMove(request.orderId, 'queued', 'held', message, () =>
              statements.holdIdentical.run({ orderId: request.orderId, message, now: at }),
            );
          }
          return { orderId: request.orderId, line, admission: admission.kind };
        });
      },
    ),

    /**
     * Claims up to `limit` queued rows and marks them `sending`, durably, in one commit:
     * a request may leave the process only after this returns.
     */
    claimToSend: (
      owner: string,
      limit: number,
      leaseMs: number,
      rules?: AdmissionRules,
    ): Claim[] => {
      const claims = db
        .transaction(() => {
          const candidates =
            recoverySince === null ? statements.queued : statements.queuedSentBefore;
          const ids = (candidates.all(limit) as { order_id: string }[])
            .map((r) => r.order_id)
            .filter((orderId) => !rules || !heldAtClaim(orderId, rules));
          const claims = lease(ids, owner, leaseMs);
          const at = now();
          for (const claim of claims) {
            const { orderId, fence, state: from } = claim;
            mustMove(
              orderId,
              from,
              'sending',
              `claimed by ${owner} (attempt ${claim.attempts + 1})`,
              () => statements.markSending.run({ now: at, orderId, fence, from }),
            );
          }
          return claims.map((claim) => ({
            ...claim,
            state: 'sending' as const,
            attempts: claim.attempts + 1,
            notFound: 0,
            lastSentAt: at,
          }));
        })
        .immediate();
      if (claims.length > 0) sendingCommitted();
      return claims;
    },

    /**
     * Claims rows left `sending` or `unknown` by a process that is gone (its lease
     * expired), to be resolved by lookup; `sending` ones become `unknown` first.
     */
    claimAbandoned: (
      owner: string,
      limit: number,
      leaseMs: number,
      after: { batchId: number; line: number } = { batchId: 0, line: 0 },
    ): Claim[] =>
      db
        .transaction(() => {
          const rows = statements.abandoned.all(now(), after.batchId, after.line, limit) as {
            order_id: string;
          }[];
          const ids = rows.map((r) => r.order_id);
          return lease(ids, owner, leaseMs).map((claim) => {
            if (claim.state !== 'sending') return claim;
            mustMove(
              claim.orderId,
              'sending',
              'unknown',
              `no answer recorded before its lease ended: resolving by lookup (${owner})`,
              () =>
                statements.move.run(
                  moveParams(claim.orderId, claim.fence, 'sending', 'unknown', {}, false, now()),
                ),
            );
            return { ...claim, state: 'unknown' as const };
          });
        })
        .immediate(),

    /** Claims pending payouts whose poll is due, to be followed by their transactionId. */
    claimDue: (owner: string, limit: number, leaseMs: number): Claim[] =>
      db
        .transaction(() => {
          const ids = (statements.due.all({ now: now(), limit }) as { order_id: string }[]).map(
            (r) => r.order_id,
          );
          return lease(ids, owner, leaseMs);
        })
        .immediate(),

    /**
     * Claims `paid` payouts sent since `since`, after orderId `after` (paging), to be read
     * again: a Pix payment can come back (refunded) after it was paid.
     */
    claimPaid: (
      owner: string,
      limit: number,
      leaseMs: number,
      since: number,
      after = '',
    ): Claim[] =>
      db
        .transaction(() => {
          const ids = (
            statements.paidSince.all({ now: now(), since, after, limit }) as { order_id: string }[]
          ).map((r) => r.order_id);
          return lease(ids, owner, leaseMs);
        })
        .immediate(),

    /**
     * Batches whose results show a payout that became refunded since `since`: its own
     * batch, and every later one with a row it covered or a line naming its orderId.
     */
    batchesShowingRefundedSince: (since: number): number[] =>
      (statements.batchesShowingRefundedSince.all(since) as { batch_id: number }[]).map(
        (r) => r.batch_id,
      ),

    /** When the next poll falls due (0: now), or undefined when nothing is pending. */
    nextPollAt: (): number | undefined =>
      (statements.nextPollAt.get() as { at: number | null }).at ?? undefined,

    /**
     * A postback named this payout: its poll falls due now. A poll already in flight for
     * it loses its fence (its answer may be older than the news) and the row is polled
     * again; a row still `sending` or `unknown` is polled as soon as it is pending. False
     * when it names no payout we follow.
     */
    pollNow: writing((hint: { transactionId?: number; orderId?: string }): boolean => {
      const params = {
        now: now(),
        transactionId: hint.transactionId ?? null,
        orderId: hint.orderId ?? null,
      };
      return (
        statements.pollPendingNow.run(params).changes + statements.pollSoon.run(params).changes > 0
      );
    }),

    /**
     * Marks a claimed `unknown` row `sending` again, for a re-send with its own orderId,
     * and renews its lease; false when the row is no longer ours or its lease has ended.
     * The marker is told after the commit (see sendable).
     */
    markResending: (claim: Claim, reason: string, leaseMs: number): boolean => {
      const changed = markResending(claim, reason, leaseMs);
      if (changed) sendingCommitted();
      return changed;
    },

    /**
     * Moves a claimed row to `to`, if this process still holds it (same fence) and the
     * move is allowed. False when the lease was taken over: write nothing more then.
     */
    move: (
      orderId: string,
      fence: number,
      to: RowState,
      reason: string,
      details: AnswerDetails = {},
      options: { release?: boolean } = {},
    ): boolean =>
      moveOne({ orderId, fence, to, reason, details, release: options.release ?? true }),

    /**
     * Several moves in one commit (the group commit of answers): each is written only if
     * its row is still held with its fence, as `move` does; returns which were written.
     */
    moveMany: (moves: readonly Move[]): boolean[] => moveAll(moves),

    /** What admission would weigh a new row of this orderId against. */
    known: (orderId: string): Known | undefined => knownOf(orderId, null),

    /**
     * What admitting this row in a new batch of this name would decide, writing nothing
     * (`run --dry-run`).
     */
    weigh: (request: CashOutRequest, nameKey: string, rules: AdmissionRules): Admission =>
      admit(knownOf(request.orderId, nameKey), coveringOf(request, 0, rules), payloadHash(request)),

    /**
     * A payout of duplicateWindow that definitely failed and that this row repeats
     * unchanged, writing nothing (`run --dry-run`): a run would hold the row for
     * `payouts retry`.
     */
    failedRepeatOf: (request: CashOutRequest, rules: AdmissionRules): Covering | undefined => {
      const row = statements.failedRepeated.get({
        document: documentKey(request.cpfCnpj),
        value: request.value,
        pixKey: request.pixKey,
        since: now() - rules.duplicateWindowMs,
      }) as CoveringRow | undefined;
      return row && toCovering(row);
    },

    payout: (orderId: string): PayoutRecord | undefined => {
      const row = statements.payout.get(orderId) as PayoutRow | undefined;
      return row ? toPayout(row) : undefined;
    },

    /**
     * How many rows of a batch are in each state, and their cents, counted in SQL (a file
     * may have a million rows): payouts by state, other lines by kind, replays by their
     * payout's state.
     */
    rowTotalsOfBatch: (batchId: number): RowTotals => {
      const totals: RowTotals = { rows: {}, cents: {} };
      for (const row of statements.rowTotalsOfBatch.all({ batchId }) as {
        key: RowState | BatchLine['kind'];
        n: number;
        cents: number;
      }[]) {
        totals.rows[row.key] = (totals.rows[row.key] ?? 0) + row.n;
        totals.cents[row.key] = (totals.cents[row.key] ?? 0) + row.cents;
      }
      return totals;
    },

    /**
     * Up to `limit` lines of a batch after line `after`, in file order: read a page at a
     * time (a file may be large), never holding a cursor open across the caller's awaits.
     */
    resultEntries: (batchId: number, after: number, limit: number): ResultEntry[] => {
      const rows = statements.resultEntries.all({ batchId, after, limit }) as (PayoutRow & {
        entry_line: number;
        entry_kind: string;
        entry_order_id: string | null;
        note: string | null;
        column_heading: string | null;
        line_name: string | null;
        line_value_cents: number | null;
        line_value_written: string | null;
        line_said: string | null;
        cover_order_id: string | null;
        cover_state: string | null;
        cover_file_name: string | null;
        cover_line: number | null;
      })[];
      return rows.map((row) => ({
        line: row.entry_line,
        kind: row.entry_kind as ResultEntry['kind'],
        orderId: row.entry_order_id,
        payout: row.order_id === null ? null : toPayout(row),
        note: row.note,
        column: row.column_heading,
        name: row.line_name,
        valueCents: row.line_value_cents,
        valueWritten: row.line_value_written,
        said: saidOf(row.line_said),
        cover:
          row.cover_order_id === null
            ? null
            : {
                orderId: row.cover_order_id,
                state: row.cover_state as RowState,
                fileName: row.cover_file_name ?? '',
                line: row.cover_line ?? 0,
              },
      }));
    },

    /**
     * Takes the lock `name` when it is free, or its holder is gone: its heartbeat older
     * than `staleMs`, or (on this host) its process no longer running. Otherwise says who
     * holds it.
     */
    takeLock: writing(
      (
        name: string,
        me: { holder: string; host: string; pid: number },
        staleMs: number,
        isRunning: (pid: number) => boolean,
      ): { taken: true } | { taken: false; heldBy: LockHolder } => {
        const row = statements.lock.get(name) as LockRow | undefined;
        const at = now();
        const gone =
          !row || row.heartbeat_at <= at - staleMs || (row.host === me.host && !isRunning(row.pid));
        if (!gone) {
          return {
            taken: false,
            heldBy: {
              holder: row.holder,
              host: row.host,
              pid: row.pid,
              since: row.since,
              heartbeatAt: row.heartbeat_at,
            },
          };
        }
        statements.setLock.run({ name, ...me, now: at });
        return { taken: true };
      },
    ),

    /** Keeps the lock ours; false when another process has taken it over. */
    renewLock: writing(
      (name: string, holder: string): boolean =>
        statements.renewLock.run(now(), name, holder).changes === 1,
    ),

    releaseLock: writing((name: string, holder: string): void => {
      statements.releaseLock.run(name, holder);
    }),

    history: (orderId: string): AuditEntry[] =>
      (
        statements.history.all(orderId) as {
          at: number;
          from_state: string | null;
          to_state: string;
          reason: string;
        }[]
      ).map((row) => ({
        at: row.at,
        from: row.from_state as RowState | null,
        to: row.to_state as RowState,
        reason: row.reason,
      })),

    countsByState: (): Partial<Record<RowState, { count: number; cents: number }>> =>
      Object.fromEntries(
        (statements.countsByState.all() as { state: string; count: number; cents: number }[]).map(
          (row) => [row.state, { count: row.count, cents: row.cents }],
        ),
      ),

    /**
     * A batch's payouts still pending that were sent at or before `before`: how many, and
     * the oldest (when it was sent, and its orderId); undefined when there are none.
     */
    pendingSentBefore: (
      batchId: number,
      before: number,
    ): { rows: number; oldestSentAt: number; oldestOrderId: string } | undefined => {
      const row = statements.pendingSentBefore.get({ batchId, before }) as {
        n: number;
        oldest: number | null;
        order_id: string | null;
      };
      return row.n === 0 || row.oldest === null || row.order_id === null
        ? undefined
        : { rows: row.n, oldestSentAt: row.oldest, oldestOrderId: row.order_id };
    },

    /**
     * A person's request to send definitely failed payouts again (`payouts retry`), each
     * by its orderId (or a copy's row held because it repeats one), in one commit.
     */
    retryPayouts: writing((orderIds: readonly string[], by: string): RetryResult[] =>
      orderIds.map((orderId) => retryOne(orderId, by)),
    ),

    /** A batch's payouts a retry of its file would send again, by orderId, in file order. */
    retryTargetsOf: (batchId: number): string[] =>
      (statements.retryTargetsOf.all(batchId) as { order_id: string }[]).map((r) => r.order_id),

    /** Whether some payout of a batch was sent again by `payouts retry`. */
    hasRetries: (batchId: number): boolean => statements.batchHasRetries.get(batchId) !== undefined,

    close: () => db.close(),
  };
}
export type Journal = ReturnType<typeof openJournal>;

/** What a request to send a payout again did (`payouts retry`). */
export type RetryResult =
  | {
      kind: 'retried';
      /** The new payout: the orderId with its attempt suffix. */
      orderId: string;
      /** The payout that failed. */
      retryOf: string;
      batchId: number;
      line: number;
      valueCents: number;
    }
  /** It did not definitely fail (paid, pending, or already sent again as `retriedAs`). */
  | { kind: 'not-failed'; orderId: string; state: RowState; retriedAs?: string }
  | { kind: 'absent'; orderId: string };

interface RetryRow {
  order_id: string;
  batch_id: number;
  line: number;
  request: string;
  value_cents: number;
  document: string;
  state: string;
  message: string | null;
  covered_by: string | null;
  hold_reason: string | null;
  retry_of: string | null;
  attempt_number: number | null;
}

/**
 * Queued rows of batch @copy that repeat, unchanged (document, amount, Pix key), a payout
 * that definitely failed, among the payouts `failedWhere` names (of the batch a copy
 * corrects, or of any other batch journaled since @since); first the oldest.
 */
function repeatsOfFailedIn(failedWhere: string): string {
  return `
    SELECT r.order_id AS row_id, p.order_id, p.batch_id, p.line, p.state, p.admitted_at,
      p.transaction_id, p.value_cents, b.file_name
    FROM payouts r
    JOIN payouts p ON ${failedWhere} AND p.document = r.document
      AND p.value_cents = r.value_cents
      AND json_extract(p.request, '$.pixKey') = json_extract(r.request, '$.pixKey')
      AND p.state IN (${inList(RETRYABLE)})
    JOIN batches b ON b.id = p.batch_id
    WHERE r.batch_id = @copy AND r.state = 'queued'
    ORDER BY r.line, p.admitted_at, p.line`;
}

/** States as an SQL list: constants of ours, never input. */
function inList(states: readonly RowState[]): string {
  return states.map((state) => `'${state}'`).join(', ');
}

const BUSY_WAIT_MS = 10_000;
/** A file of the same name this soon after a batch may be its corrected copy. */
const CORRECTION_WINDOW_MS = 24 * 60 * 60 * 1000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switching a new journal to WAL takes the whole file, and SQLite answers SQLITE_BUSY at
 * once instead of waiting as it does for a write: two processes opening a new journal
 * together (two daemons started at once) would have one fail. So it is tried again, for
 * as long as a write would wait.
 */
function switchToWal(db: Database): void {
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw error;
      Atomics.wait(PAUSE, 0, 0, 20); // a synchronous pause: the open is synchronous
    }
  }
}

function migrate(db: Database): void {
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  for (const migration of MIGRATIONS) {
    db.transaction(() => {
      // Read inside the write lock: another process may have migrated meanwhile.
      const current = db.pragma('user_version', { simple: true }) as number;
      if (current > latest) {
        throw new JournalError(
          `the journal ${db.name} is at schema version ${current}, newer than this program knows (${latest}): use a newer payouts (payouts --version says which this is). Nothing was sent`,
        );
      }
      if (migration.version <= current) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}

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

interface BatchRow {
  id: number;
  file_name: string;
  sha256: string;
  received_at: number;
  state: string;
  rows: number;
  valid: number;
  invalid: number;
  total_cents: number;
  problems: string;
  result_name: string | null;
  awaiting_name: string | null;
  held_because: string | null;
  name_key: string | null;
  name_number: number | null;
}

function toBatch(row: BatchRow): BatchRecord {
  return {
    id: row.id,
    fileName: row.file_name,
    sha256: row.sha256,
    receivedAt: row.received_at,
    state: row.state as BatchState,
    rows: row.rows,
    valid: row.valid,
    invalid: row.invalid,
    totalCents: row.total_cents,
    // Journals before problems were values kept English sentences.
    problems: (JSON.parse(row.problems) as (string | Said)[]).map((problem) =>
      typeof problem === 'string' ? { code: 'english', text: problem } : problem,
    ),
    awaitingName: row.awaiting_name,
    heldBecause: row.held_because,
    nameKey: row.name_key,
    nameNumber: row.name_number ?? 1,
    resultName: row.result_name,
  };
}

interface LineRow {
  line: number;
  kind: string;
  order_id: string | null;
  column_heading: string | null;
  message: string;
  said: string | null;
}

const saidOf = (json: string | null): Said | null =>
  json === null ? null : (JSON.parse(json) as Said);

interface KnownRow {
  payload_hash: string;
  state: string;
  batch_id: number;
  line: number;
  admitted_at: number | null;
  file_name: string;
  name_key: string | null;
}

interface CoveringRow {
  order_id: string;
  batch_id: number;
  line: number;
  state: string;
  admitted_at: number;
  transaction_id: number | null;
  value_cents: number;
  file_name: string;
}

interface MaySendRow {
  order_id: string;
  document: string;
  value_cents: number;
  state: string;
}

function toCovering(row: CoveringRow): Covering {
  return {
    orderId: row.order_id,
    batchId: row.batch_id,
    line: row.line,
    state: row.state as RowState,
    fileName: row.file_name,
    admittedAt: row.admitted_at,
    transactionId: row.transaction_id,
    valueCents: row.value_cents,
  };
}

interface LockRow {
  holder: string;
  host: string;
  pid: number;
  since: number;
  heartbeat_at: number;
}

interface ClaimRow {
  order_id: string;
  batch_id: number;
  line: number;
  fence: number;
  state: string;
  request: string;
  attempts: number;
  not_found: number;
  last_sent_at: number | null;
  transaction_id: number | null;
  polls: number;
}

function toClaim(row: ClaimRow): Claim {
  return {
    orderId: row.order_id,
    batchId: row.batch_id,
    line: row.line,
    fence: row.fence,
    state: row.state as RowState,
    request: JSON.parse(row.request) as CashOutRequest,
    attempts: row.attempts,
    notFound: row.not_found,
    lastSentAt: row.last_sent_at,
    transactionId: row.transaction_id,
    polls: row.polls,
  };
}

interface PayoutRow extends ClaimRow {
  value_cents: number;
  gateway_status: string | null;
  message: string | null;
  fee: string | null;
  net: string | null;
  gateway_created_at: string | null;
  end_to_end_id: string | null;
  processed_at: string | null;
  lease_owner: string | null;
  lease_until: number | null;
}

function toPayout(row: PayoutRow): PayoutRecord {
  return {
    ...toClaim(row),
    batchId: row.batch_id,
    line: row.line,
    valueCents: row.value_cents,
    gatewayStatus: row.gateway_status,
    message: row.message,
    fee: row.fee,
    net: row.net,
    gatewayCreatedAt: row.gateway_created_at,
    endToEndId: row.end_to_end_id,
    processedAt: row.processed_at,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
  };
}
