import { describe, expect, it } from 'vitest';
import { failedBeforeSaid, type Covering } from '../../../src/journal/admission.js';
import {
  CORRECTION_WINDOW_MS,
  correctionCandidate,
  countRepeatsOfFailed,
  heldLinesOnSent,
  linesACopyReplaces,
  isCorrection,
  maySend,
  planChangesOfPaid,
  planCopyRows,
  planGiveBack,
  planLeftOut,
  paidRowOf,
  planRepeats,
  planRepeatsOfFailed,
  replaceableRows,
  sameNameEarlier,
  sendableRows,
  standingBatches,
  takenOverLines,
  type CopyRepeat,
  type LineOnPayout,
} from '../../../src/journal/rules/correction.js';
import type { BatchState } from '../../../src/journal/batch-states.js';
import type { HoldReason, RowState } from '../../../src/journal/states.js';
import type { LineKind } from '../../../src/journal/types.js';

const HOUR = 60 * 60 * 1000;
const copy = { id: 2, fileName: 'folha (corrigida).csv' };

const paid = (state: RowState, valueCents = 1000): Covering => ({
  orderId: 'a-1',
  batchId: 1,
  line: 2,
  state,
  valueCents,
  fileName: 'folha.csv',
  admittedAt: 0,
  transactionId: state === 'queued' ? null : 7,
  reference: null,
});

const ana = { pixKey: 'ana@example.com', name: 'Ana Souza' };

describe('correctionCandidate: the 24-hour window, and the batch a copy repeats most', () => {
  const batch = (id: number, receivedAt: number, sharedRows = 1) => ({
    id,
    receivedAt,
    sharedRows,
  });
  it.each([
    ['no earlier batch of its name', [], undefined],
    ['an hour later', [batch(1, 23 * HOUR)], 1],
    ['just within a day', [batch(1, 1)], 1],
    ['a day later', [batch(1, 0)], undefined],
    ['the latest of its name arrived after it', [batch(5, 23 * HOUR)], undefined],
    ['two that day, sharing as many rows: the latest', [batch(3, 2 * HOUR), batch(1, HOUR)], 3],
    ['two that day, sharing no row: the latest', [batch(3, 2 * HOUR, 0), batch(1, HOUR, 0)], 3],
    [
      'two that day, the earlier sharing more rows: the earlier',
      [batch(3, 2 * HOUR, 0), batch(1, HOUR, 2)],
      1,
    ],
    [
      'the one sharing more rows a day before: the one that day',
      [batch(3, 2 * HOUR, 0), batch(1, 0, 2)],
      3,
    ],
  ] as const)('%s', (_, earlier, expected) => {
    expect(correctionCandidate({ id: 4, receivedAt: CORRECTION_WINDOW_MS }, earlier)).toBe(
      expected,
    );
  });
});

describe('isCorrection', () => {
  it.each([
    [{ repeats: 0, fresh: 0, replaceable: 5 }, false],
    [{ repeats: 3, fresh: 0, replaceable: 0 }, true],
    [{ repeats: 3, fresh: 2, replaceable: 2 }, true],
    // More new rows than rows it could replace: a new payroll that repeats some rows.
    [{ repeats: 3, fresh: 3, replaceable: 2 }, false],
  ])('%o: %s', (counts, expected) => {
    expect(isCorrection(counts)).toBe(expected);
  });
});

