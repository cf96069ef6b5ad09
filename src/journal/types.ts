/**
 * The journal's domain types, shared by every implementation of `Journal`.
 *
 * Terminology:
 * - a *file* is what arrives in the inbox, a CSV of an accountant's;
 * - a *batch* is a file as the journal keeps it (one per arrival), in a `BatchState`;
 * - a *line* is one line of a file, by its number; a *row* is a line that holds a record
 *   (not a heading, a blank or a total line);
 * - a *payout* is a valid row, journaled under its orderId, in a `RowState`; a line that
 *   is not a payout of its own (invalid, skipped, an orderId of another file) is kept as
 *   a `BatchLine` of a `LineKind`;
 * - an *attempt* is one cash-out request for a payout; a *claim* is a process's
 *   right, under a lease and a fence, to make one or to follow its answer;
 * - a *line outcome* is what became of a line: its payout's state, or its line's kind;
 * - the *journal* is what records every batch, payout and move; the *inbox* is the
 *   folder files arrive in.
 */
import type { CashOutRequest } from '../gateway/contract.js';
import type { Said } from '../messages/said.js';
import type { Admission } from './admission.js';
import type { BatchState } from './batch-states.js';
import type { HoldReason, RowState } from './states.js';

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
  heldBecause: Said | null;
  /** Its name as it names a payroll (copy marks dropped); null for batches of old journals. */
  nameKey: string | null;
  /** Its number among the batches of that name (1 for the first). */
  nameNumber: number;
  /** The home's short identity its derived orderIds carry; null for batches from before. */
  orderIdHome: string | null;
  /** Its result file's name in results/, once chosen (see resultName). */
  resultName: string | null;
}

/**
 * What a line that is not a payout of its own is. `superseded`: a row a later file took
 * over (it was held or refused, never sent). `held`: its orderId is journaled from
 * another file: never sent under it again. `covered`: the same, in a corrected copy, of a
 * payout the file it corrects made. `replay` and `conflict`: written by earlier versions,
 * read as they were.
 */
export type LineKind =
  'invalid' | 'skipped' | 'held' | 'covered' | 'replay' | 'conflict' | 'superseded';

/** What became of a line: its payout's state, or the kind of line it is. */
export type LineOutcome = RowState | LineKind;

/** A file as it is read, to find or make its batch (see `batchForFile`). */
export interface ArrivingFile {
  name: string;
  /** Its name as it names a payroll (copy marks dropped). */
  nameKey: string;
  sha256: string;
  /** Just arrived in the inbox (not left in processing/ by an earlier run). */
  arrived: boolean;
}

/** The batch for a file's bytes: a new one, an admission to resume, or the one they made. */
export interface BatchOfFile {
  kind: 'new' | 'resume' | 'same-file';
  batchId: number;
  nameNumber: number;
  /** What its derived orderIds carry (see BatchRecord). */
  orderIdHome: string | null;
}

/** A line of a file that is not a payout of its own. */
export interface BatchLine {
  line: number;
  kind: LineKind;
  orderId: string | null;
  column: string | null;
  message: string;
  /** The message as a value (an invalid, skipped or held line): said in the reader's language. */
  said?: Said | null;
  /** The row's name and amount, for its result line (none for a total line). */
  name?: string | null;
  valueCents?: number | null;
  /** The amount as written, when it could not be read as one. */
  valueWritten?: string | null;
  /** An invalid row's document, key type and key, as written. */
  cpfCnpj?: string | null;
  pixKeyType?: string | null;
  pixKey?: string | null;
}

export interface PayoutInput {
  line: number;
  request: CashOutRequest;
  /** An earlier line of its file with the same content: held until a person confirms. */
  identicalTo?: number;
  /** The payment's reference as compared (readReference), when its file gives one. */
  reference?: string | undefined;
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
}

/** A person's decision about a batch. */
export interface BatchEvent {
  at: number;
  /** `approved`, `refused`, `released`, `corrects`, `retried`, `replaced` (by a corrected copy). */
  event: string;
  by: string;
  /** What they decided, said where it is shown (a person's words as written: `english`). */
  detail: Said;
}

/** Held rows of a batch by reason: how many, and what one of them says. */
export interface HoldSummary {
  reason: HoldReason | null;
  rows: number;
  cents: number;
  message: string | null;
  /** That message as a value, where the journal has it. */
  said: Said | null;
}

/** A held row of a batch, and the payout of another file it repeats, if any. */
export interface HeldRow {
  orderId: string;
  line: number;
  name: string;
  cents: number;
  reason: HoldReason | null;
  message: string | null;
  said: Said | null;
  /** The payout it repeats (a possible duplicate's, a failed one's), as it is now. */
  repeats: {
    orderId: string;
    batchId: number;
    fileName: string;
    line: number;
    at: number | null;
    state: RowState;
  } | null;
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
  /** Why a rule holds it, as a value beside `message`, where the journal has it. */
  said: Said | null;
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
  /** The command holding it (`run`, `watch`); null for a holder of an older version. */
  command: string | null;
  since: number;
  heartbeatAt: number;
}

