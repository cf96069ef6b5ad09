import { describe, expect, it } from 'vitest';
import {
  BALANCE_STATES,
  HELD_FOR_BALANCE,
  balanceByBatch,
  thawsOnRelease,
  weighedForBalance,
} from '../../../src/journal/rules/holds.js';

describe('thawsOnRelease: a release that says the rows are new payments', () => {
  it.each([
    ['duplicate', true],
    ['same-name', true],
    ['balance', false],
    ['file', false],
    ['identical', false],
    ['changes-paid', false],
    ['changes-payee', false],
    ['copy-waiting', false],
    ['failed-before', false],
  ] as const)('%s: %s', (reason, expected) => {
    expect(thawsOnRelease(reason)).toBe(expected);
  });
});

describe('weighedForBalance: the rows the balance check weighs', () => {
  it.each([
    ['open', 'queued', null, true],
    ['open', 'held', 'balance', false],
    ['underfunded', 'held', 'balance', true],
    ['underfunded', 'held', null, true],
    ['underfunded', 'held', 'duplicate', false],
    ['underfunded', 'queued', null, false],
    ['awaiting-approval', 'queued', null, false],
    ['held', 'held', 'file', false],
    ['open', 'held', 'same-name', false],
    ['done', 'queued', null, false],
  ] as const)('a %s batch, a row %s (%s): %s', (batchState, state, holdReason, expected) => {
    expect(weighedForBalance({ batchState, state, holdReason })).toBe(expected);
  });

  it('names every row state it weighs in the states a store reads for it', () => {
    for (const batchState of ['open', 'underfunded'] as const) {
      for (const state of ['queued', 'held', 'sending', 'paid', 'pending'] as const) {
        for (const holdReason of HELD_FOR_BALANCE) {
          if (weighedForBalance({ batchState, state, holdReason })) {
            expect(BALANCE_STATES).toContain(state);
          }
        }
      }
    }
  });
});

describe('balanceByBatch: what the balance check weighs of each batch', () => {
  const group = (
    batchId: number,
    batchState: 'open' | 'underfunded' | 'done',
    state: 'queued' | 'held',
    holdReason: 'balance' | 'duplicate' | null,
    cents: number,
    count: number,
  ) => ({ batchId, batchState, state, holdReason, cents, count });

  it.each([
    ['nothing read', [], []],
    [
      "an open batch's queued rows, not its held ones",
      [group(1, 'open', 'queued', null, 3000, 3), group(1, 'open', 'held', 'duplicate', 1000, 1)],
      [{ batchId: 1, cents: 3000, count: 3 }],
    ],
    [
      "an underfunded batch's rows held for the balance, with or without a reason kept",
      [
        group(2, 'underfunded', 'held', 'balance', 2000, 2),
        group(2, 'underfunded', 'held', null, 500, 1),
        group(2, 'underfunded', 'held', 'duplicate', 700, 1),
      ],
      [{ batchId: 2, cents: 2500, count: 3 }],
    ],
    [
      'each batch apart, in the order read, a batch with nothing weighed left out',
      [
        group(3, 'open', 'queued', null, 100, 1),
        group(4, 'done', 'queued', null, 900, 9),
        group(5, 'underfunded', 'held', 'balance', 200, 2),
      ],
      [
        { batchId: 3, cents: 100, count: 1 },
        { batchId: 5, cents: 200, count: 2 },
      ],
    ],
  ] as const)('%s', (_, groups, expected) => {
    expect(balanceByBatch(groups)).toEqual(expected);
  });
});