describe('planRepeats: a copy row that repeats a row of the batch it corrects', () => {
  const repeat = (state: RowState, changes: Partial<CopyRepeat> = {}): CopyRepeat => ({
    orderId: 'b-1',
    cents: 1000,
    payee: ana,
    paid: paid(state),
    paidPayee: ana,
    paidHoldReason: state === 'held' ? 'balance' : null,
    ...changes,
  });

  it.each([
    ['paid, unchanged', repeat('paid'), [['b-1', 'held', 'covered', 'covered', null]]],
    ['pending, unchanged', repeat('pending'), [['b-1', 'held', 'covered', 'covered', null]]],
    [
      'paid, another amount',
      repeat('paid', { cents: 1200 }),
      [['b-1', 'held', 'held', 'held', 'changes-paid']],
    ],
    [
      'paid, another Pix key',
      repeat('paid', { payee: { ...ana, pixKey: 'ana@example.org' } }),
      [['b-1', 'held', 'held', 'held', 'changes-payee']],
    ],
    [
      'paid, the name without its accent',
      repeat('paid', { payee: { ...ana, name: 'ANA SOUZA' } }),
      [['b-1', 'held', 'covered', 'covered', null]],
    ],
    [
      'never sent (queued)',
      repeat('queued'),
      [
        ['a-1', 'queued', 'superseded', 'takenOver', null],
        ['b-1', 'held', 'queued', 'takesOver', null],
      ],
    ],
    [
      'never sent (held for the balance)',
      repeat('held'),
      [
        ['a-1', 'held', 'superseded', 'takenOver', 'balance'],
        ['b-1', 'held', 'queued', 'takesOver', null],
      ],
    ],
  ] as const)('%s', (_, row, expected) => {
    const plan = planRepeats(copy, [row]);
    expect(
      plan.map((move) => [
        move.orderId,
        move.from,
        move.to,
        move.reason.code,
        move.fields.holdReason ?? null,
      ]),
    ).toEqual(expected);
  });

  it('links a covered row and a changed payee to the payout they repeat, and says why', () => {
    const [covered] = planRepeats(copy, [repeat('paid')]);
    expect(covered?.fields).toMatchObject({
      coveredBy: 'a-1',
      said: { code: 'heldCovered', file: 'folha.csv', line: 2 },
    });
    const other = repeat('paid', { payee: { ...ana, pixKey: 'x' } });
    const [held] = planRepeats(copy, [other]);
    expect(held?.fields).toMatchObject({
      coveredBy: 'a-1',
      // The journal keeps its command without flags: the one shown a person takes theirs.
      said: { code: 'heldChangesPayee', paidKey: ana.pixKey, key: 'x', hintFlags: '' },
    });
    const [changed] = planRepeats(copy, [repeat('paid', { cents: 1200 })]);
    expect(changed?.fields.coveredBy).toBeUndefined();
    expect(changed?.fields.said).toMatchObject({ paidCents: 1000, cents: 1200 });
  });

  it('names the copy that takes a row over', () => {
    const [taken] = planRepeats(copy, [repeat('queued')]);
    expect(taken?.fields).toMatchObject({
      supersededBy: 2,
      said: { code: 'takenOverBy', file: 'folha (corrigida).csv' },
    });
  });
});

describe('planCopyRows: the copy rows that may be sent', () => {
  it.each([
    ['queued, changing no paid row', 'queued', undefined, []],
    [
      'held for its name, changing no paid row',
      'held',
      undefined,
      [['held', 'queued', 'replaces']],
    ],
    [
      'queued, another amount to someone paid',
      'queued',
      paid('paid'),
      [['queued', 'held', 'held']],
    ],
    ['held for its name, changing a paid row', 'held', paid('paid'), [['held', 'held', 'held']]],
  ] as const)('%s', (_, state, sent, expected) => {
    const plan = planCopyRows([{ orderId: 'b-2', state, cents: 1500, sent }]);
    expect(plan.map((move) => [move.from, move.to, move.reason.code])).toEqual(expected);
    for (const move of plan.filter((move) => move.to === 'held')) {
      expect(move.fields).toMatchObject({
        holdReason: 'changes-paid',
        said: { code: 'heldChangesPaid', paidCents: 1000, cents: 1500 },
      });
    }
  });
});

describe('planLeftOut: what the corrected batch had not sent', () => {
  it('closes each row, keeping why a held one was held, and names the copy', () => {
    const plan = planLeftOut(copy, [
      { orderId: 'a-2', state: 'queued', holdReason: null },
      { orderId: 'a-3', state: 'held', holdReason: 'balance' },
    ]);
    expect(plan.map((move) => [move.orderId, move.from, move.to, move.fields.holdReason])).toEqual([
      ['a-2', 'queued', 'superseded', null],
      ['a-3', 'held', 'superseded', 'balance'],
    ]);
    expect(plan[0]?.fields).toMatchObject({
      supersededBy: 2,
      said: { code: 'leftOutByCopy', file: 'folha (corrigida).csv' },
    });
    expect(plan[0]?.reason).toEqual({ code: 'leftOut', file: 'folha (corrigida).csv' });
  });
});

