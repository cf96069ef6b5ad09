/**
 * What an answer means for a row: pure functions from the gateway's answer (or error)
 * to the journal move to make, and to what the run must do next. The engine applies
 * them; nothing here talks to the journal or the network.
 */
import type { CashOut, CashOutRequest, Transaction } from '../gateway/contract.js';
import { needsTheOperator, type GatewayError } from '../gateway/errors.js';
import type { GatewayStatus } from '../gateway/status.js';
import type { AnswerDetails } from '../journal/journal.js';
import type { RowState } from '../journal/states.js';

/** What the run as a whole must do after an answer. */
export type RunSignal =
  | { kind: 'continue' }
  /** Nothing more may be sent this run (401/403, or an address that is not the gateway). */
  | { kind: 'stop'; why: string }
  /** The gateway asks for less: every sender waits this long (429). */
  | { kind: 'pause'; ms: number | undefined }
  /** Nothing reached the gateway: this row waits its back-off, then goes again. */
  | { kind: 'retry-later' };

export interface Decision {
  to: RowState;
  reason: string;
  details: AnswerDetails;
  signal: RunSignal;
}

const CONTINUE: RunSignal = { kind: 'continue' };

/** Why a row stays pending on a status word we do not know. */
export function unknownWordMessage(word: string): string {
  return `the gateway answered status "${word}", which payouts does not know: kept verbatim, and the row stays pending; ask the gateway what it means if it lasts`;
}

/** A gateway status as a row state: an unrecognised word is kept, and not final. */
function stateOf(status: GatewayStatus): RowState {
  return status === 'unrecognised' ? 'pending' : status;
}

/** What a create's answer means for its row, and for the run's count of payouts sent. */
export interface SendDecision extends Decision {
  /** The gateway answered with the payout's transaction; an unclear answer is not, until found. */
  created: boolean;
}

/** The answer to a create (a cash-out, or the error it failed with). */
export function decideSend(answer: CashOut | GatewayError): SendDecision {
  if ('kind' in answer) return { ...decideFailedSend(answer), created: false };
  return {
    to: stateOf(answer.status),
    reason: `created as transaction ${answer.transactionId} (status ${answer.statusRaw})`,
    details: {
      transactionId: answer.transactionId,
      gatewayStatus: answer.statusRaw,
      fee: answer.fee,
      net: answer.net,
      gatewayCreatedAt: answer.createdAt,
      message: answer.description,
    },
    signal: CONTINUE,
    created: true,
  };
}

/** A create that failed: nothing was created, or nothing clear is known of it. */
function decideFailedSend(error: GatewayError): Decision {
  switch (error.kind) {
    case 'rejected':
      return {
        to: 'rejected',
        reason: error.message,
        details: { message: error.message },
        signal: CONTINUE,
      };
    case 'auth':
      // A refused token created nothing: the row waits for the next run.
      return {
        to: 'queued',
        reason: `not sent: ${error.message}`,
        details: {},
        signal: { kind: 'stop', why: stopBecause(error) },
      };
    case 'rate-limited':
      return {
        to: 'queued',
        reason: `not created: ${error.message}`,
        details: {},
        signal: { kind: 'pause', ms: error.retryAfterMs },
      };
    case 'unavailable':
      return {
        to: 'queued',
        reason: `not sent: ${error.message}`,
        details: {},
        signal: { kind: 'retry-later' },
      };
    case 'wrong-endpoint':
      return {
        to: 'unknown',
        reason: `no clear answer: ${error.message}`,
        details: { message: error.message },
        signal: { kind: 'stop', why: stopBecause(error) },
      };
    case 'ambiguous':
    case 'not-found':
      return {
        to: 'unknown',
        reason: `no clear answer: ${error.message}`,
        details: { message: error.message },
        signal: CONTINUE,
      };
  }
}

export type LookupDecision =
  /** Found: the row takes the transaction's state. */
  | { kind: 'adopt'; decision: Decision }
  /** Not found: counted; the row may be sent again once `mayResend` says so. */
  | { kind: 'not-found'; notFound: number }
  /** Nothing learnt: the row stays unknown, for a later lookup. */
  | { kind: 'keep'; message: string; signal: RunSignal }
  /** The gateway holds something else under this orderId: a person must look. */
  | { kind: 'conflict'; message: string };

/**
 * What a failed read (a lookup or a poll) means for the run: credentials refused or an
 * address that is not the gateway stop it; a 429 pauses it; anything else is tried later.
 */
