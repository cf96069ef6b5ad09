import { describe, expect, it } from 'vitest';
import type { CashOut, CashOutRequest, Transaction } from '../../src/gateway/contract.js';
import { GatewayError, type GatewayErrorKind } from '../../src/gateway/errors.js';
import {
  decideFirstSendLookup,
  decideLookup,
  decidePoll,
  decideSend,
} from '../../src/engine/decisions.js';

const request: CashOutRequest = {
  value: 1000,
  pixKeyType: 0,
  pixKey: '52998224725',
  cpfCnpj: '52998224725',
  person: { name: 'Ana', email: 'ana@example.com', phone: '+5511987654321' },
  orderId: 'p-1',
};

const cashOut = (status: CashOut['status'], statusRaw: string): CashOut => ({
  transactionId: 7,
  orderId: 'p-1',
  grossCents: 1000,
  fee: '0.50',
  net: '9.50',
  status,
  statusRaw,
  createdAt: '2026-11-23T12:00:00.000Z',
  success: true,
  description: null,
});

const error = (kind: GatewayErrorKind, retryAfterMs?: number) =>
  new GatewayError(
    kind,
    'createCashOut',
    `createCashOut: ${kind}`,
    retryAfterMs === undefined ? {} : { retryAfterMs },
  );

describe('decideSend', () => {
  it.each([
    [cashOut('pending', '0'), 'pending', 'continue', true],
    [cashOut('paid', '1'), 'paid', 'continue', true],
    [cashOut('failed', '2'), 'failed', 'continue', true],
    [cashOut('unrecognised', '9'), 'pending', 'continue', true],
    [error('rejected'), 'rejected', 'continue', false],
    [error('auth'), 'queued', 'stop', false],
    [error('rate-limited', 3000), 'queued', 'pause', false],
    [error('unavailable'), 'queued', 'retry-later', false],
    [error('ambiguous'), 'unknown', 'continue', false],
    [error('wrong-endpoint'), 'unknown', 'stop', false],
  ] as const)('%#: -> %s, run %s, created %s', (answer, to, signal, created) => {
    const decision = decideSend(answer);
    expect(decision.to).toBe(to);
    expect(decision.signal.kind).toBe(signal);
    expect(decision.created).toBe(created);
  });

  it('records the answer verbatim: transactionId, status text, fee and net', () => {
    expect(decideSend(cashOut('pending', '0')).details).toEqual({
      transactionId: 7,
      gatewayStatus: '0',
      fee: '0.50',
      net: '9.50',
      gatewayCreatedAt: '2026-11-23T12:00:00.000Z',
      message: null,
    });
    expect(decideSend(error('rate-limited', 3000)).signal).toEqual({ kind: 'pause', ms: 3000 });
  });
});

/** A retrieved transaction: payout p-1 of 1000 cents, paid. */
const transaction = (overrides: Partial<Transaction> = {}): Transaction => ({
  transactionId: 7,
  orderId: 'p-1',
  object: 'cashout',
  method: 'pix',
  valueCents: 1000,
  status: 'paid',
  statusRaw: 'paid',
  endToEndId: 'E1',
  processedAt: '2026-11-23T12:00:00.000',
  ...overrides,
});

describe('decideFirstSendLookup: a payout this journal never sent, asked before its batch is sent', () => {
  it('found: the journal is behind the gateway', () => {
    expect(decideFirstSendLookup(transaction())).toEqual({
      kind: 'found',
      transactionId: 7,
      statusRaw: 'paid',
    });
  });

  it.each([
    ['not-found', 'absent', undefined],
    ['ambiguous', 'unanswered', 'continue'],
    ['unavailable', 'unanswered', 'continue'],
    ['rate-limited', 'unanswered', 'pause'],
    ['auth', 'unanswered', 'stop'],
    ['wrong-endpoint', 'unanswered', 'stop'],
  ] as const)('%s: %s, run %s', (kind, answer, signal) => {
    const lookup = decideFirstSendLookup(error(kind));
    expect(lookup.kind).toBe(answer);
    if (lookup.kind === 'unanswered') expect(lookup.signal.kind).toBe(signal);
  });
});

