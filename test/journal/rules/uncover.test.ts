import { describe, expect, it } from 'vitest';
import { failedBeforeSaid, type Covering } from '../../../src/journal/admission.js';
import type { BatchState } from '../../../src/journal/batch-states.js';
import {
  coveredThrough,
  endsCover,
  planUncover,
  reopens,
  type LinkedRow,
} from '../../../src/journal/rules/uncover.js';
import type { HoldReason, RowState } from '../../../src/journal/states.js';

/** Ana's payout of `folha.csv`, line 2, that ended failed at the gateway. */
const failed: Covering = {
  orderId: 'a-1',
  batchId: 1,
  line: 2,
  state: 'failed',
  valueCents: 70_000,
  fileName: 'folha.csv',
  admittedAt: 0,
  transactionId: 7,
  reference: null,
};

/** A row of `folha_reenvio.csv` (batch 2, done) covered by `coveredBy`. */
function linked(
  orderId: string,
  changes: {
    coveredBy?: string;
    state?: RowState;
    holdReason?: HoldReason | null;
    batchId?: number;
    batchState?: BatchState;
  } = {},
): LinkedRow {
  return {
    orderId,
    coveredBy: changes.coveredBy ?? 'a-1',
    state: changes.state ?? 'covered',
    holdReason: changes.holdReason ?? null,
    batchId: changes.batchId ?? 2,
    batchState: changes.batchState ?? 'done',
    fileName: 'folha_reenvio.csv',
  };
}

describe('endsCover: an answer that proves a payout did not pay, or a conflict', () => {
  it.each([
    ['sending', 'failed', true],
    ['sending', 'rejected', true],
    ['pending', 'canceled', true],
    ['paid', 'refunded', true],
    ['sending', 'paid', false],
    ['sending', 'pending', false],
    // Another transaction under its orderId: no money is known to have left by it.
    ['pending', 'conflict', true],
    ['unknown', 'conflict', true],
    // A failed row read again says nothing new.
    ['failed', 'failed', false],
  ] as const)('%s to %s: %s', (from, to, expected) => {
    expect(endsCover(from, to)).toBe(expected);
  });
});

describe('reopens', () => {
  it.each([
    ['done', true],
    ['open', false],
    ['awaiting-approval', false],
    ['refused', false],
  ] as const)('a batch %s: %s', (state, expected) => {
    expect(reopens(state)).toBe(expected);
  });
});

describe('coveredThrough: the rows a payout covers', () => {
  it('follows covered copies of copies, and stops at any row not covered', () => {
    const rows = [
      linked('b-1'),
      linked('c-1', { coveredBy: 'b-1', batchId: 3 }),
      // Held as a possible duplicate of a-1: a person weighs it, not the cover.
      linked('d-1', { state: 'held', holdReason: 'duplicate' }),
      linked('e-1', { coveredBy: 'd-1', batchId: 4 }),
    ];
    expect(coveredThrough('a-1', rows).map((row) => row.orderId)).toEqual(['b-1', 'c-1']);
  });

  it('takes each row once, however the links return to it', () => {
    const rows = [
      linked('b-1'),
      linked('c-1', { coveredBy: 'b-1' }),
      linked('a-1', { coveredBy: 'c-1' }),
    ];
    expect(coveredThrough('a-1', rows).map((row) => row.orderId)).toEqual(['b-1', 'c-1']);
  });
});

describe('planUncover: covered follows its cover', () => {
  const said = failedBeforeSaid(failed);
  const ended = { code: 'auditCoverEnded', orderId: 'a-1', state: 'failed', said };

  it('holds each row it covered as a repeat of it, and opens their done batches once', () => {
    const rows = [
      linked('b-1'),
      linked('b-2'),
      linked('c-1', { coveredBy: 'b-1', batchId: 3, batchState: 'awaiting-approval' }),
    ];
    expect(planUncover(failed, rows)).toEqual({
      moves: ['b-1', 'b-2', 'c-1'].map((orderId) => ({
        orderId,
        from: 'covered',
        to: 'held',
        fields: { holdReason: 'failed-before', coveredBy: 'a-1', said },
        reason: { code: 'held', said: ended },
      })),
      why: ended,
      reopen: [2],
    });
  });

  it('holds each row a payout in conflict covered as its possible duplicate, naming the command that frees it', () => {
    const conflict: Covering = { ...failed, state: 'conflict' };
    const why = { ...ended, state: 'conflict', said: failedBeforeSaid(conflict) };
    const rows = [
      linked('b-1'),
      linked('c-1', { coveredBy: 'b-1', batchId: 3, batchState: 'open' }),
    ];
    expect(planUncover(conflict, rows)).toEqual({
      moves: ['b-1', 'c-1'].map((orderId) => ({
        orderId,
        from: 'covered',
        to: 'held',
        fields: {
          holdReason: 'duplicate',
          coveredBy: 'a-1',
          said: {
            code: 'heldCoverConflict',
            file: 'folha.csv',
            line: 2,
            orderId: 'a-1',
            newFile: 'folha_reenvio.csv',
            hintFlags: '',
          },
        },
        reason: { code: 'held', said: why },
      })),
      why,
      reopen: [2],
    });
  });

  it('moves nothing when it covered nothing', () => {
    const rows = [linked('d-1', { state: 'held', holdReason: 'duplicate' })];
    expect(planUncover(failed, rows)).toEqual({ moves: [], why: ended, reopen: [] });
  });
});
