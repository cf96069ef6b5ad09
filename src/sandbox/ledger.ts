/**
 * The sandbox's books: every transaction it created, the balance, and the outcome
 * each cash-out is headed for. No I/O here; the server drives time and randomness.
 */
import type { z } from 'zod';
import type {
  BalanceResponse,
  CashInRequest,
  CashOutRequest,
  CashOutResponse,
  TransactionResponse,
} from '../gateway/contract.js';
import { statusCode, statusWord, type PayoutStatus } from '../gateway/status.js';

export interface LedgerEntry {
  transactionId: number;
  externalId: string;
  object: 'cashout' | 'cashin';
  orderId: string | null;
  valueCents: number;
  pixKey: string | null;
  status: PayoutStatus;
  /** A word shown instead of the status's own (still pending underneath). */
  statusWord: string | null;
  createdAt: string;
  processedAt: string;
  endToEndId: string;
  postbackUrl: string | null;
}

/** A status word outside the interface's table: the payout is still pending under it. */
const UNKNOWN_WORD = 'in_review';
export type SettlementStep = PayoutStatus | typeof UNKNOWN_WORD;

/** The sandbox's flat fee, in reais as text, the way `tax` comes back. */
const FEE_CENTS = 50;

/**
 * Documented test keys: an e-mail key whose local part is `fail`, `cancel` or `refund`
 * (optionally with a `+tag`) settles to failed, canceled, or paid then refunded.
 * `review` first shows the status word `in_review`, which the interface does not name
 * (a gateway may have words we do not know), then settles to paid.
 * Every other key settles to paid.
 */
export function plannedStatuses(pixKey: string): SettlementStep[] {
  const local = /^([a-z]+)(\+[^@]*)?@/i.exec(pixKey)?.[1]?.toLowerCase();
  if (local === 'review') return [UNKNOWN_WORD, 'paid'];
  if (local === 'fail') return ['failed'];
  if (local === 'cancel') return ['canceled'];
  if (local === 'refund') return ['paid', 'refunded'];
  return ['paid'];
}

function reais(cents: number): string {
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function hex(random: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += Math.floor(random() * 16).toString(16);
  return text;
}

/** A version-4-shaped UUID from the seeded generator, so a run can be replayed. */
function uuid(random: () => number): string {
  const h = hex(random, 30);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(12, 15)}-a${h.slice(15, 18)}-${h.slice(18, 30)}`;
}

function endToEndId(at: Date, random: () => number): string {
  const stamp = at.toISOString().replace(/\D/g, '').slice(0, 12);
  return `E00000000${stamp}${hex(random, 11)}`;
}

export function createLedger(options: {
  initialBalanceCents: number;
  /** Debited from the balance with each cash-out, beside its value (a contract's Pix fee). */
  feeDebitCents?: number;
  dedupeOrderIds: boolean;
  /** Seeded source of the identifiers the sandbox makes up. */
  random: () => number;
}) {
  const entries: LedgerEntry[] = [];
  const byId = new Map<number, LedgerEntry>();
  let balanceCents = options.initialBalanceCents;
  let nextId = 1001;

  function add(
    entry: Omit<
      LedgerEntry,
      | 'transactionId'
      | 'externalId'
      | 'status'
      | 'statusWord'
      | 'createdAt'
      | 'processedAt'
      | 'endToEndId'
    >,
    now: Date,
  ): LedgerEntry {
    const stored: LedgerEntry = {
      ...entry,
      transactionId: nextId++,
      externalId: uuid(options.random),
      status: 'pending',
      statusWord: null,
      createdAt: now.toISOString(),
      // No zone designator, as the interface writes it.
      processedAt: now.toISOString().slice(0, -1),
      endToEndId: endToEndId(now, options.random),
    };
    entries.push(stored);
    byId.set(stored.transactionId, stored);
    return stored;
  }

  return {
    entries: (): readonly LedgerEntry[] => entries,

    findById: (transactionId: number) => byId.get(transactionId),

    /** The first transaction created with this orderId (the sandbox may hold several). */
    findByOrderId: (orderId: string) => entries.find((e) => e.orderId === orderId),

    /**
     * Creates a cash-out and debits the balance. Returns an existing transaction only
     * when deduplication was asked for; a refusal is a message for a 400.
     */
    createCashOut(
      request: CashOutRequest,
      now: Date,
    ): { entry: LedgerEntry; created: boolean } | { refused: string } {
      if (options.dedupeOrderIds) {
        const existing = entries.find(
          (e) => e.object === 'cashout' && e.orderId === request.orderId,
        );
        if (existing) return { entry: existing, created: false };
      }
      const debit = request.value + (options.feeDebitCents ?? 0);
      if (debit > balanceCents) return { refused: 'Insufficient balance' };
      balanceCents -= debit;
      const entry = add(
        {
          object: 'cashout',
          orderId: request.orderId,
          valueCents: request.value,
          pixKey: request.pixKey,
          postbackUrl: request.postbackUrl ?? null,
        },
        now,
      );
      return { entry, created: true };
    },

    createCashIn(request: CashInRequest, now: Date): LedgerEntry {
      return add(
        {
          object: 'cashin',
          orderId: request.orderId ?? null,
          valueCents: request.value,
          pixKey: null,
          postbackUrl: request.postbackUrl ?? null,
        },
        now,
      );
    },

    /** Moves a transaction on and keeps the balance true to it. */
    settle(entry: LedgerEntry, step: SettlementStep, now: Date): void {
      if (step === UNKNOWN_WORD) {
        entry.statusWord = step;
        return;
      }
      const status = step;
      entry.statusWord = null;
      const returned = entry.object === 'cashout' && status !== 'paid';
      const received = entry.object === 'cashin' && status === 'paid';
      if (returned || received) balanceCents += entry.valueCents;
      entry.status = status;
      entry.processedAt = now.toISOString().slice(0, -1);
    },

    balance(): z.input<typeof BalanceResponse> {
      return { balance: balanceCents, retention: 0, toAnticipate: 0, finalBalance: balanceCents };
    },
  };
}
export type Ledger = ReturnType<typeof createLedger>;

export function cashOutAnswer(entry: LedgerEntry): z.input<typeof CashOutResponse> {
  const fee = Math.min(FEE_CENTS, entry.valueCents);
  return {
    transactionId: entry.transactionId,
    orderId: entry.orderId ?? '',
    gross: entry.valueCents,
    tax: reais(fee),
    liquid: reais(entry.valueCents - fee),
    status: statusCode(entry.status),
    createdAt: entry.createdAt,
    success: 'true',
    description: null,
  };
}

export function transactionAnswer(entry: LedgerEntry): z.input<typeof TransactionResponse> {
  return {
    transactionId: entry.transactionId,
    orderId: entry.orderId ?? '',
    object: entry.object,
    status: entry.statusWord ?? statusWord(entry.status),
    method: 'pix',
    value: entry.valueCents,
    endToEndId: entry.endToEndId,
    processedAt: entry.processedAt,
  };
}
