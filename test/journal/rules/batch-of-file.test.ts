import { describe, expect, it } from 'vitest';
import type { BatchState } from '../../../src/journal/batch-states.js';
import { batchOfFile } from '../../../src/journal/rules/batch-of-file.js';
import type { BatchRecord } from '../../../src/journal/types.js';

/** A batch of `folha.csv`'s bytes, read under `fileName`. */
function batch(
  id: number,
  state: BatchState,
  changes: { fileName?: string; awaitingName?: string | null } = {},
): BatchRecord {
  return {
    id,
    fileName: changes.fileName ?? 'folha.csv',
    sha256: 'ab',
    state,
    rows: 2,
    valid: 2,
    invalid: 0,
    totalCents: 100_000,
    problems: [],
    receivedAt: 0,
    awaitingName: changes.awaitingName ?? null,
    heldBecause: null,
    nameKey: 'folha',
    nameNumber: id,
    orderIdHome: null,
    resultName: null,
  };
}

const inProcessing = { name: 'folha.csv', arrived: false };
const justArrived = { name: 'folha.csv', arrived: true };

describe('batchOfFile: which batch these bytes are', () => {
  it.each([
    ['no batch of these bytes', inProcessing, [], 'new', undefined],
    ['one being read when a run died', justArrived, [batch(1, 'admitting')], 'resume', 1],
    ['one left in processing/, open', inProcessing, [batch(1, 'open')], 'same-file', 1],
    ['the same bytes just arrived (next month)', justArrived, [batch(1, 'open')], 'new', undefined],
    ['an earlier batch done', inProcessing, [batch(1, 'done')], 'new', undefined],
    ['an earlier batch refused', inProcessing, [batch(1, 'refused')], 'new', undefined],
    ['an earlier batch unusable', inProcessing, [batch(1, 'unusable')], 'new', undefined],
    [
      'a batch waiting in awaiting-approval/',
      inProcessing,
      [batch(1, 'awaiting-approval', { awaitingName: 'folha.csv' })],
      'new',
      undefined,
    ],
    [
      'of two, the latest read under this name',
      inProcessing,
      [batch(1, 'open'), batch(2, 'underfunded'), batch(3, 'open', { fileName: 'outra.csv' })],
      'same-file',
      2,
    ],
    [
      'under another name, an approved file',
      inProcessing,
      [
        batch(1, 'open', { fileName: 'outra.csv' }),
        batch(2, 'open', { fileName: 'aprovado.csv', awaitingName: 'aprovado.csv' }),
      ],
      'same-file',
      2,
    ],
    [
      'under another name, a file a run moved in and died before reading',
      inProcessing,
      [batch(1, 'open', { fileName: 'outra.csv' })],
      'new',
      undefined,
    ],
  ] as const)('%s', (_, file, earlier, kind, batchId) => {
    const found = batchOfFile(file, earlier);
    expect(found.kind).toBe(kind);
    expect(found.kind === 'new' ? undefined : found.batch.id).toBe(batchId);
  });
});
