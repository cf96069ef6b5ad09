import { describe, expect, it } from 'vitest';
import { admit, type Covering, type Known } from '../../src/journal/admission.js';
import { ROW_STATES, canMove, isFinalOutcome, type RowState } from '../../src/journal/states.js';

describe('transition table', () => {
  it.each([
    ['queued', 'sending', true],
    ['queued', 'held', true],
    ['held', 'queued', true],
    ['sending', 'pending', true],
    ['sending', 'unknown', true],
    ['sending', 'queued', true],
    ['sending', 'rejected', true],
    ['unknown', 'sending', true],
    ['unknown', 'paid', true],
    ['pending', 'paid', true],
    ['pending', 'pending', true],
    ['paid', 'refunded', true],
    // Never again sendable once the gateway may have it.
    ['paid', 'queued', false],
    ['pending', 'queued', false],
    ['unknown', 'queued', false],
    ['failed', 'queued', false],
    ['rejected', 'sending', false],
    ['conflict', 'queued', false],
    ['conflict', 'sending', false],
    ['unknown', 'conflict', true],
    ['sending', 'conflict', true],
    // A fixed copy of its file takes over an orderId the gateway never created.
    ['invalid', 'queued', true],
    ['rejected', 'queued', true],
    ['queued', 'queued', true],
    ['queued', 'paid', false],
    // A definitely failed payout is sent again only as a new one (payouts retry).
    ['failed', 'retried', true],
    ['refunded', 'retried', true],
    ['paid', 'retried', false],
    ['pending', 'retried', false],
    ['retried', 'queued', false],
  ] as const)('%s -> %s: %s', (from, to, allowed) => {
    expect(canMove(from, to)).toBe(allowed);
  });

  it('lets nothing that may have reached the gateway go back to queued', () => {
    const mayHaveReached: RowState[] = [
      'sending',
      'unknown',
      'pending',
      'paid',
      'failed',
      'canceled',
      'refunded',
    ];
    for (const from of mayHaveReached) {
      if (from === 'sending') continue; // only on answers proving nothing was created
      expect(canMove(from, 'queued'), from).toBe(false);
    }
    expect(ROW_STATES).toHaveLength(15);
  });
});

describe('final line outcomes', () => {
  it.each([
    ['paid', true],
    ['superseded', true],
    ['invalid', true],
    ['skipped', true],
    ['held', true],
    ['pending', false],
    ['queued', false],
    ['replay', false],
  ])('%s: %s', (outcome, final) => {
    expect(isFinalOutcome(outcome)).toBe(final);
  });
});

describe('admit', () => {
  const previous = (state: RowState, sameName: boolean): Known => ({
    payloadHash: 'a',
    state,
    batchId: 1,
    line: 2,
    fileName: 'folha.csv',
    admittedAt: 0,
    sameName,
  });
  const covering: Covering = {
    orderId: 'folha-1',
    batchId: 1,
    line: 2,
    state: 'paid',
    fileName: 'folha.csv',
    admittedAt: 0,
    transactionId: 7,
    valueCents: 1000,
    reference: null,
  };
  it.each([
    [undefined, undefined, 'new'],
    [undefined, covering, 'duplicate'],
    // An orderId of another file is never a silent replay, whatever became of it.
    [previous('paid', false), undefined, 'journaled'],
    [previous('paid', true), undefined, 'journaled'],
    [previous('pending', true), undefined, 'journaled'],
    [previous('failed', true), undefined, 'journaled'],
    [previous('held', false), undefined, 'journaled'],
    [previous('rejected', false), undefined, 'journaled'],
    // A fixed copy of the same file takes over what the gateway never saw.
    [previous('held', true), undefined, 'retry'],
    [previous('invalid', true), covering, 'retry'],
  ] as const)('%j, covered by %j -> %s', (known, cover, kind) => {
    expect(admit(known, cover, 'another payload').kind).toBe(kind);
  });

  // The gateway refused it: a copy that fixes it (another key, say) takes it over and is
  // sent; the same payload again is sent again only by `payouts retry`, never by a drop.
  it.each([
    ['another payload', 'retry'],
    ['a', 'journaled'],
  ] as const)('a rejected row of a copy of its file, with %j -> %s', (hash, kind) => {
    expect(admit(previous('rejected', true), undefined, hash).kind).toBe(kind);
  });
});
