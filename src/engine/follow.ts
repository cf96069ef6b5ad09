/**
 * Following: pending payouts are polled by transactionId, each on its own growing,
 * jittered schedule kept in the journal, until they settle (paid, failed, canceled,
 * refunded) or the follow window ends. Rows still pending then are picked up by the
 * next run, on the same schedule. A postback only brings a row's poll forward
 * (`Doorbell`): the gateway's GET answer is the only truth.
 */
import { mapStatus } from '../gateway/status.js';
import type { Claim, Journal } from '../journal/journal.js';
import { decidePoll, type Decision } from './decisions.js';
import {
  answerOf,
  record,
  inFlightSignal,
  requestSlots,
  settleAll,
  type EngineDeps,
  type EngineOptions,
} from './engine.js';
import { pollDelayMs } from './policy.js';

export interface FollowOptions extends EngineOptions {
  /** Follow until this time (ms since the epoch), or until nothing is pending. */
  until: number;
  /** Rung when a poll was brought forward, so an idle loop looks again at once. */
  doorbell?: Doorbell;
  /** Told the first time each status word we do not know is seen (`warned` remembers). */
  onUnknownStatus?: (word: string, orderId: string) => void;
  /** Words already told, kept by the caller across calls (a daemon calls again and again). */
  warned?: Set<string>;
}

export interface FollowReport {
  polls: number;
  /** Rows that left `pending`: settled, or a conflict for a person. */
  moved: number;
  stopped: string | undefined;
  failed: boolean;
}

/** Wakes a sleeping follow loop early. */
export class Doorbell {
  #controller = new AbortController();
  ring(): void {
    this.#controller.abort();
    this.#controller = new AbortController();
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
}

/**
 * What a postback does: when it names a payout we follow (by transactionId, or by
 * orderId), that payout's poll falls due now and the loop is woken. Nothing else.
 */
export function nudgeOnPostback(
  journal: Journal,
  doorbell: Doorbell,
): (hint: { transactionId?: number; orderId?: string }) => void {
  return (hint) => {
    if (journal.pollNow(hint)) doorbell.ring();
  };
}

/** Polls due payouts, in waves of at most `concurrency`, until the window ends. */
export async function followPending(
  deps: EngineDeps,
  options: FollowOptions,
): Promise<FollowReport> {
  const { journal } = deps;
  const report: FollowReport = { polls: 0, moved: 0, stopped: undefined, failed: false };
  const warned = options.warned ?? new Set<string>();
  let pausedUntil = 0;

  while (!report.stopped && !options.signal.aborted && deps.now() < options.until) {
    const now = deps.now();
    const dueAt = Math.max(journal.nextPollAt() ?? Infinity, pausedUntil);
    if (dueAt === Infinity) break; // nothing pending
    if (dueAt > now) {
      const wake = options.doorbell
        ? AbortSignal.any([options.signal, options.doorbell.signal])
        : options.signal;
      await deps.sleep(Math.min(dueAt, options.until) - now, wake);
      continue;
    }
    // No more claims than the budget lets start now: a claim must not wait out its lease.
    const grant = await requestSlots(deps, options.signal, options.concurrency);
    const claims = journal.claimDue(options.owner, grant, options.leaseMs);
    deps.budget.take(claims.length, deps.now());
    if (claims.length === 0) {
      // Due, but leased by another process: look again shortly.
      await deps.sleep(Math.min(1_000, options.until - now), options.signal);
      continue;
    }
    await settleAll(
      claims.map(async (claim) => {
        const transactionId = claim.transactionId as number;
        const answer = await answerOf(
          deps.gateway.getTransactionById(transactionId, {
            signal: inFlightSignal(options.signal),
          }),
        );
        report.polls++;
        const decision = decidePoll(claim.request, transactionId, answer);
        const word = decision.details.gatewayStatus;
        if (word !== undefined && mapStatus(word) === 'unrecognised') {
          if (!warned.has(word)) options.onUnknownStatus?.(word, claim.orderId);
          warned.add(word);
        }
        if (decision.to !== 'pending') report.moved++;
        if (decision.signal.kind === 'stop') {
          report.stopped ??= decision.signal.why;
          report.failed = true;
        }
        if (decision.signal.kind === 'pause' && decision.signal.ms !== undefined) {
          pausedUntil = Math.max(pausedUntil, deps.now() + decision.signal.ms);
        }
        record(deps, options, [{ claim, decision: nextPoll(deps, options, claim, decision) }]);
      }),
    );
  }
  if (!report.stopped && options.signal.aborted) report.stopped = 'asked to stop';
  return report;
}

/** A row still pending after this poll is polled again later, a little later each time. */
function nextPoll(
  deps: EngineDeps,
  options: EngineOptions,
  claim: Claim,
  decision: Decision,
): Decision {
  if (decision.to !== 'pending') return decision;
  const polls = claim.polls + 1;
  const nextPollAt = deps.now() + pollDelayMs(polls, deps.random, options.pollPolicy);
  return { ...decision, details: { ...decision.details, polls, nextPollAt } };
}
