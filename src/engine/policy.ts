/**
 * Waiting rules, as pure functions of the attempt and a random draw: exponential
 * back-off with full jitter for answers that prove nothing was created, and the grace
 * period before an unknown row may be sent again.
 */

export interface RetryPolicy {
  /** First delay, before jitter. */
  baseMs: number;
  /** No delay is longer than this. */
  capMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { baseMs: 250, capMs: 30_000 };

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): a uniform draw in
 * [0, min(cap, base * 2^(attempt-1))], "full jitter", so a pool of retries spreads out.
 */
export function backoffMs(attempt: number, random: () => number, policy = DEFAULT_RETRY): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}

/**
 * Whether an unknown row may be sent again (DESIGN.md section 5): only after two
 * not-found answers, and only once `graceMs` has passed since its last send, since a
 * request may still be in flight at the gateway when the first lookup misses it.
 */
export function mayResend(
  notFoundAnswers: number,
  lastSentAt: number | null,
  nowMs: number,
  graceMs: number,
): boolean {
  return notFoundAnswers >= 2 && lastSentAt !== null && nowMs - lastSentAt >= graceMs;
}

export interface PollPolicy {
  /** Delay before the first poll, before jitter. */
  firstMs: number;
  /** Each delay is the previous one times this. */
  growth: number;
  capMs: number;
}

/** Polling alone: settlement is usually seconds away. */
export const POLLING: PollPolicy = { firstMs: 2_000, growth: 1.6, capMs: 60_000 };
/**
 * With postbacks, which bring the poll forward: polls are only the safety net for a
 * postback lost on the way, so the first waits a minute.
 */
export const POLLING_WITH_POSTBACKS: PollPolicy = { firstMs: 60_000, growth: 2, capMs: 600_000 };

/**
 * Delay before poll `polls + 1` of a pending payout: growing, with "equal jitter" (a
 * draw in [d/2, d]) so that a batch created together does not poll together, yet no
 * poll comes much earlier than planned.
 */
export function pollDelayMs(polls: number, random: () => number, policy = POLLING): number {
  const delay = Math.min(policy.capMs, policy.firstMs * policy.growth ** Math.max(0, polls));
  return Math.round(delay / 2 + (random() * delay) / 2);
}
