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

/**
 * Polls due payouts, at most `concurrency` at once, until the window ends. A slot is
 * refilled as soon as its answer is written: a slow answer holds only its own slot, never
 * the polls of every other payout (it is ended by its request deadline, or a stop).
 */
export async function followPending(
  deps: EngineDeps,
  options: FollowOptions,
): Promise<FollowReport> {
  const { journal } = deps;
  const report: FollowReport = { polls: 0, moved: 0, stopped: undefined, failed: false };
  const warned = options.warned ?? new Set<string>();
  let pausedUntil = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  // Woken by any poll that ends.
  let wake: (() => void) | undefined;
  const slotFreed = () => new Promise<void>((resolve) => (wake = resolve));

  const poll = async (claim: Claim): Promise<void> => {
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
  };

  /** Until `ms` from now, a stop, the doorbell, or (with polls in flight) one of them ends. */
  const pause = async (ms: number, withDoorbell: boolean): Promise<void> => {
    const wakeSignal =
      withDoorbell && options.doorbell
        ? AbortSignal.any([options.signal, options.doorbell.signal])
        : options.signal;
    if (inFlight.size === 0) return deps.sleep(ms, wakeSignal);
    const early = new AbortController();
    const slept = deps.sleep(ms, AbortSignal.any([wakeSignal, early.signal]));
    await Promise.race([slept, slotFreed()]);
    early.abort();
    await slept;
  };

  try {
    while (
      !report.stopped &&
      !options.signal.aborted &&
      deps.now() < options.until &&
      failure === undefined
    ) {
      if (inFlight.size >= options.concurrency) {
        await slotFreed();
        continue;
      }
      const now = deps.now();
      const dueAt = Math.max(journal.nextPollAt() ?? Infinity, pausedUntil);
      if (dueAt === Infinity) {
        if (inFlight.size === 0) break; // nothing pending
        await slotFreed();
        continue;
      }
      if (dueAt > now) {
        await pause(Math.min(dueAt, options.until) - now, true);
        continue;
      }
      // No more claims than the budget lets start now: a claim must not wait out its lease.
      const grant = await requestSlots(deps, options.signal, options.concurrency - inFlight.size);
      const claims = journal.claimDue(options.owner, grant, options.leaseMs);
      deps.budget.take(claims.length, deps.now());
      if (claims.length === 0) {
        // Due, but leased: by this process (its poll in flight) or another. Look again
        // when a poll of ours ends, or shortly.
        await pause(Math.min(1_000, options.until - now), false);
        continue;
      }
      for (const claim of claims) {
        const flight: Promise<void> = poll(claim)
          // Anything but a gateway answer (a bug, the journal failing) ends the loop once
          // the polls in flight are written, never as an unhandled rejection.
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            inFlight.delete(flight);
            wake?.();
          });
        inFlight.add(flight);
      }
    }
  } finally {
    await Promise.all(inFlight);
  }
  if (failure) throw failure.error;
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
