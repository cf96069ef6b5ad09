import { describe, expect, it } from 'vitest';
import type { BatchState } from '../../../src/journal/batch-states.js';
import {
  claimRange,
  coverOf,
  coverSince,
  failedRepeated,
  holdAtClaim,
  paidSince,
  WHOLE_JOURNAL,
  type CoverCandidate,
  type CoverKey,
} from '../../../src/journal/rules/cover.js';
import type { RowState } from '../../../src/journal/states.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-11-23T12:00:00Z');
const since = coverSince(NOW, { duplicateWindowMs: 20 * DAY });

/** A payout of `folha.csv` (batch 1) to Ana of R$ 1.000,00, paid a day ago, covering nothing. */
function candidate(
  changes: {
    orderId?: string;
    batchId?: number;
    state?: RowState;
    valueCents?: number;
    reference?: string | null;
    journalOrder?: number;
    lastSentAt?: number | null;
    updatedAt?: number;
    batchState?: BatchState;
    coveredRows?: CoverCandidate['coveredRows'];
  } = {},
): CoverCandidate {
  return {
    covering: {
      orderId: changes.orderId ?? 'a-1',
      batchId: changes.batchId ?? 1,
      line: 2,
      state: changes.state ?? 'paid',
      valueCents: changes.valueCents ?? 100_000,
      fileName: 'folha.csv',
      admittedAt: NOW - 2 * DAY,
      transactionId: 7,
      reference: changes.reference ?? null,
    },
    journalOrder: changes.journalOrder ?? 10,
    lastSentAt: changes.lastSentAt === undefined ? NOW - DAY : changes.lastSentAt,
    updatedAt: changes.updatedAt ?? NOW - DAY,
    batchState: changes.batchState ?? 'done',
    coveredRows: changes.coveredRows ?? [],
  };
}

/** Ana's row of R$ 1.000,00 in `folha_final.csv` (batch 2). */
const key = (reference: string | null = null, valueCents = 100_000): CoverKey => ({
  orderId: 'b-1',
  document: '52998224725',
  valueCents,
  reference,
});

const covers = (
  row: CoverKey,
  candidates: CoverCandidate[],
  range = WHOLE_JOURNAL,
): string | undefined => coverOf(row, 2, candidates, { since, range })?.orderId;

describe('coverOf: the payout that covers a row (rule 2)', () => {
  it.each<[string, CoverCandidate, boolean]>([
    ['paid a day ago, same document and amount', candidate(), true],
    ['another amount', candidate({ valueCents: 99_000 }), false],
    [
      'sent 25 days ago, settled 25 days ago',
      candidate({ lastSentAt: NOW - 25 * DAY, updatedAt: NOW - 25 * DAY }),
      false,
    ],
    [
      'journaled 25 days ago, held for balance, paid 6 days ago',
      candidate({ lastSentAt: NOW - 6 * DAY, updatedAt: NOW - 6 * DAY }),
      true,
    ],
    [
      'sent 25 days ago, settled 2 days ago',
      candidate({ lastSentAt: NOW - 25 * DAY, updatedAt: NOW - 2 * DAY }),
      true,
    ],
    [
      'queued 60 days ago, never sent: counts as today',
      candidate({ state: 'queued', lastSentAt: null, updatedAt: NOW - 60 * DAY }),
      true,
    ],
    [
      'held 60 days ago, never sent',
      candidate({ state: 'held', lastSentAt: null, updatedAt: NOW - 60 * DAY }),
      false,
    ],
    ['pending', candidate({ state: 'pending' }), true],
    ['covered (a copy of a paid payout)', candidate({ state: 'covered' }), true],
    ['failed at the gateway', candidate({ state: 'failed' }), false],
    ['refused by the gateway', candidate({ state: 'rejected' }), false],
    ['superseded by a copy', candidate({ state: 'superseded' }), false],
    ['of a file turned down', candidate({ state: 'queued', batchState: 'refused' }), false],
    ['of an unusable file', candidate({ state: 'queued', batchState: 'unusable' }), false],
    ['of the row own file', candidate({ batchId: 2 }), false],
    ['the row itself', candidate({ orderId: 'b-1' }), false],
    [
      'covering another row already',
      candidate({ coveredRows: [{ state: 'covered', batchState: 'done' }] }),
      false,
    ],
    [
      'holding another row as its possible duplicate',
      candidate({ coveredRows: [{ state: 'held', batchState: 'open' }] }),
      false,
    ],
    [
      'having covered a row of a file turned down',
      candidate({ coveredRows: [{ state: 'held', batchState: 'refused' }] }),
      true,
    ],
    [
      'having covered a row since sent again',
      candidate({ coveredRows: [{ state: 'queued', batchState: 'open' }] }),
      true,
    ],
  ])('without a reference: %s', (_, payout, expected) => {
    expect(covers(key(), [payout])).toBe(expected ? 'a-1' : undefined);
  });

  it.each<[string, CoverKey, CoverCandidate, boolean]>([
    ['another reference, same amount', key('nf-1002'), candidate({ reference: 'nf-1001' }), false],
    [
      'the same reference a year ago',
      key('nf-1001'),
      candidate({ reference: 'nf-1001', lastSentAt: NOW - 365 * DAY, updatedAt: NOW - 365 * DAY }),
      true,
    ],
    [
      'the same reference, another amount',
      key('nf-1001', 420_000),
      candidate({ reference: 'nf-1001' }),
      true,
    ],
    [
      'the same month, another amount',
      key('2026-11', 420_000),
      candidate({ reference: '2026-11' }),
      false,
    ],
    [
      'the same month and amount, in February',
      key('2026-11'),
      candidate({ reference: '2026-11', lastSentAt: NOW - 90 * DAY, updatedAt: NOW - 90 * DAY }),
      true,
    ],
    ['a payout without one, within the window', key('nf-1001'), candidate(), true],
    [
      'a payout without one, beyond the window',
      key('nf-1001'),
      candidate({ lastSentAt: NOW - 25 * DAY, updatedAt: NOW - 25 * DAY }),
      false,
    ],
    [
      'a row without one, a payout with one, within the window',
      key(),
      candidate({ reference: 'nf-1001' }),
      true,
    ],
  ])('with a reference: %s', (_, row, payout, expected) => {
    expect(covers(row, [payout])).toBe(expected ? 'a-1' : undefined);
  });

  it('is the first journaled of those that cover, not the first read', () => {
    const later = candidate({ orderId: 'c-1', journalOrder: 30 });
    const earlier = candidate({ orderId: 'a-1', journalOrder: 20 });
    expect(covers(key(), [later, earlier])).toBe('a-1');
  });

  it.each<[string, number, RowState, boolean]>([
    ['journaled before the row', 10, 'queued', true],
    ['journaled after the row, unsent', 40, 'queued', false],
    ['journaled after the row, sent since', 40, 'pending', true],
  ])('claiming a row journaled 30th: a payout %s', (_, journalOrder, state, expected) => {
    const range = claimRange({ journalOrder: 30, releasedAt: null, confirmedOrder: null });
    const payout = candidate({ journalOrder, state, lastSentAt: null, updatedAt: NOW });
    expect(covers(key(), [payout], range)).toBe(expected ? 'a-1' : undefined);
  });

  it.each<[string, number, boolean]>([
    ['journaled before the row', 10, false],
    ['the repeat the person confirmed', 35, false],
    ['journaled after both, sent since', 40, true],
  ])('a row a person released: a payout %s', (_, journalOrder, expected) => {
    const range = claimRange({ journalOrder: 30, releasedAt: NOW, confirmedOrder: 35 });
    expect(covers(key(), [candidate({ journalOrder })], range)).toBe(expected ? 'a-1' : undefined);
  });
});

