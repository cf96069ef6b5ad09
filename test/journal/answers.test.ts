/** What a person's answer frees of a file's held rows, and the answers a summary offers. */
import { describe, expect, it } from 'vitest';
import { newBatchRelease, payeesOf, readingsOf } from '../../src/journal/answers.js';
import type { HeldRow } from '../../src/journal/journal.js';

const row = (line: number, reason: HeldRow['reason'], repeatsOf?: number): HeldRow => ({
  orderId: `folha-2-${line}`,
  line,
  name: `Pessoa ${line}`,
  cents: line * 100,
  reason,
  message: null,
  said: null,
  repeats:
    repeatsOf === undefined
      ? null
      : {
          orderId: `folha-${repeatsOf}-${line}`,
          batchId: repeatsOf,
          fileName: 'folha.csv',
          line,
          at: 0,
          state: 'paid',
        },
});

const lines = (rows: readonly HeldRow[]) => rows.map((held) => held.line);

describe('newBatchRelease', () => {
  const held = [
    row(2, 'duplicate', 1),
    row(3, 'duplicate', 1),
    row(4, 'same-name'),
    row(5, 'identical'),
  ];
  it.each([
    { repeats: undefined, free: [4], differ: false },
    { repeats: 2, free: [4, 2, 3], differ: false },
    { repeats: 1, free: [], differ: true },
    { repeats: 3, free: [], differ: true },
  ])('with --repeats $repeats frees lines $free', ({ repeats, free, differ }) => {
    const answer = newBatchRelease(held, repeats);
    expect(lines(answer.free)).toEqual(free);
    expect(lines(answer.repeating)).toEqual([2, 3]);
    expect(answer.differ).toBe(differ);
  });
});

describe('newBatchRelease, a corrected key', () => {
  // Its payout went to another key: paying the right one pays that person again.
  const held = [row(2, 'changes-payee', 1), row(3, 'same-name')];
  it.each([
    { repeats: undefined, free: [3] },
    { repeats: 1, free: [3, 2] },
  ])('with --repeats $repeats frees lines $free', ({ repeats, free }) => {
    const answer = newBatchRelease(held, repeats);
    expect(lines(answer.free)).toEqual(free);
    expect(lines(answer.repeating)).toEqual([2]);
  });
});

describe('newBatchRelease, row by row', () => {
  const held = [row(2, 'duplicate', 1), row(3, 'duplicate', 1), row(4, 'same-name')];
  it.each([
    { pick: { rows: [2, 4] }, repeats: 1, free: [4, 2], repeating: [2], notHeld: [] },
    { pick: { except: [3] }, repeats: undefined, free: [4], repeating: [2], notHeld: [] },
    { pick: { except: [3] }, repeats: 2, free: [], repeating: [2], notHeld: [] },
    { pick: { rows: [4, 9] }, repeats: undefined, free: [], repeating: [], notHeld: [9] },
  ])(
    '$pick with --repeats $repeats frees lines $free',
    ({ pick, repeats, free, repeating, notHeld }) => {
      const answer = newBatchRelease(held, repeats, pick);
      expect(lines(answer.free)).toEqual(free);
      expect(lines(answer.repeating)).toEqual(repeating);
      expect(answer.notHeld).toEqual(notHeld);
    },
  );
});

describe('readingsOf', () => {
  const codes = (said: ReturnType<typeof readingsOf>) => said.map((reading) => reading.code);
  const base = { file: 'folha.csv', hintFlags: '' };
  const split = (held: HeldRow[]) => {
    const { free, repeating } = newBatchRelease(held, undefined);
    return { fresh: payeesOf(free), repeating };
  };
  it.each([
    {
      case: 'every row of the earlier batch repeated, one added: the correction first',
      held: [row(2, 'duplicate', 1), row(3, 'duplicate', 1), row(4, 'same-name')],
      sameName: { batchId: 1, rows: 2 },
      readings: ['readingCorrects', 'readingNewBatch'],
    },
    {
      case: 'a row of the earlier batch left out: new payments only',
      held: [row(2, 'duplicate', 1), row(4, 'same-name')],
      sameName: { batchId: 1, rows: 2 },
      readings: ['readingNewBatch'],
    },
    {
      case: 'next month, nothing repeated within the window: new payments only',
      held: [row(2, 'same-name'), row(3, 'same-name')],
      sameName: { batchId: 1, rows: 2 },
      readings: ['readingNewBatch'],
    },
    {
      case: 'a re-export under another name: new payments only',
      held: [row(2, 'duplicate', 1), row(3, 'duplicate', 1)],
      sameName: undefined,
      readings: ['readingNewBatch'],
    },
    {
      case: 'rows held for other reasons only: none',
      held: [row(2, 'identical')],
      sameName: undefined,
      readings: [],
    },
  ])('$case', ({ held, sameName, readings }) => {
    expect(
      codes(readingsOf({ ...base, ...split(held), ...(sameName ? { sameName } : {}) })),
    ).toEqual(readings);
  });

  it('counts and sums what each answer pays, the repeats apart', () => {
    const [corrects, newBatch] = readingsOf({
      ...base,
      ...split([row(2, 'duplicate', 1), row(3, 'same-name'), row(4, 'same-name')]),
      sameName: { batchId: 1, rows: 1 },
    });
    expect(corrects).toMatchObject({ batchId: 1, pays: { rows: 2, cents: 700 } });
    expect(newBatch).toMatchObject({
      pays: { rows: 2, cents: 700, first: [{ name: 'Pessoa 3' }, { name: 'Pessoa 4' }] },
      repeating: { rows: 1, cents: 200, first: [{ name: 'Pessoa 2', cents: 200 }] },
    });
  });
});
