import { describe, expect, it } from 'vitest';
import { planFunding } from '../../src/engine/balance.js';

const batches = [
  { batchId: 1, cents: 60_000 },
  { batchId: 2, cents: 50_000 },
  { batchId: 3, cents: 30_000 },
];

describe('planFunding', () => {
  it('funds batches oldest first, and blocks the one the balance does not cover', () => {
    expect(planFunding(batches, 100_000, 'block')).toEqual({
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
    expect(plan.underfunded[0]?.why).toMatch(/could not be read \(unavailable: no connection\)/);
  });
});
