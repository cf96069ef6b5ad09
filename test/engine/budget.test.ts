import { describe, expect, it } from 'vitest';
import { requestBudget, shareOf } from '../../src/engine/budget.js';

describe('requestBudget', () => {
  it('grants everything when there is no cap', () => {
    const budget = requestBudget(null);
    expect(budget.available(0, 500)).toBe(500);
    expect(budget.take(500, 0)).toBe(500);
    expect(budget.nextAt(7)).toBe(7);
  });

  it.each([
    // [per second, steps of [time, wanted, granted]]
    [
      3,
      [
        [0, 5, 3],
        [500, 1, 0],
        [999, 1, 0],
        [1000, 5, 3],
        [1500, 2, 0],
      ],
    ],
    [
      2,
      [
        [0, 1, 1],
        [400, 1, 1],
        [900, 1, 0],
        [1000, 2, 1],
        [1400, 2, 1],
        [2000, 1, 1],
      ],
    ],
    [
      1,
      [
        [0, 1, 1],
        [10, 1, 0],
        [1000, 1, 1],
      ],
    ],
  ] as const)('at most %i starts in any second', (perSecond, steps) => {
    const budget = requestBudget(perSecond);
    for (const [at, wanted, granted] of steps) {
      expect({ at, available: budget.available(at, wanted) }).toEqual({ at, available: granted });
      expect({ at, took: budget.take(wanted, at) }).toEqual({ at, took: granted });
    }
  });

  it('says when the next start is free', () => {
    const budget = requestBudget(2);
    expect(budget.nextAt(0)).toBe(0);
    budget.take(1, 100);
    budget.take(1, 300);
    expect(budget.nextAt(400)).toBe(1100);
    budget.take(1, 1100);
    expect(budget.nextAt(1100)).toBe(1300);
  });

  it('keeps to a part of its cap: the starts already made count, and a larger part frees at once', () => {
    const budget = requestBudget(4);
    expect(budget.take(4, 0)).toBe(4);
    budget.keepTo(2);
    expect(budget.available(500, 4)).toBe(0);
    expect(budget.nextAt(500)).toBe(1000);
    expect(budget.take(4, 1000)).toBe(2);
    expect(budget.available(1500, 4)).toBe(0);
    budget.keepTo(4);
    expect(budget.available(1500, 4)).toBe(2);
    budget.keepTo(0);
    expect(budget.available(5000, 4)).toBe(0);
    expect(budget.nextAt(5000)).toBe(6000);
  });

  it('available never counts past what is asked', () => {
    const budget = requestBudget(1000);
    expect(budget.available(0, 3)).toBe(3);
  });
});

describe("shareOf: a host's part of a limit the hosts sending keep together", () => {
  it.each([
    // [limit, the other hosts, this host, its part]
    [10, [], 'pay-1', 10],
    [10, ['pay-2'], 'pay-1', 5],
    [10, ['pay-1', 'pay-3'], 'pay-2', 3],
    [10, ['pay-2', 'pay-3'], 'pay-1', 4],
    [2, ['pay-1', 'pay-2'], 'pay-3', 0],
    [2, ['pay-2', 'pay-3'], 'pay-1', 1],
  ] as const)('%i among %j: %s takes %i', (limit, others, me, part) => {
    expect(shareOf(limit, others, me)).toBe(part);
  });

  it('the parts of every host add up to the limit', () => {
    const hosts = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    for (const limit of [1, 5, 7, 10, 23]) {
      const parts = hosts.map((me) => shareOf(limit, hosts, me));
      expect(parts.reduce((sum, part) => sum + part, 0)).toBe(limit);
    }
  });
});
