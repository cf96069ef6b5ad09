/**
 * Deciding what a file's payouts are, against what the journal already holds
 * (DESIGN.md section 5), one row at a time and never silently:
 * - an orderId already journaled from another file is never sent again and never counted
 *   as paid: the row is held naming that file, unless the earlier row is of an earlier
 *   batch of the same name and never reached the gateway (a fixed copy takes it over;
 *   one the gateway refused, only if the copy changed it);
 * - a row with the same document and amount as a payout of another file that may have
 *   moved money within duplicateWindow is held as a possible duplicate, for a person;
 * - anything else is new, and queued.
 */
import { createHash } from 'node:crypto';
import { formatCents } from '../csv/amount.js';
import type { CashOutRequest } from '../gateway/contract.js';
import { NEVER_REACHED_GATEWAY, RETRYABLE, type RowState } from './states.js';

/** What the journal holds for an orderId, as far as admission cares. */
export interface Known {
  payloadHash: string;
  state: RowState;
  batchId: number;
  line: number;
  fileName: string;
  /** When it was journaled (ms); null for rows journaled before this was kept. */
  admittedAt: number | null;
  /** Its batch has the name of the batch being admitted. */
  sameName: boolean;
}

/** A payout of another file with a row's document and amount, that may have moved money. */
export interface Covering {
  orderId: string;
  batchId: number;
  line: number;
  state: RowState;
  valueCents: number;
  fileName: string;
  admittedAt: number;
  transactionId: number | null;
}

export type Admission =
  | { kind: 'new' }
  /** A row of an earlier batch of this name the gateway never saw: this one replaces it. */
  | { kind: 'retry'; previous: Known; covering: Covering | undefined }
  /** Its orderId is another file's: held, never sent under it again. */
  | { kind: 'journaled'; previous: Known }
  | { kind: 'duplicate'; covering: Covering };

/** SHA-256 of the request as sent, with its keys in one order. */
export function payloadHash(request: CashOutRequest): string {
  const canonical = JSON.stringify([
    request.orderId,
    request.value,
    request.pixKeyType,
    request.pixKey,
    request.cpfCnpj,
    request.person.name,
    request.person.email,
    request.person.phone,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The document a row is compared by: `529.982.247-25` and `52998224725` are one person. */
export function documentKey(cpfCnpj: string): string {
  return cpfCnpj.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}

/** Rows of an earlier batch of the same name that a new copy may take over: never sent. */
const TAKEN_OVER: readonly RowState[] = [...NEVER_REACHED_GATEWAY, 'queued'];

/**
 * `hash` is the row's payloadHash: a row the gateway refused, again unchanged, is the
 * same request sent again, which only `payouts retry` does; changed, it is a fix.
 */
export function admit(
  previous: Known | undefined,
  covering: Covering | undefined,
  hash: string,
): Admission {
  if (previous) {
    const resent = previous.state === 'rejected' && previous.payloadHash === hash;
    return previous.sameName && TAKEN_OVER.includes(previous.state) && !resent
      ? { kind: 'retry', previous, covering }
      : { kind: 'journaled', previous };
  }
  return covering ? { kind: 'duplicate', covering } : { kind: 'new' };
}

/** `2026-10-05`, the day a payout was journaled (UTC). */
function day(ms: number | null): string {
  return ms === null ? 'an earlier run' : new Date(ms).toISOString().slice(0, 10);
}

export function journaledMessage(orderId: string, previous: Known, hintFlags = ''): string {
  const retry = RETRYABLE.includes(previous.state)
    ? `; to send that payment again on purpose, run: payouts retry ${orderId}${hintFlags}`
    : '';
  return `orderId ${orderId} is already journaled from ${previous.fileName}, line ${previous.line}, on ${day(previous.admittedAt)} (now ${previous.state}): not sent again${retry}. If this is another payment, give it an orderId of its own`;
}

/** Why a row is held as a possible duplicate, and the command that says it is new. */
export function duplicateMessage(covering: Covering, fileName: string, hintFlags = ''): string {
  const transaction =
    covering.transactionId === null ? '' : `, transaction ${covering.transactionId}`;
  return `possible duplicate: the same document and amount as ${covering.fileName}, line ${covering.line}, journaled on ${day(covering.admittedAt)} (now ${covering.state}${transaction}); not sent. If it is a new payment, run: payouts approve "${fileName}" --new-batch${hintFlags}`;
}

/** Why a row of a corrected copy is not sent: the batch it corrects has sent or paid it. */
export function coveredMessage(covering: Covering): string {
  const transaction =
    covering.transactionId === null ? '' : `, transaction ${covering.transactionId}`;
  const verb = covering.state === 'paid' ? 'paid' : 'sent';
  return `already ${verb} by ${covering.fileName}, line ${covering.line}, on ${day(covering.admittedAt)}${transaction}: not sent again`;
}

/** Why a row of a corrected copy is held: it changes a payout the batch it corrects made. */
export function changesPaidMessage(paid: Covering, valueCents: number): string {
  return `changes a row ${paid.fileName} already ${paid.state === 'paid' ? 'paid' : 'sent'} (line ${paid.line}, the same document, ${formatCents(paid.valueCents)} there, ${formatCents(valueCents)} here): not sent as a new payment; pay a difference in a file of its own`;
}

/** Why a row that repeats a failed payout unchanged is held, and what sends it again. */
export function failedBeforeMessage(failed: Covering, hintFlags = ''): string {
  const transaction = failed.transactionId === null ? '' : `, transaction ${failed.transactionId}`;
  return `repeats ${failed.fileName}, line ${failed.line} (orderId ${failed.orderId}${transaction}), which ${failed.state === 'rejected' ? 'the gateway refused' : `ended ${failed.state} at the gateway`}: a failed payout is not sent again because a file repeats it; to send it again on purpose, run: payouts retry ${failed.orderId}${hintFlags}`;
}