describe('sameNameEarlier: the batch a file named as it is weighed against', () => {
  const DAY = 24 * HOUR;
  it.each([
    ['no earlier batch of its name', undefined, null, undefined],
    ['a month later, however late', { id: 1, receivedAt: 0 }, null, 1],
    ['a month later, new after 20 days', { id: 1, receivedAt: 0 }, 20 * DAY, undefined],
    ['a day later, new after 20 days', { id: 1, receivedAt: 29 * DAY }, 20 * DAY, 1],
    ['the latest of its name arrived after it', { id: 3, receivedAt: 0 }, null, undefined],
  ] as const)('%s: %s', (_, latest, newBatchAfterMs, expected) => {
    expect(sameNameEarlier({ id: 2, receivedAt: 30 * DAY }, latest, newBatchAfterMs)).toBe(
      expected,
    );
  });
});

describe('planGiveBack: a copy turned down gives back what it closed', () => {
  it('as it was: held for its reason, or queued', () => {
    const plan = planGiveBack([
      { orderId: 'a-1', state: 'superseded', holdReason: null },
      { orderId: 'a-2', state: 'superseded', holdReason: 'balance' },
    ]);
    expect(plan.map((move) => [move.orderId, move.from, move.to, move.fields.holdReason])).toEqual([
      ['a-1', 'superseded', 'queued', null],
      ['a-2', 'superseded', 'held', 'balance'],
    ]);
  });

  it.each<RowState>(['queued', 'held', 'paid'])('leaves a row the copy named, %s now', (state) => {
    expect(planGiveBack([{ orderId: 'a-1', state, holdReason: null }])).toEqual([]);
  });
});

describe('planRepeatsOfFailed: a failed payout is sent again only on purpose (rule 5)', () => {
  const repeat = (state: RowState, payoutState: RowState, orderId = 'b-1', payoutId = 'a-1') => ({
    orderId,
    state,
    payout: { ...paid(payoutState), orderId: payoutId },
    lastSentAt: 1_000 as number | null,
    updatedAt: 1_000,
  });
  const heldFor = (orderId: string, failed: Covering) => {
    const said = failedBeforeSaid(failed);
    return {
      orderId,
      from: 'queued',
      to: 'held',
      fields: { holdReason: 'failed-before', coveredBy: failed.orderId, said },
      reason: { code: 'held', said },
    };
  };

  it.each<[string, RowState, RowState, boolean]>([
    ['a queued row repeating a failed payout', 'queued', 'failed', true],
    ['repeating one refused by the gateway', 'queued', 'rejected', true],
    ['repeating one canceled', 'queued', 'canceled', true],
    ['repeating one returned', 'queued', 'refunded', true],
    ['repeating a paid payout', 'queued', 'paid', false],
    ['repeating one still pending', 'queued', 'pending', false],
    ['a row held already (a possible duplicate)', 'held', 'failed', false],
  ])('%s', (_, state, payoutState, expected) => {
    const row = repeat(state, payoutState);
    expect(planRepeatsOfFailed([row], null)).toEqual(expected ? [heldFor('b-1', row.payout)] : []);
  });

  it('holds a row once, naming the first failed payout it repeats', () => {
    const rows = [
      repeat('queued', 'paid', 'b-1', 'a-0'),
      repeat('queued', 'failed', 'b-1', 'a-1'),
      repeat('queued', 'failed', 'b-1', 'a-2'),
      repeat('queued', 'failed', 'b-2', 'a-3'),
    ];
    expect(planRepeatsOfFailed(rows, null)).toEqual([
      heldFor('b-1', rows[1]!.payout),
      heldFor('b-2', rows[3]!.payout),
    ]);
  });

  it.each<[string, number | null, number, boolean]>([
    ['failed within the window, though sent long before it', 10_000, 50_000, true],
    ['sent within it, and still the last it moved', 60_000, 60_000, true],
    ['failed and last moved before the window', 10_000, 20_000, false],
    ['never sent, failed within it (refused at the gateway at once)', null, 50_000, true],
  ])('weighs a payout of another file from its own time: %s', (_, lastSentAt, updatedAt, held) => {
    const row = { ...repeat('queued', 'failed'), lastSentAt, updatedAt };
    expect(planRepeatsOfFailed([row], 40_000)).toEqual(held ? [heldFor('b-1', row.payout)] : []);
  });
});