/** What the journal knows of the hosts at work on it, by its own clock (`hostsSeen`). */
export interface HostsSeen {
  /** The journal's clock when it was read. */
  now: number;
  /**
   * Each host's last sight since the window began (a lock taken, waited for or renewed, a
   * clock measured), how far its clock read from the journal's at its last reading (null:
   * not measured, or that reading's round trip was too slow to tell) and that round trip.
   */
  hosts: {
    host: string;
    seenAt: number;
    clockOffsetMs: number | null;
    clockRoundTripMs: number | null;
  }[];
  /** Each lock's holder. */
  locks: { name: string; holder: string; host: string; heartbeatAt: number }[];
  /** Rows under a lease not yet ended, by the process that claimed them (`host:pid:tag`). */
  leases: { owner: string; rows: number; until: number }[];
}

/**
 * What one host takes for itself on a journal several hosts work on: an inbox file, by
 * its bytes, while it is taken and read into a batch; a batch, while it is finished.
 */
export type WorkClaim =
  { kind: 'file'; name: string; size: number; sha256: string } | { kind: 'batch'; batchId: number };

/** What a host sending must keep to (`lookAtGateway`), by the journal's clock. */
export interface GatewaySight {
  /** How long the gateway's pause still runs (0: none). */
  pausedForMs: number;
  /** The other hosts sending, by name. */
  others: string[];
  /**
   * True when this host was not sending a moment before (its first look, or the first after
   * a gap): the others learn of it only at their next look.
   */
  joined: boolean;
}

/** Rows of a batch per state (other lines per kind), and their cents. */
export interface RowTotals {
  rows: Partial<Record<LineOutcome, number>>;
  cents: Partial<Record<LineOutcome, number>>;
}

/** One input line as the result file shows it: a payout, or a line that is not one. */
/**
 * What a result line shows of a payout's request: who is paid, by which key, how much.
 * Not the contacts the gateway needs: reading them took a sixth of a large result's time.
 */
export interface ResultRequest {
  value: number;
  pixKeyType: CashOutRequest['pixKeyType'];
  pixKey: string;
  cpfCnpj: string;
  person: { name: string };
}

/** A payout as its result line shows it: no lease, fence or schedule. */
export type ResultPayout = { request: ResultRequest } & Pick<
  PayoutRecord,
  | 'orderId'
  | 'valueCents'
  | 'state'
  | 'transactionId'
  | 'message'
  | 'said'
  | 'fee'
  | 'net'
  | 'gatewayCreatedAt'
  | 'endToEndId'
  | 'processedAt'
>;

export interface ResultEntry {
  line: number;
  kind: 'payout' | LineKind;
  orderId: string | null;
  /** The payout, or for a replay the payout it repeats; null for other lines. */
  payout: ResultPayout | null;
  /** Why a line is not a payout of its own (invalid, skipped, replay, conflict). */
  note: string | null;
  column: string | null;
  /** A line's own name and amount (null for a payout, whose request has them). */
  name: string | null;
  valueCents: number | null;
  valueWritten: string | null;
  /** An invalid line's document, key type and key, as written (see BatchLine). */
  cpfCnpj: string | null;
  pixKeyType: string | null;
  pixKey: string | null;
  /** A line's message as a value, where the journal has it (see BatchLine). */
  said: Said | null;
  /**
   * For a covered row or line, the payout that covered it, as it is now: a row covered by
   * a payout that was returned (refunded) or failed was not paid after all.
   */
  cover: { orderId: string; state: RowState; fileName: string; line: number } | null;
  /** The state now of the payout a row repeats or is covered by (`coveredBy`), if any. */
  repeatsState: RowState | null;
}

/** A payout as a report lists its payee: its request's name, document, key and amount. */
export interface PayeeEntry {
  line: number;
  name: string;
  cpfCnpj: string;
  pixKey: string;
  valueCents: number;
  state: RowState;
  message: string | null;
  said: Said | null;
}

export interface AuditEntry {
  at: number;
  from: RowState | null;
  to: RowState;
  /** Why it moved, said where it is shown (English as the caller wrote it: `english`). */
  reason: Said;
}

/** Which journal this is, and since when it is recovering from a lost one. */
/**
 * What a store answers of a journal's place: none there, one with nothing in it, or one;
 * `no-store`: the store itself is not there and payouts may not make it (a database dropped).
 */
export type JournalState = 'absent' | 'no-store' | 'empty' | 'present';

export interface JournalIdentity {
  journalId: string;
  createdAt: number;
  /** When a person chose recovery after a loss: every first send is looked up first. */
  recoverySince: number | null;
  recoveryReason: string | null;
}

/** Queued payouts of a batch never sent from this journal, looked up before its first send. */
export interface FirstSendSample {
  batchId: number;
  fileName: string;
  /** Each with its orderIds as the batches of its name a restored journal may have forgotten. */
  payouts: { orderId: string; line: number; forgotten: string[] }[];
}

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
      /** Why it is held, not sent: another file's payout has paid that person that amount since. */
      held: Said | null;
    }
  /** It did not definitely fail (paid, pending, or already sent again as `retriedAs`). */
  | { kind: 'not-failed'; orderId: string; state: RowState; retriedAs?: string }
  | { kind: 'absent'; orderId: string };
