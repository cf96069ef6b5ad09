import { describe, expect, it } from 'vitest';
import type { Said } from '../../../src/messages/said.js';
import { HOLD_REASONS, ROW_STATES, type HoldReason } from '../../../src/journal/states.js';
import {
  isRetryable,
  nextAttempt,
  planCopiesCovered,
  repeatsHeldOf,
  RETRY_TARGET_STATES,
  retryTargetOf,
  retryTargetsIn,
  retrySaids,
} from '../../../src/journal/rules/retry.js';

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

describe('isRetryable: what only a person sends again', () => {
  it.each([
    ['failed', true],
    ['rejected', true],
    ['canceled', true],
    ['refunded', true],
    ['paid', false],
    ['pending', false],
    ['retried', false],
    ['conflict', false],
  ] as const)('%s: %s', (state, expected) => {
    expect(isRetryable(state)).toBe(expected);
  });
});

describe('retryTargetsIn: the rows of a file `payouts retry FILE` names', () => {
  it('names what did not pay and the copies held as repeats, in the order read', () => {
    const rows = [
      { orderId: 'p-1', state: 'failed', holdReason: null },
      { orderId: 'p-2', state: 'held', holdReason: 'duplicate' },
      { orderId: 'p-3', state: 'refunded', holdReason: null },
      { orderId: 'p-4', state: 'held', holdReason: 'failed-before' },
      { orderId: 'p-5', state: 'held', holdReason: 'balance' },
      { orderId: 'p-6', state: 'rejected', holdReason: null },
      { orderId: 'p-7', state: 'canceled', holdReason: null },
    ] as const;
    expect(retryTargetsIn(rows)).toEqual(['p-1', 'p-3', 'p-4', 'p-6', 'p-7']);
  });

  it('names no row of a state the store does not read for it (RETRY_TARGET_STATES)', () => {
    const named = ROW_STATES.flatMap((state) =>
      [null, ...HOLD_REASONS].flatMap((holdReason) =>
        retryTargetsIn([{ orderId: 'p-1', state, holdReason }]).length > 0 ? [state] : [],
      ),
    );
    expect(new Set(named)).toEqual(new Set(RETRY_TARGET_STATES));
  });
});

describe('repeatsHeldOf: the copies a payout sent again covers', () => {
  const row = (
    orderId: string,
    coveredBy: string,
    state: 'held' | 'covered',
    holdReason: HoldReason | null,
  ) => ({
    orderId,
    coveredBy,
    state,
    holdReason,
    batchId: 2,
    batchState: 'open' as const,
    fileName: 'folha_reenvio.csv',
  });

  it('takes the copies held as its repeats, naming it directly', () => {
    const linked = [
      row('b-1', 'p-1', 'held', 'failed-before'),
      row('b-2', 'p-1', 'held', 'duplicate'),
      row('c-1', 'b-1', 'held', 'failed-before'),
      row('b-3', 'p-1', 'covered', null),
    ];
    expect(repeatsHeldOf('p-1', linked).map((copy) => copy.orderId)).toEqual(['b-1']);
  });
});

describe('retrySaids: what a retry says, as values', () => {
  it.each([
    ['a failed payout that said why', 'card refused', 'card refused'],
    ['one that said nothing', '', null],
    ['one with no message', null, null],
  ] as const)('%s', (_, message, earlier) => {
    const said = retrySaids({
      by: 'maria',
      at: 7,
      failed: { orderId: 'p-1', state: 'failed', line: 4, message },
      attempt: { attempt: 2, base: 'p-1', retryId: 'p-1-r2' },
    });
    const why = { code: 'auditSentAgainBy', by: 'maria', at: 7 };
    expect(said).toEqual({
      why,
      journaled: {
        code: 'auditRetry',
        attempt: 2,
        base: 'p-1',
        orderId: 'p-1',
        state: 'failed',
        why,
      },
      retried: { code: 'sentAgainOnPurpose', by: 'maria', at: 7, retryId: 'p-1-r2', earlier },
      retriedAs: { code: 'auditRetriedAs', why, retryId: 'p-1-r2' },
      repeat: { code: 'repeatSentAgain', by: 'maria', at: 7, retryId: 'p-1-r2' },
      event: {
        code: 'eventSentAgainAs',
        line: 4,
        orderId: 'p-1',
        state: 'failed',
        retryId: 'p-1-r2',
      },
    });
  });
});