describe('paidRowOf: the paid row a copy row changes (rule 4)', () => {
  const payout = (orderId: string, state: RowState, reference: string | null = null) => ({
    ...paid(state),
    orderId,
    reference,
  });

  it.each<[string, string | null, ReturnType<typeof payout>[], string | undefined]>([
    ['nothing paid to the document', null, [], undefined],
    ['a payout that left', null, [payout('a-1', 'paid')], 'a-1'],
    ['one still pending', null, [payout('a-1', 'pending')], 'a-1'],
    ['one that failed', null, [payout('a-1', 'failed')], undefined],
    ['one never sent', null, [payout('a-1', 'queued')], undefined],
    [
      'the first that left, in line order',
      null,
      [payout('a-1', 'failed'), payout('a-2', 'paid'), payout('a-3', 'paid')],
      'a-2',
    ],
    ['the row reference paid', 'nf-1', [payout('a-1', 'paid', 'nf-1')], 'a-1'],
    ['another reference paid: another payment', 'nf-2', [payout('a-1', 'paid', 'nf-1')], undefined],
    ['a payout without a reference', 'nf-2', [payout('a-1', 'paid')], 'a-1'],
    ['a row without one, a payout with one', null, [payout('a-1', 'paid', 'nf-1')], 'a-1'],
  ])('%s', (_, reference, payouts, expected) => {
    expect(paidRowOf({ reference }, payouts)?.orderId).toBe(expected);
  });
});

describe('standingBatches: the batches of a name a file is weighed against', () => {
  it.each<[BatchState, boolean]>([
    ['open', true],
    ['done', true],
    ['held', true],
    ['underfunded', true],
    ['awaiting-approval', true],
    ['refused', false],
    ['unusable', false],
  ])('a batch %s: %s', (state, expected) => {
    expect(standingBatches([{ id: 1, state }])).toEqual(expected ? [{ id: 1, state }] : []);
  });
});

describe('replaceableRows: the rows of a batch a correction may replace', () => {
  it.each<[string, number, { state: RowState; count: number }[], number]>([
    ['nothing to replace: all paid', 0, [{ state: 'paid', count: 3 }], 0],
    ['invalid lines', 2, [{ state: 'paid', count: 3 }], 2],
    [
      'payouts that need a person',
      0,
      [
        { state: 'failed', count: 1 },
        { state: 'rejected', count: 1 },
        { state: 'canceled', count: 1 },
        { state: 'refunded', count: 1 },
        { state: 'conflict', count: 1 },
      ],
      5,
    ],
    [
      'payouts never sent',
      1,
      [
        { state: 'queued', count: 2 },
        { state: 'held', count: 3 },
      ],
      6,
    ],
    [
      'payouts that left or may have',
      0,
      [
        { state: 'pending', count: 1 },
        { state: 'unknown', count: 1 },
        { state: 'sending', count: 1 },
        { state: 'covered', count: 1 },
        { state: 'superseded', count: 1 },
      ],
      0,
    ],
  ])('%s', (_, invalidLines, payouts, expected) => {
    expect(replaceableRows(invalidLines, payouts)).toBe(expected);
  });
});

describe('planChangesOfPaid: rows of a file that change what its name paid that day (rule 4)', () => {
  // Each payout names its orderId by the line it was on.
  const payout = (orderId: string, state: RowState, valueCents: number) => ({
    ...paid(state, valueCents),
    orderId,
    line: orderId.startsWith('b') ? 3 : 2,
  });

  it.each<[string, number, Covering[], string | undefined]>([
    ['nothing paid to the document', 1000, [], undefined],
    [
      'the amount paid, unchanged: weighed by the other rules',
      1000,
      [payout('a-1', 'paid', 1000)],
      undefined,
    ],
    ['another amount than the one paid', 1500, [payout('a-1', 'paid', 1000)], 'a-1'],
    ['another amount than one still pending', 1500, [payout('a-1', 'pending', 1000)], 'a-1'],
    [
      'another amount than one that failed: a fix',
      1500,
      [payout('a-1', 'failed', 1000)],
      undefined,
    ],
    [
      'the amount a batch before the newest paid',
      1500,
      [payout('b-1', 'paid', 1000), payout('a-1', 'paid', 1500)],
      undefined,
    ],
    [
      'another amount than both: the newest batch named',
      1200,
      [payout('b-1', 'paid', 1000), payout('a-1', 'paid', 1500)],
      'b-1',
    ],
  ])('%s', (_, cents, payouts, expected) => {
    const plan = planChangesOfPaid([
      { orderId: 'c-2', state: 'queued', cents, reference: null, payouts },
    ]);
    expect(plan.map((move) => [move.orderId, move.to, move.fields.holdReason])).toEqual(
      expected === undefined ? [] : [['c-2', 'held', 'changes-paid']],
    );
    if (expected) {
      const named = payouts.find((payout) => payout.orderId === expected);
      expect(plan[0]?.fields.said).toMatchObject({
        code: 'heldChangesPaid',
        line: named?.line,
        paidCents: named?.valueCents,
        cents,
      });
      expect(plan[0]?.reason).toMatchObject({ code: 'held' });
    }
  });
});

