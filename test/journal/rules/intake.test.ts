import { describe, expect, it } from 'vitest';
import type { BatchState } from '../../../src/journal/batch-states.js';
import { earlierBatchOf } from '../../../src/journal/rules/intake.js';
import type { BatchRecord } from '../../../src/journal/types.js';

const batch = (
  id: number,
  state: BatchState,
  fileName = 'folha.csv',
  awaitingName: string | null = null,
): BatchRecord => ({
  id,
  state,
  fileName,
  awaitingName,
  sha256: 'f1',
  receivedAt: 0,
  rows: 1,
  valid: 1,
  invalid: 0,
  totalCents: 1000,
  problems: [],
  heldBecause: null,
  nameKey: 'folha',
  nameNumber: id,
  orderIdHome: null,
  resultName: null,
});

const file = (arrived: boolean, name = 'folha.csv') => ({
  name,
  nameKey: 'folha',
  sha256: 'f1',
  arrived,
});

describe('the batch a file belongs to, by the batches its bytes made before', () => {
  it.each([
    ['nothing before: a batch of its own', file(false), [], undefined],
    ['an admission a dead run left: resumed', file(true), [batch(1, 'admitting')], ['resume', 1]],
    ['left in processing/: followed', file(false), [batch(1, 'open')], ['same-file', 1]],
    ['just arrived with the same bytes: its own', file(true), [batch(1, 'open')], undefined],
    ['of a batch done: its own', file(false), [batch(1, 'done')], undefined],
    ['of a batch turned down: its own', file(false), [batch(1, 'refused')], undefined],
    [
      'of a batch still waiting in awaiting-approval/: its own',
      file(false),
      [batch(1, 'awaiting-approval', 'folha.csv', 'folha.csv')],
      undefined,
    ],
    [
      'of several: the one read under this name',
      file(false),
      [batch(1, 'open'), batch(2, 'open', 'outra.csv'), batch(3, 'open')],
      ['same-file', 3],
    ],
    [
      'under another name: only an approved file',
      file(false, 'copia.csv'),
      [batch(1, 'open'), batch(2, 'open', 'approved.csv', 'approved.csv')],
      ['same-file', 2],
    ],
    [
      'under another name, never approved: its own',
      file(false, 'copia.csv'),
      [batch(1, 'open')],
      undefined,
    ],
  ] as const)('%s', (_, arriving, earlier, expected) => {
    const found = earlierBatchOf(arriving, earlier);
    expect(found && [found.kind, found.batch.id]).toEqual(expected);
  });
});
