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
import { record, type EngineDeps, type EngineOptions } from './engine.js';
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
): (hint: { transactionId?: number; orderId?: string }) => Promise<void> {
  return async (hint) => {
    if (await journal.pollNow(hint)) doorbell.ring();
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
  const { journal, pool, clock } = deps;
  const report: FollowReport = { polls: 0, moved: 0, stopped: undefined, failed: false };
  const warned = options.warned ?? new Set<string>();
  let failure: { error: unknown } | undefined;

  const poll = async (claim: Claim): Promise<void> => {
    const transactionId = claim.transactionId as number;
    const answer = await pool.ask((call) => deps.gateway.getTransactionById(transactionId, call));
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
      pool.pause(decision.signal.ms);
    }
    await record(deps, options, [{ claim, decision: nextPoll(deps, options, claim, decision) }]);
  };

  /** Until `ms` from now, a stop, the doorbell, or (with polls in flight) one of them ends. */
  const pause = async (ms: number, withDoorbell: boolean): Promise<void> => {
    const wakeSignal =
      withDoorbell && options.doorbell
        ? AbortSignal.any([pool.stop, options.doorbell.signal])
        : pool.stop;
    if (pool.running === 0) return clock.sleep(ms, wakeSignal);
    const early = new AbortController();
    const slept = clock.sleep(ms, AbortSignal.any([wakeSignal, early.signal]));
    await Promise.race([slept, pool.taskEnded()]);
    early.abort();
    await slept;
  };

  try {
    while (
      !report.stopped &&
      !pool.stop.aborted &&
      clock.now() < options.until &&
      failure === undefined
    ) {
      if (pool.running >= pool.concurrency) {
        await pool.taskEnded();
        continue;
      }
      const now = clock.now();
      const dueAt = Math.max((await journal.nextPollAt()) ?? Infinity, pool.pausedUntil);
      if (dueAt === Infinity) {
        if (pool.running === 0) break; // nothing pending
        await pool.taskEnded();
        continue;
      }
      if (dueAt > now) {
        await pause(Math.min(dueAt, options.until) - now, true);
        continue;
      }
      // No more claims than the pool lets start now: a claim must not wait out its lease.
      const grant = await pool.grant();
      if (grant === 0) continue; // stopped
      const claims = await journal.claimDue(options.owner, grant, options.leaseMs);
      if (claims.length === 0) {
        // Due, but leased: by this process (its poll in flight) or another. Look again
        // when a poll of ours ends, or shortly.
        await pause(Math.min(1_000, options.until - now), false);
        continue;
      }
      for (const claim of claims) {
        pool
          .run(() => poll(claim))
          // Anything but a gateway answer (a bug, the journal failing) ends the loop once
          // the polls in flight are written, never as an unhandled rejection.
          .catch((error: unknown) => {
            failure ??= { error };
          });
      }
    }
  } finally {
    await pool.idle();
  }
  if (failure) throw failure.error;
  if (!report.stopped && pool.stop.aborted) report.stopped = 'asked to stop';
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
  const nextPollAt = deps.clock.now() + pollDelayMs(polls, deps.random, options.pollPolicy);
  return { ...decision, details: { ...decision.details, polls, nextPollAt } };
}
