import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  batchPollAt,
  claimFreshEnough,
  learnedPollAgeMs,
  mayResend,
  pollDelayMs,
  probeDelayMs,
  settleAgeLearned,
} from '../../src/engine/policy.js';

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

describe('claimFreshEnough', () => {
  it.each([
    [1_000, 1_000, true],
    [1_000, 3_499, true],
    [1_000, 3_500, false],
    [1_000, 60_000, false],
  ])('claimed at %i, its request leaving at %i, a lease of 5 s: %s', (claimedAt, now, fresh) => {
    expect(claimFreshEnough(claimedAt, now, 5_000)).toBe(fresh);
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

describe('learnedPollAgeMs', () => {
  it.each([
    [0, 250],
    [1_000, 1_270],
    [30_000, 30_850],
  ])('a settlement seen %i ms after its send: the others polled %i ms after theirs', (seen, at) => {
    expect(learnedPollAgeMs(seen)).toBe(at);
  });
});

describe('batchPollAt', () => {
  const policy = { firstMs: 1000, growth: 2, capMs: 60_000 };
  const sentAt = 100_000;
  it.each([
    // Learned: polled as long after its own send as the batch settled, a little after.
    [{ sentAt, probe: false }, 30_000, sentAt + 2_000, sentAt + 30_850],
    [{ sentAt, probe: true }, 30_000, sentAt + 2_000, sentAt + 30_850],
    // Learned, and that time has passed (a straggler): its own schedule.
    [{ sentAt, probe: false }, 30_000, sentAt + 30_850, undefined],
    // Nothing learned yet: a probe polls on its own schedule; the others wait, at most
    // the schedule's cap after their send.
    [{ sentAt, probe: true }, undefined, sentAt + 2_000, undefined],
    [{ sentAt, probe: false }, undefined, sentAt + 2_000, sentAt + 60_000],
    [{ sentAt, probe: false }, undefined, sentAt + 60_000, undefined],
    // No send time to count from: its own schedule.
    [{ sentAt: null, probe: false }, 30_000, sentAt, undefined],
    [{ sentAt: null, probe: false }, undefined, sentAt, undefined],
  ])('%j, batch settled after %j ms, at %i: %j', (payout, settledAgeMs, now, at) => {
    expect(batchPollAt(payout, settledAgeMs, now, policy)).toBe(at);
  });
});

describe('probeDelayMs', () => {
  // Growth 4 over 8 probes: each probe's delays a factor of 4^(1/8) after the one before.
  const policy = { firstMs: 1000, growth: 4, capMs: 64_000 };
  it.each([
    [0, 0, 500],
    [0, 4, 1000],
    [0, 7, 1682],
    [1, 0, 2000],
    [1, 4, 4000],
    [2, 4, 16_000],
    [3, 4, 64_000],
    [9, 0, 32_000],
    [9, 4, 64_000],
    // Never past the cap, which the payouts waiting for the batch are promised.
    [9, 7, 64_000],
  ])('after %i polls, probe %i waits %i ms', (polls, probe, ms) => {
    expect(probeDelayMs(polls, probe, policy)).toBe(ms);
  });
});

describe('settleAgeLearned', () => {
  it.each([
    ['paid', 30_000, 30_000],
    // A clock moved back gives no negative age.
    ['paid', -5, 0],
    // A payout refused at once (a bad key) says nothing of when the others are paid.
    ['failed', 800, undefined],
    ['canceled', 800, undefined],
    ['refunded', 800, undefined],
    ['pending', 800, undefined],
    ['conflict', 800, undefined],
  ] as const)('a poll that moves a payout to %s %i ms after its send teaches %j', (to, age, at) => {
    expect(settleAgeLearned(to, age)).toBe(at);
  });
});
