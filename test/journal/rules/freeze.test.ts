import { describe, expect, it } from 'vitest';
import type { Said } from '../../../src/messages/said.js';
import type { BatchState } from '../../../src/journal/batch-states.js';
import {
  frozenBatches,
  planFreeze,
  planThaw,
  type FrozenPayout,
  type FrozenRow,
} from '../../../src/journal/rules/freeze.js';
import type { HoldReason, RowState } from '../../../src/journal/states.js';

const frozen: Said = {
  code: 'heldForCopy',
  file: 'folha.csv',
  batchId: 2,
  at: 0,
  earlierBatchId: 1,
  hintFlags: '',
};

describe('planFreeze: an earlier batch of a file named as it, while the file waits (rule 3)', () => {
  it.each<[string, RowState, HoldReason | null, boolean]>([
    ['a queued row', 'queued', null, true],
    ['a row only the balance held', 'held', 'balance', true],
    ['a held row without a reason', 'held', null, true],
    ['a possible duplicate', 'held', 'duplicate', false],
    ['a row changing a paid one', 'held', 'changes-paid', false],
    ['a row held with its whole file', 'held', 'file', false],
    ['a row frozen already', 'held', 'copy-waiting', false],
    ['a row sent', 'sending', null, false],
  ])('%s', (_, state, holdReason, held) => {
    const plan = planFreeze([{ orderId: 'a-2', state, holdReason, coveredBy: null }], frozen);
    expect(plan.map((move) => [move.from, move.to, move.fields.holdReason])).toEqual(
      held ? [[state, 'held', 'copy-waiting']] : [],
    );
    if (held) expect(plan[0]?.fields.said).toEqual(frozen);
  });

  it('keeps the payout a released repeat repeats', () => {
    const [move] = planFreeze(
      [{ orderId: 'a-2', state: 'queued', holdReason: null, coveredBy: 'x-9' }],
      frozen,
    );
    expect(move?.fields.coveredBy).toBe('x-9');
  });
});

describe('planThaw: the rows a file froze, once it is answered', () => {
  const row = (fields: Partial<FrozenRow> = {}): FrozenRow => ({
    orderId: 'a-2',
    state: 'held',
    holdReason: 'copy-waiting',
    coveredBy: null,
    frozenBy: 2,
    batchState: 'open',
    ...fields,
  });

  it.each<[string, BatchState, RowState, HoldReason | null]>([
    ['its batch open: queued to be sent', 'open', 'queued', null],
    ['its batch approved and waiting: queued', 'awaiting-approval', 'queued', null],
    ['its batch underfunded: held for the balance', 'underfunded', 'held', 'balance'],
    ['its batch turned down: held with its file', 'refused', 'held', 'file'],
  ])('%s', (_, batchState, to, holdReason) => {
    const plan = planThaw([row({ batchState })], 2);
    expect(plan.map((move) => [move.from, move.to, move.fields.holdReason])).toEqual([
      ['held', to, holdReason],
    ]);
    expect(plan[0]?.fields.said).toBeUndefined();
  });

  it.each<[string, Partial<FrozenRow>]>([
    ['frozen by another file', { frozenBy: 3 }],
    ['frozen by nothing named', { frozenBy: null }],
    ['held for another reason', { holdReason: 'duplicate' }],
    ['not held', { state: 'queued', holdReason: null }],
  ])('leaves a row %s', (_, fields) => {
    expect(planThaw([row(fields)], 2)).toEqual([]);
  });

  it('keeps the payout a released repeat repeats', () => {
    expect(planThaw([row({ coveredBy: 'x-9' })], 2)[0]?.fields.coveredBy).toBe('x-9');
  });
});

describe('frozenBatches: what a file waiting for a person holds back of its name', () => {
  const row = (
    batchId: number,
    cents: number,
    fields: Partial<FrozenPayout> = {},
  ): FrozenPayout => ({
    orderId: `a-${batchId}-${cents}`,
    state: 'held',
    holdReason: 'copy-waiting',
    coveredBy: null,
    frozenBy: 3,
    batchState: 'open',
    batchId,
    fileName: `folha-${batchId}.csv`,
    cents,
    ...fields,
  });

  it('counts and sums each batch the file froze, in the journal order', () => {
    expect(frozenBatches([row(2, 500), row(1, 100), row(2, 250)], 3)).toEqual([
      { batchId: 1, fileName: 'folha-1.csv', rows: 1, cents: 100 },
      { batchId: 2, fileName: 'folha-2.csv', rows: 2, cents: 750 },
    ]);
  });

  it.each<[string, Partial<FrozenPayout>]>([
    ['frozen by another file', { frozenBy: 4 }],
    ['frozen by nothing named', { frozenBy: null }],
    ['held for another reason', { holdReason: 'balance' }],
    ['not held', { state: 'queued', holdReason: null }],
  ])('leaves out a row %s', (_, fields) => {
    expect(frozenBatches([row(1, 100, fields)], 3)).toEqual([]);
  });
});