describe('paidSince: a payout that paid a failed payout person since', () => {
  const failed = { batchId: 1, valueCents: 100_000 };
  const weigh = (payout: CoverCandidate, copies: string[] = []) =>
    paidSince(failed, [payout], { since, copies: new Set(copies) })?.orderId;

  it.each<[string, CoverCandidate, string[], boolean]>([
    ['another file paid them', candidate({ orderId: 'c-1', batchId: 3 }), [], true],
    ['its own copy, held as its repeat', candidate({ orderId: 'c-1', batchId: 3 }), ['c-1'], false],
    ['its own file', candidate({ orderId: 'c-1', batchId: 1 }), [], false],
    [
      'beyond the window',
      candidate({ batchId: 3, lastSentAt: NOW - 25 * DAY, updatedAt: NOW - 25 * DAY }),
      [],
      false,
    ],
    ['failed too', candidate({ batchId: 3, state: 'failed' }), [], false],
    ['of a file turned down', candidate({ batchId: 3, batchState: 'refused' }), [], false],
  ])('%s', (_, payout, copies, expected) => {
    expect(weigh(payout, copies)).toBe(expected ? payout.covering.orderId : undefined);
  });
});

describe('failedRepeated: a failed payout a row repeats unchanged (rule 5)', () => {
  const row = { valueCents: 100_000, pixKey: 'ana@example.com' };
  const failed = (changes: Parameters<typeof candidate>[0], pixKey = 'ana@example.com') => ({
    ...candidate({ state: 'failed', ...changes }),
    pixKey,
  });

  it.each<[string, ReturnType<typeof failed>, boolean]>([
    ['failed a day ago, same key', failed({}), true],
    ['refunded', failed({ state: 'refunded' }), true],
    ['paid', failed({ state: 'paid' }), false],
    ['another key: a fix', failed({}, 'ana@example.org'), false],
    ['beyond the window', failed({ lastSentAt: NOW - 25 * DAY, updatedAt: NOW - 25 * DAY }), false],
  ])('%s', (_, payout, expected) => {
    expect(failedRepeated(row, [payout], since)?.orderId).toBe(expected ? 'a-1' : undefined);
  });
});

describe('holdAtClaim: why a claim holds a row another payout now covers', () => {
  const row = {
    key: key(),
    batchId: 2,
    journalOrder: 7,
    releasedAt: null,
    confirmedOrder: null,
  };
  it.each(['claimed', 'correctionAnswered'] as const)('names its cover, audited as %s', (when) => {
    const { covering } = candidate();
    const hold = holdAtClaim(row, covering, 'folha_final.csv', { duplicateWindowMs: DAY }, when);
    expect(hold.coveredBy).toBe('a-1');
    expect(hold.said).toMatchObject({ code: 'heldDuplicate', file: 'folha.csv', line: 2 });
    expect(hold.reason).toEqual({ code: 'auditCheckedAgain', when, said: hold.said });
  });
});