describe('maySend: the rows of a file a copy weighs as still to be sent', () => {
  it.each<[RowState, HoldReason | null, boolean]>([
    ['queued', null, true],
    ['held', 'same-name', true],
    ['held', 'duplicate', false],
    ['held', 'changes-paid', false],
    ['held', 'balance', false],
    ['held', 'copy-waiting', false],
    ['paid', null, false],
    ['superseded', null, false],
  ])('%s, held for %s: %s', (state, holdReason, expected) => {
    expect(maySend({ state, holdReason })).toBe(expected);
  });
});

describe('takenOverLines and heldLinesOnSent: lines a copy and its batch share by orderId', () => {
  const line = (kind: LineKind, state: RowState = 'paid'): LineOnPayout => ({
    line: 3,
    kind,
    payout: paid(state),
  });

  it.each<[string, LineOnPayout[], LineOnPayout[], number]>([
    ['none shared', [], [], 0],
    ['a corrected line the copy superseded', [line('superseded')], [], 1],
    ['a copy line held as repeating an orderId', [], [line('held')], 1],
    ['both', [line('superseded')], [line('held'), line('held', 'queued')], 3],
    ['an invalid line counts for neither', [line('invalid')], [line('invalid')], 0],
    ['a copy line the copy superseded is not the corrected one', [], [line('superseded')], 0],
  ])('%s', (_, ofCorrected, ofCopy, expected) => {
    expect(takenOverLines(ofCorrected, ofCopy)).toBe(expected);
  });

  it.each<[LineKind, RowState, boolean]>([
    ['held', 'paid', true],
    ['held', 'pending', true],
    ['held', 'queued', false],
    ['held', 'failed', false],
    ['covered', 'paid', false],
    ['invalid', 'paid', false],
  ])('a %s line on a payout %s is covered by it: %s', (kind, state, covered) => {
    expect(heldLinesOnSent([line(kind, state)])).toHaveLength(covered ? 1 : 0);
  });
});

describe('countRepeatsOfFailed: copy rows that repeat a failed payout of the batch it corrects', () => {
  it.each<[string, { orderId: string; payoutState: RowState }[], number]>([
    ['none', [], 0],
    ['a repeat of a failed payout', [{ orderId: 'b-1', payoutState: 'failed' }], 1],
    ['a repeat of a paid payout', [{ orderId: 'b-1', payoutState: 'paid' }], 0],
    ['a repeat of a row never sent', [{ orderId: 'b-1', payoutState: 'queued' }], 0],
    [
      'a row repeating two failed payouts counts once',
      [
        { orderId: 'b-1', payoutState: 'failed' },
        { orderId: 'b-1', payoutState: 'failed' },
        { orderId: 'b-2', payoutState: 'paid' },
      ],
      1,
    ],
  ])('%s', (_, rows, expected) => {
    expect(countRepeatsOfFailed(rows)).toBe(expected);
  });
});

describe('sendableRows: the rows of a copy its answer sends', () => {
  it.each<[RowState, number]>([
    ['queued', 1],
    ['held', 0],
    ['superseded', 0],
  ])('a %s row: %s', (state, expected) => {
    expect(sendableRows([{ state }])).toBe(expected);
  });
});

describe('linesACopyReplaces: the lines of a corrected batch its copy stands for', () => {
  it.each<[LineKind, boolean]>([
    ['invalid', true],
    ['skipped', false],
    ['held', false],
    ['covered', false],
    ['superseded', false],
  ])('a %s line: %s', (kind, replaced) => {
    expect(linesACopyReplaces([{ line: 4, kind }])).toEqual(replaced ? [{ line: 4, kind }] : []);
  });
});