/** Why a run stops for this error, and what the operator does about it. */
function stopBecause(error: GatewayError): string {
  return error.kind === 'auth'
    ? `the gateway refused our credentials (${error.message}): check the token (PAYOUTS_TOKEN) and authScheme`
    : `the address answered, but not as the gateway does (${error.message}): check baseUrl`;
}

function readFailureSignal(error: GatewayError): RunSignal {
  if (needsTheOperator(error)) {
    return { kind: 'stop', why: stopBecause(error) };
  }
  if (error.kind === 'rate-limited') return { kind: 'pause', ms: error.retryAfterMs };
  return CONTINUE;
}

/** The answer to a lookup by orderId of a row whose create had no clear answer. */
export function decideLookup(
  request: CashOutRequest,
  answer: Transaction | GatewayError,
  notFoundSoFar: number,
): LookupDecision {
  if ('kind' in answer) {
    if (answer.kind === 'not-found') return { kind: 'not-found', notFound: notFoundSoFar + 1 };
    return {
      kind: 'keep',
      message: `lookup failed: ${answer.message}`,
      signal: readFailureSignal(answer),
    };
  }
  // Our orderId on something that is not this payout must not be adopted as it.
  if (answer.object === 'cashin' || answer.valueCents !== request.value) {
    return {
      kind: 'conflict',
      message: `orderId ${request.orderId} is on transaction ${answer.transactionId} (${answer.object}, ${answer.valueCents} cents), not on this payout of ${request.value} cents: a person must look`,
    };
  }
  return {
    kind: 'adopt',
    decision: {
      to: stateOf(answer.status),
      reason: `found by lookup: transaction ${answer.transactionId} (status ${answer.statusRaw})`,
      details: {
        transactionId: answer.transactionId,
        gatewayStatus: answer.statusRaw,
        endToEndId: answer.endToEndId,
        processedAt: answer.processedAt,
        message: null,
        notFound: 0,
      },
      signal: CONTINUE,
    },
  };
}

/** What a lookup before a batch's first send says of the journal. */
export type FirstSendLookup =
  /** The gateway has no payout of this orderId: nothing of it was sent. */
  | { kind: 'absent' }
  /** The gateway has it, and this journal never sent it: the journal is behind. */
  | { kind: 'found'; transactionId: number; statusRaw: string }
  /** Nothing learnt: the batch waits for a lookup that gets through. */
  | { kind: 'unanswered'; message: string; signal: RunSignal };

/** The answer to a lookup, by orderId, of a payout this journal never sent. */
export function decideFirstSendLookup(answer: Transaction | GatewayError): FirstSendLookup {
  if (!('kind' in answer)) {
    return { kind: 'found', transactionId: answer.transactionId, statusRaw: answer.statusRaw };
  }
  if (answer.kind === 'not-found') return { kind: 'absent' };
  return { kind: 'unanswered', message: answer.message, signal: readFailureSignal(answer) };
}

/**
 * The answer to a poll of a pending payout by its transactionId. Only the gateway's GET
 * answer moves a row on; an unrecognised status word keeps it pending, verbatim.
 */
export function decidePoll(
  request: CashOutRequest,
  transactionId: number,
  answer: Transaction | GatewayError,
): Decision {
  if ('kind' in answer) {
    const message = `last poll failed: ${answer.message}`;
    return {
      to: 'pending',
      reason: message,
      // Said in the row (status, result file) until a poll gets through.
      details: { message, pollFailed: true },
      signal: readFailureSignal(answer),
    };
  }
  if (
    answer.object === 'cashin' ||
    answer.valueCents !== request.value ||
    (answer.orderId !== null && answer.orderId !== request.orderId)
  ) {
    const message = `transaction ${transactionId} now reads as ${answer.object} ${answer.orderId ?? '(no orderId)'} of ${answer.valueCents} cents, not this payout of ${request.value} cents: a person must look`;
    return { to: 'conflict', reason: message, details: { message }, signal: CONTINUE };
  }
  const details: AnswerDetails = {
    gatewayStatus: answer.statusRaw,
    endToEndId: answer.endToEndId,
    processedAt: answer.processedAt,
    pollFailed: false,
  };
  return {
    to: stateOf(answer.status),
    reason: `polled: status ${answer.statusRaw}`,
    // A word we do not know is said in the row itself (status, result file), where a
    // --quiet cron run cannot hide it; like a failed poll's, the next known answer clears it.
    details:
      answer.status === 'unrecognised'
        ? { ...details, message: unknownWordMessage(answer.statusRaw), pollFailed: true }
        : details,
    signal: CONTINUE,
  };
}
