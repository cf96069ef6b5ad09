import { describe, expect, it } from 'vitest';
import { backoffMs, mayResend, pollDelayMs } from '../../src/engine/policy.js';

describe('backoffMs', () => {
  const policy = { baseMs: 100, capMs: 1000 };
  it.each([
    [1, 1, 100],
    [2, 1, 200],
    [3, 1, 400],
    [4, 1, 800],
    [5, 1, 1000],
    [50, 1, 1000],
    [3, 0, 0],
    [3, 0.5, 200],
  ])('attempt %i with draw %d waits %i ms', (attempt, draw, ms) => {
    expect(backoffMs(attempt, () => draw, policy)).toBe(ms);
  });
});

describe('mayResend', () => {
  it.each([
    [0, 0, 10_000, false],
    [1, 0, 10_000, false],
    [2, 0, 9_999, false],
    [2, 0, 10_000, true],
    [3, 0, 50_000, true],
    [2, null, 50_000, false],
  ])('%i not-found answers, sent at %j, now %i: %s', (notFound, sentAt, now, allowed) => {
    expect(mayResend(notFound, sentAt, now, 10_000)).toBe(allowed);
  });
});

describe('pollDelayMs', () => {
  const policy = { firstMs: 1000, growth: 2, capMs: 5000 };
  it.each([
    [0, 1, 1000],
    [1, 1, 2000],
    [2, 1, 4000],
    [3, 1, 5000],
    [40, 1, 5000],
    // Equal jitter: never under half the planned delay.
    [0, 0, 500],
    [2, 0, 2000],
    [2, 0.5, 3000],
  ])('after %i polls, with draw %d, waits %i ms', (polls, draw, ms) => {
    expect(pollDelayMs(polls, () => draw, policy)).toBe(ms);
  });
});
