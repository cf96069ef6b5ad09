/**
 * Deciding what a file's payouts are, against what the journal already holds
 * (DESIGN.md section 5): new, a replay of the same payout (send nothing, report its
 * state), or a conflict (same orderId, another payload: send nothing, report it), unless
 * the earlier one provably never reached the gateway.
 */
import { createHash } from 'node:crypto';
import type { CashOutRequest } from '../gateway/contract.js';
import { NEVER_REACHED_GATEWAY, type RowState } from './states.js';

/** What the journal holds for an orderId, as far as admission cares. */
export interface Known {
  payloadHash: string;
  state: RowState;
  batchId: number;
  line: number;
}

export type Admission =
  | { kind: 'new' }
  /** A payout the gateway never saw (held, or refused with another payload): this one replaces it. */
  | { kind: 'retry'; previous: Known }
  | { kind: 'replay'; previous: Known }
  | { kind: 'conflict'; previous: Known };

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

export function admit(hash: string, previous: Known | undefined): Admission {
  if (!previous) return { kind: 'new' };
  // Held rows never left: a new copy of their file takes them over, changed or not.
  if (previous.state === 'held') return { kind: 'retry', previous };
  // The same payout again, whatever became of it: report it, send nothing.
  if (previous.payloadHash === hash) return { kind: 'replay', previous };
  return NEVER_REACHED_GATEWAY.includes(previous.state)
    ? { kind: 'retry', previous }
    : { kind: 'conflict', previous };
}
