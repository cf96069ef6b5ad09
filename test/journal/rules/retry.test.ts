import { describe, expect, it } from 'vitest';
import type { Said } from '../../../src/messages/said.js';
import { nextAttempt, planCopiesCovered, retryTargetOf } from '../../../src/journal/rules/retry.js';

describe('retryTargetOf: the payout a retry request sends again', () => {
  it.each([
    ['a failed payout', 'failed', null, null, 'p-1'],
    ['a copy held as its repeat', 'held', 'failed-before', 'a-1', 'a-1'],
    ['a copy held as a possible duplicate', 'held', 'duplicate', 'a-1', 'p-1'],
    ['a covered row', 'covered', null, 'a-1', 'p-1'],
  ] as const)('%s: %s', (_, state, holdReason, coveredBy, expected) => {
    expect(retryTargetOf({ orderId: 'p-1', state, holdReason, coveredBy })).toBe(expected);
  });
});

describe('nextAttempt', () => {
  it.each([
    ['the first payout', 'p-1', null, null, 'p-1-r2'],
    ['a retry of it', 'p-1-r2', 'p-1', 2, 'p-1-r3'],
    // An orderId of the file's own that ends like a suffix is kept whole.
    ['a first payout named like a retry', 'nf-r7', null, null, 'nf-r7-r2'],
  ] as const)('%s: %s', (_, orderId, retryOf, attemptNumber, expected) => {
    expect(nextAttempt({ orderId, retryOf, attemptNumber }).retryId).toBe(expected);
  });
});

describe('planCopiesCovered', () => {
  const repeat: Said = { code: 'repeatSentAgain', by: 'ana', at: 0, retryId: 'p-1-r2' };
  const copies = [{ orderId: 'b-1' }, { orderId: 'c-1' }];

  it('covers every copy held as a repeat by the payout sent again', () => {
    expect(planCopiesCovered(copies, 'p-1-r2', repeat, false)).toEqual(
      copies.map(({ orderId }) => ({
        orderId,
        from: 'held',
        to: 'covered',
        fields: { coveredBy: 'p-1-r2', said: repeat },
        reason: { code: 'coveredByRetry', retryId: 'p-1-r2' },
      })),
    );
  });

  it('leaves them held when another payout holds the retry as a possible duplicate', () => {
    expect(planCopiesCovered(copies, 'p-1-r2', repeat, true)).toEqual([]);
  });
});
