import { describe, expect, it } from 'vitest';
import {
  BALANCE_STATES,
  HELD_FOR_BALANCE,
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
