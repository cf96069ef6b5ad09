import { describe, expect, it } from 'vitest';
import { admit } from '../../src/journal/admission.js';
import { ROW_STATES, canMove, type RowState } from '../../src/journal/states.js';

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
    ['invalid', 'queued', false],
    ['queued', 'paid', false],
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
    expect(ROW_STATES).toHaveLength(12);
  });
});

describe('admit', () => {
  const previous = (state: RowState, payloadHash = 'a') => ({
    payloadHash,
    state,
    batchId: 1,
    line: 2,
  });
  it.each([
    [undefined, 'a', 'new'],
    [previous('paid'), 'a', 'replay'],
    [previous('rejected'), 'a', 'replay'],
    [previous('queued'), 'a', 'replay'],
    [previous('paid'), 'b', 'conflict'],
    [previous('pending'), 'b', 'conflict'],
    [previous('unknown'), 'b', 'conflict'],
    [previous('rejected'), 'b', 'retry'],
    [previous('invalid'), 'b', 'retry'],
    [previous('held'), 'a', 'retry'],
    [previous('held'), 'b', 'retry'],
  ] as const)('%j with payload %s -> %s', (known, hash, kind) => {
    expect(admit(hash, known).kind).toBe(kind);
  });
});
