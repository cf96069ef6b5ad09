import { describe, expect, it } from 'vitest';
import { planFunding } from '../../src/engine/balance.js';
import { sayInEnglish } from '../../src/messages/say.js';
import { inEnglish } from '../support/english.js';

const batches = [
  { batchId: 1, cents: 60_000 },
  { batchId: 2, cents: 50_000 },
  { batchId: 3, cents: 30_000 },
];

describe('planFunding', () => {
  it('funds batches oldest first, and blocks the one the balance does not cover', () => {
    expect(inEnglish(planFunding(batches, 100_000, 'block'))).toEqual({
      open: [1, 3],
      underfunded: [
        {
          batchId: 2,
          why: "the balance leaves R$ 400,00 for this batch's R$ 500,00 (balanceCheck: block): nothing of it is sent",
        },
      ],
      warnings: [],
    });
  });

  it('sends with a warning when set to warn, and checks nothing when off', () => {
    const warned = planFunding(batches, 100_000, 'warn');
    expect(warned.open).toEqual([1, 2, 3]);
    expect(warned.warnings).toHaveLength(2);
    expect(planFunding(batches, 0, 'off')).toEqual({
      open: [1, 2, 3],
      underfunded: [],
      warnings: [],
    });
  });

  it('blocks everything when the balance cannot be read', () => {
    const plan = planFunding(batches, undefined, 'block', 'unavailable: no connection');
    expect(plan.open).toEqual([]);
    expect(sayInEnglish(plan.underfunded[0]?.why ?? { code: 'empty' })).toMatch(
      /could not be read \(unavailable: no connection\)/,
    );
  });

  it.each([
    // values R$ 600,00 + R$ 500,00 in 3 + 2 payouts, a fee of R$ 1,00 each
    ['funded to the cent for values and fees', 110_500, [1, 2], []],
    ['funded for the values alone: the second batch waits', 110_000, [1], [2]],
    ['neither batch with its fees', 50_100, [], [1, 2]],
  ])('with a fee per payout: %s', (_case, balance, open, held) => {
    const withCounts = [
      { batchId: 1, cents: 60_000, count: 3 },
      { batchId: 2, cents: 50_000, count: 2 },
    ];
    const plan = planFunding(withCounts, balance, 'block', undefined, 100);
    expect(plan.open).toEqual(open);
    expect(plan.underfunded.map((batch) => batch.batchId)).toEqual(held);
  });

  it('says what the fees add when they are what the balance lacks', () => {
    const plan = planFunding(
      [{ batchId: 1, cents: 60_000, count: 3 }],
      60_000,
      'block',
      undefined,
      100,
    );
    expect(sayInEnglish(plan.underfunded[0]?.why ?? { code: 'empty' })).toBe(
      "the balance leaves R$ 600,00 for this batch's R$ 603,00 (R$ 600,00 in 3 payouts and R$ 3,00 in fees at R$ 1,00 each, feePerPayoutCents) (balanceCheck: block): nothing of it is sent",
    );
  });

  it('counts one payout as one payout', () => {
    const plan = planFunding([{ batchId: 1, cents: 600, count: 1 }], 600, 'block', undefined, 100);
    expect(sayInEnglish(plan.underfunded[0]?.why ?? { code: 'empty' })).toContain(
      '(R$ 6,00 in 1 payout and R$ 1,00 in fees',
    );
  });
});
