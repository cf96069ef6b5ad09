import { describe, expect, it } from 'vitest';
import { requestBudget } from '../../src/engine/budget.js';

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

  it('available never counts past what is asked', () => {
    const budget = requestBudget(1000);
    expect(budget.available(0, 3)).toBe(3);
  });
});
