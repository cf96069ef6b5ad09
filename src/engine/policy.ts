/**
 * Waiting rules, as pure functions of the attempt and a random draw: exponential
 * back-off with full jitter for answers that prove nothing was created, the grace
 * period before an unknown row may be sent again, and when a pending payout is polled.
 */
import type { RowState } from '../journal/states.js';

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
 * Whether an unknown row may be sent again: only after two
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

/**
 * Whether a claimed row's request may still leave, checked the moment before it does: its
 * claim younger than half its lease. A process frozen past that (SIGSTOP, a VM paused, a
 * long GC) may have lost the row to another run, which sends it; so it gives the row back
 * unsent. Ages are read on the process's monotonic clock, which no clock step moves.
 */
export function claimFreshEnough(claimedAtMs: number, nowMs: number, leaseMs: number): boolean {
  return nowMs - claimedAtMs < leaseMs / 2;
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

/**
 * Payouts of a batch polled on their own growing schedule until one of the batch is seen
 * settled (the probes). The others wait for what the probes learn: a batch sent together
 * mostly settles together, so polling every payout on its own schedule spends one
 * request per step per payout to learn what a few payouts show.
 */
export const PROBES_PER_BATCH = 8;

/**
 * How long after its send a payout is polled once a payout of its batch was seen settled
 * `settledAgeMs` after its own send: a little later, so that payouts whose request took
 * longer to reach the gateway, or whose settlement ran a little late, are settled too.
 */
export function learnedPollAgeMs(settledAgeMs: number): number {
  return Math.round(settledAgeMs * 1.02) + 250;
}

/**
 * Delay before poll `polls + 1` of a batch's probe number `probe` (from 0): the growing
 * schedule, each probe's stretched by its own factor between growth^-1/2 and growth^1/2
 * rather than jittered, so that together the probes look at ages a fraction of a step
 * apart (1.6^(1/8), 6%, with POLLING) and the batch's settle time is learned within
 * that fraction, where jittered probes bunch up and learn it within most of a step.
 */
export function probeDelayMs(polls: number, probe: number, policy = POLLING): number {
  const delay = Math.min(policy.capMs, policy.firstMs * policy.growth ** Math.max(0, polls));
  return Math.min(
    policy.capMs,
    Math.round(delay * policy.growth ** (probe / PROBES_PER_BATCH - 1 / 2)),
  );
}

/**
 * What a poll teaches its batch of when the others settle: the time from a send to a
 * payout paid. A payout failed or canceled at once (a key refused) says nothing of when
 * the others are paid, and a clock moved back gives no negative age.
 */
export function settleAgeLearned(to: RowState, ageMs: number): number | undefined {
  return to === 'paid' ? Math.max(0, ageMs) : undefined;
}

/**
 * When a payout's next poll waits for its batch rather than its own schedule, or
 * undefined when its own schedule applies (see `pollDelayMs`):
 *   - its batch was seen settling `settledAgeMs` after a send: polled that long after its
 *     own send (`learnedPollAgeMs`), unless that time has passed (a straggler: its own
 *     schedule from there);
 *   - nothing of its batch seen settled yet, and not a probe: polled `capMs` after its
 *     send at the latest, so a batch whose probes tell nothing is still followed, at the
 *     schedule's slowest pace;
 *   - a probe, a payout past those times, or one with no send time: undefined.
 */
export function batchPollAt(
  payout: { sentAt: number | null; probe: boolean },
  settledAgeMs: number | undefined,
  now: number,
  policy = POLLING,
): number | undefined {
  if (payout.sentAt === null) return undefined;
  const at =
    settledAgeMs !== undefined
      ? payout.sentAt + learnedPollAgeMs(settledAgeMs)
      : payout.probe
        ? undefined
        : payout.sentAt + policy.capMs;
  return at !== undefined && at > now ? at : undefined;
}