describe('decideLookup', () => {
  it('adopts the transaction it finds', () => {
    const decision = decideLookup(request, transaction(), 1);
    expect(decision).toMatchObject({
      kind: 'adopt',
      decision: { to: 'paid', details: { transactionId: 7, endToEndId: 'E1', notFound: 0 } },
    });
  });

  it('counts not-found answers', () => {
    expect(decideLookup(request, error('not-found'), 1)).toEqual({
      kind: 'not-found',
      notFound: 2,
    });
  });

  it('a status word we do not know is said in the row (its result line), and cleared once a known one comes', () => {
    const odd = decidePoll(
      request,
      7,
      transaction({ status: 'unrecognised', statusRaw: 'in_review' }),
    );
    expect(odd.details.message).toMatch(/status "in_review", which payouts does not know/);
    // Said like a failed poll: the next answer that reads clears it.
    expect(odd.details.pollFailed).toBe(true);
    const known = decidePoll(request, 7, transaction({ status: 'pending', statusRaw: 'pending' }));
    expect(known.details.pollFailed).toBe(false);
    expect(known.details.message).toBeUndefined();
  });

  it.each([
    ['another amount', transaction({ valueCents: 999 })],
    ['a cash-in', transaction({ object: 'cashin' })],
  ])('never adopts %s under our orderId: a conflict for a person', (_name, answer) => {
    const decision = decideLookup(request, answer, 0);
    expect(decision.kind).toBe('conflict');
  });

  it.each([
    ['ambiguous', 'continue'],
    ['unavailable', 'continue'],
    ['rate-limited', 'pause'],
    ['auth', 'stop'],
    ['wrong-endpoint', 'stop'],
  ] as const)('keeps the row unknown when the lookup fails (%s): run %s', (kind, signal) => {
    const decision = decideLookup(request, error(kind), 0);
    expect(decision.kind).toBe('keep');
    if (decision.kind === 'keep') expect(decision.signal.kind).toBe(signal);
  });
});

describe('decidePoll', () => {
  it.each([
    ['paid', 'paid', 'paid'],
    ['failed', 'failed', 'failed'],
    ['canceled', 'canceled', 'canceled'],
    ['refunded', 'refund', 'refunded'],
    ['pending', 'pending', 'pending'],
    // Not a word we know: kept verbatim, and the row stays pending.
    ['unrecognised', 'in_review', 'pending'],
  ] as const)('status %s (%s on the wire) moves the row to %s', (status, statusRaw, to) => {
    const decision = decidePoll(request, 7, transaction({ status, statusRaw }));
    expect(decision).toMatchObject({
      to,
      details: { gatewayStatus: statusRaw, endToEndId: 'E1' },
      signal: { kind: 'continue' },
    });
  });

  it.each([
    ['another amount', transaction({ valueCents: 999 })],
    ['a cash-in', transaction({ object: 'cashin' })],
    ['another orderId', transaction({ orderId: 'p-2' })],
  ])('a transaction that now reads as %s is a conflict for a person', (_name, answer) => {
    expect(decidePoll(request, 7, answer)).toMatchObject({
      to: 'conflict',
      details: { message: expect.stringContaining('a person must look') },
    });
  });

  it.each([
    ['ambiguous', 'continue'],
    ['unavailable', 'continue'],
    ['not-found', 'continue'],
    ['rate-limited', 'pause'],
    ['auth', 'stop'],
    ['wrong-endpoint', 'stop'],
  ] as const)('a failed poll (%s) keeps the row pending: run %s', (kind, signal) => {
    const decision = decidePoll(request, 7, error(kind));
    expect(decision.to).toBe('pending');
    expect(decision.signal.kind).toBe(signal);
    expect(decision.details.message).toBe(`last poll failed: createCashOut: ${kind}`);
  });
});
