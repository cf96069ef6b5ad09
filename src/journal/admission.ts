/**
 * Deciding what a file's payouts are, against what the journal already holds
 * (docs/who-is-paid.md), one row at a time and never silently:
 * - an orderId already journaled from another file is never sent again and never counted
 *   as paid: the row is held naming that file, unless the earlier row is of an earlier
 *   batch of the same name and never reached the gateway (a fixed copy takes it over;
 *   one the gateway refused, only if the copy changed it);
 * - a row with the same document and amount as a payout of another file that may have
 *   moved money within duplicateWindow is held as a possible duplicate, for a person;
 *   with a reference, the same document and reference at any age instead (isPeriod: a
 *   month with the amount too), and the window only against payouts without one;
 * - anything else is new, and queued.
 */
import { createHash } from 'node:crypto';
import type { CashOutRequest } from '../gateway/contract.js';
import { foldText } from '../csv/fold.js';
import { commandTarget, givenName } from '../csv/given-name.js';
import type { Said } from '../messages/said.js';
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
  /** Its reference (readReference), null when its row gave none. */
  reference: string | null;
}

export type Admission =
  | { kind: 'new' }
  /** A row of an earlier batch of this name the gateway never saw: this one replaces it. */
  | { kind: 'retry'; previous: Known; covering: Covering | undefined }
  /** Its orderId is another file's: held, never sent under it again. */
  | { kind: 'journaled'; previous: Known }
  | { kind: 'duplicate'; covering: Covering };

/**
 * The first 64 bits of the SHA-256 of the request as sent, with its keys in one order, as
 * 16 hex digits: it only tells an orderId's payload from its own earlier one, so 64 bits
 * are plenty, and the journal keeps them as 8 bytes (migration 17).
 */
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
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
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

/**
 * Why a row is held by these rules, as values the journal keeps beside their English
 * (the catalogs say them: en.ts is the English the journal, logs and `--json` read).
 */
export function journaledSaid(orderId: string, previous: Known): Said {
  return {
    code: 'heldJournaled',
    orderId,
    file: previous.fileName,
    line: previous.line,
    at: previous.admittedAt,
    state: previous.state,
    retry: RETRYABLE.includes(previous.state),
    hintFlags: '',
  };
}

/**
 * Why a row is held as a possible duplicate, and the command that says it is new: by its
 * reference when it gives the one of the payout it repeats, else by its amount.
 */
export function duplicateSaid(
  covering: Covering,
  batch: NamedBatch,
  row: { cents: number; reference: string | null | undefined },
): Said {
  const target = commandTarget(batch.fileName, batch.id);
  if (row.reference && row.reference === covering.reference) {
    return {
      code: 'heldSameReference',
      reference: row.reference,
      file: givenName(covering.fileName),
      line: covering.line,
      at: covering.admittedAt,
      state: covering.state,
      transactionId: covering.transactionId,
      paidCents: covering.valueCents,
      cents: row.cents,
      newFile: target.file,
      hintFlags: target.hintFlags,
    };
  }
  return {
    code: 'heldDuplicate',
    file: givenName(covering.fileName),
    line: covering.line,
    at: covering.admittedAt,
    state: covering.state,
    transactionId: covering.transactionId,
    newFile: target.file,
    hintFlags: target.hintFlags,
  };
}

/** A batch as the commands the tool prints name it (see commandTarget). */
export interface NamedBatch {
  id: number;
  fileName: string;
}

/** Why a row of a corrected copy is not sent: the batch it corrects has sent or paid it. */
export function coveredSaid(covering: Covering): Said {
  return {
    code: 'heldCovered',
    file: covering.fileName,
    line: covering.line,
    at: covering.admittedAt,
    state: covering.state,
    transactionId: covering.transactionId,
  };
}

/** Why a row of a corrected copy is held: it changes a payout the batch it corrects made. */
export function changesPaidSaid(paid: Covering, valueCents: number): Said {
  return {
    code: 'heldChangesPaid',
    file: paid.fileName,
    line: paid.line,
    state: paid.state,
    paidCents: paid.valueCents,
    cents: valueCents,
  };
}

/** Where a payout's money goes, and to whom. */
export interface Payee {
  pixKey: string;
  name: string;
}

/** Whether a row pays someone else than a payout did: another Pix key, or another name (`João` is `Joao`). */
export function changesPayee(paid: Payee, row: Payee): boolean {
  return paid.pixKey !== row.pixKey || foldText(paid.name) !== foldText(row.name);
}

/** Why a row of a corrected copy is held: it pays another key or name than the payout it repeats. */
export function changesPayeeSaid(
  paid: Covering,
  paidPayee: Payee,
  row: Payee,
  batch: NamedBatch,
): Said {
  const target = commandTarget(batch.fileName, batch.id);
  return {
    code: 'heldChangesPayee',
    file: paid.fileName,
    line: paid.line,
    at: paid.admittedAt,
    state: paid.state,
    transactionId: paid.transactionId,
    cents: paid.valueCents,
    paidKey: paidPayee.pixKey,
    paidName: paidPayee.name,
    key: row.pixKey,
    name: row.name,
    newFile: target.file,
    hintFlags: target.hintFlags,
  };
}

/** Why a row that repeats a failed payout unchanged is held, and what sends it again. */
export function failedBeforeSaid(failed: Covering): Said {
  return {
    code: 'heldFailedBefore',
    file: failed.fileName,
    line: failed.line,
    orderId: failed.orderId,
    transactionId: failed.transactionId,
    state: failed.state,
    hintFlags: '',
  };
}
