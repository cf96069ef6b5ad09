/**
 * Following: pending payouts are polled by transactionId until they settle (paid, failed,
 * canceled, refunded) or the follow window ends, each at the time kept in the journal.
 * A batch's first payouts (its probes) are polled on the growing schedule, staggered;
 * the others wait until one of the batch is seen settled, then are polled that long
 * after their own send (`batchPollAt`), and on the growing, jittered schedule from
 * there if still pending. Rows still pending at the end are picked up by the next run, which learns
 * again from probes of its own. A postback only brings a row's poll forward
 * (`Doorbell`): the gateway's GET answer is the only truth.
 */
import { mapStatus } from '../gateway/status.js';
import type { Claim, JournalAnswers, JournalFollowing, Move } from '../journal/journal.js';
import { decidePoll, type Decision } from './decisions.js';
import { createAnswerWriter } from './answer-writer.js';
import { GROUP_COMMIT_MS, moveOf, record, type EngineDeps, type EngineOptions } from './engine.js';
import {
  PROBES_PER_BATCH,
  batchPollAt,
  learnedPollAgeMs,
  pollDelayMs,
  probeDelayMs,
  settleAgeLearned,
} from './policy.js';

export interface FollowOptions extends EngineOptions {
  /** Follow until this time (ms since the epoch), or until nothing is pending. */
  until: number;
  /** Rung when a poll was brought forward, so an idle loop looks again at once. */
  doorbell?: Doorbell;
  /** Told the first time each status word we do not know is seen (`warned` remembers). */
  onUnknownStatus?: (word: string, orderId: string) => void;
  /** Words already told, kept by the caller across calls (a daemon calls again and again). */
  warned?: Set<string>;
  /** What was learned of each batch, kept by the caller across calls, as `warned` is. */
  settling?: Settling;
  /** Told once a row that left `pending` is written so: a daemon's passes then finish its file. */
  onMoved?: () => void;
}

export interface FollowReport {
  polls: number;
  /** Rows that left `pending`: settled, or a conflict for a person. */
  moved: number;
  stopped: string | undefined;
  failed: boolean;
}

/** At most this many payouts named by postbacks are remembered until polled. */
const MAX_NAMED = 10_000;

/**
 * Wakes a sleeping follow loop early, and remembers the payouts postbacks named, which
 * are polled as soon as they are due whatever their batch has shown.
 */
export class Doorbell {
  #controller = new AbortController();
  #named = new Set<string>();
  ring(named?: { transactionId?: number; orderId?: string }): void {
    if (named?.transactionId !== undefined) this.#remember(`#${named.transactionId}`);
    if (named?.orderId !== undefined) this.#remember(named.orderId);
    this.#controller.abort();
    this.#controller = new AbortController();
  }
  /**
   * Past the bound the oldest name is forgotten (a payout settled without a poll of this
   * loop is never asked about): that payout is polled when its batch says, as if not named.
   */
  #remember(name: string): void {
    this.#named.delete(name);
    if (this.#named.size >= MAX_NAMED) {
      const oldest = this.#named.values().next();
      if (!oldest.done) this.#named.delete(oldest.value);
    }
    this.#named.add(name);
  }
  /** Whether a postback named this payout since it was last asked (then forgotten). */
  takeNamed(payout: { transactionId: number | null; orderId: string }): boolean {
    const byId = this.#named.delete(`#${payout.transactionId}`);
    return this.#named.delete(payout.orderId) || byId;
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
}

/** At most this many batches are remembered; the oldest is forgotten first. */
const MAX_BATCHES = 1_000;

/**
 * What following has learned of each batch: its probes, and the shortest time from a
 * send to a settlement seen. It lives in memory: a batch forgotten, or a process that
 * starts again, learns again from new probes, the schedule itself being in the journal.
 */
export class Settling {
  #batches = new Map<number, { probes: Map<string, number>; settledAgeMs: number | undefined }>();

  #batch(batchId: number): { probes: Map<string, number>; settledAgeMs: number | undefined } {
    let batch = this.#batches.get(batchId);
    if (!batch) {
      if (this.#batches.size >= MAX_BATCHES) {
        const oldest = this.#batches.keys().next();
        if (!oldest.done) this.#batches.delete(oldest.value);
      }
      batch = { probes: new Map(), settledAgeMs: undefined };
      this.#batches.set(batchId, batch);
    }
    return batch;
  }

  /**
   * This payout's number among its batch's probes (the first ones asked about), or
   * undefined when it is not one.
   */
  probe(batchId: number, orderId: string): number | undefined {
    const { probes } = this.#batch(batchId);
    if (!probes.has(orderId) && probes.size < PROBES_PER_BATCH) probes.set(orderId, probes.size);
    return probes.get(orderId);
  }

  /** The shortest time from a send to a settlement seen in this batch. */
  settledAgeMs(batchId: number): number | undefined {
    return this.#batches.get(batchId)?.settledAgeMs;
  }

  /** A payout was seen settled `ageMs` after its send: true when sooner than any before. */
  sawSettled(batchId: number, ageMs: number): boolean {
    const batch = this.#batch(batchId);
    if (batch.settledAgeMs !== undefined && batch.settledAgeMs <= ageMs) return false;
    batch.settledAgeMs = ageMs;
    return true;
  }
}

/**
 * What a postback does: when it names a payout we follow (by transactionId, or by
 * orderId), that payout's poll falls due now, and the journal tells the loop following it
 * (`wakeOnPollNow`), in this process or another. Nothing else.
 */
export function nudgeOnPostback(
  journal: JournalFollowing,
): (hint: { transactionId?: number; orderId?: string }) => Promise<void> {
  return async (hint) => {
    await journal.pollNow(hint);
  };
}

/**
 * Rings `doorbell` for each payout a postback brought forward, whichever process took it,
 * until the returned stop; without a name when the journal may have missed some, so the
 * loop looks at what is due again.
 */
export function wakeOnPollNow(
  journal: JournalFollowing,
  doorbell: Doorbell,
): Promise<() => Promise<void>> {
  return journal.onPollNow((orderId) => doorbell.ring(orderId === undefined ? {} : { orderId }));
}

/**
 * Polls due payouts, at most `concurrency` at once, until the window ends. A slot is
 * refilled as soon as its answer is written: a slow answer holds only its own slot, never
 * the polls of every other payout (it is ended by its request deadline, or a stop).
 */
export async function followPending(
  deps: EngineDeps<JournalFollowing & JournalAnswers>,
  options: FollowOptions,
): Promise<FollowReport> {
  const { journal, pool, clock } = deps;
  const report: FollowReport = { polls: 0, moved: 0, stopped: undefined, failed: false };
  const warned = options.warned ?? new Set<string>();
  const settling = options.settling ?? new Settling();
  let failure: { error: unknown } | undefined;

  /** When this payout's poll waits for its batch, or undefined: its own schedule. */
  const batchSays = (claim: Claim, now: number): number | undefined => {
    const settledAgeMs = settling.settledAgeMs(claim.batchId);
    const probe =
      settledAgeMs === undefined && settling.probe(claim.batchId, claim.orderId) !== undefined;
    return batchPollAt({ sentAt: claim.lastSentAt, probe }, settledAgeMs, now, options.pollPolicy);
  };
  /** Its own schedule: a probe's staggered, any other payout's jittered. */
  const pollDelay = (claim: Claim): number => {
    const probe =
      settling.settledAgeMs(claim.batchId) === undefined
        ? settling.probe(claim.batchId, claim.orderId)
        : undefined;
    return probe === undefined
      ? pollDelayMs(claim.polls + 1, deps.random, options.pollPolicy)
      : probeDelayMs(claim.polls + 1, probe, options.pollPolicy);
  };

  /**
   * Writes decisions made by what the batches had learned when they were made. A batch
   * that learned its settle time meanwhile has brought its pending polls forward already
   * (pollBatchSooner), and a store answering later (the SQLite journal's sending thread,
   * a network database) may land these writes after that, putting a payout back to wait
   * a minute for news it already has: so its polls are brought forward again.
   */
  const recordLearning = async (
    answers: readonly { claim: Claim; decision: Decision }[],
  ): Promise<void> => {
    const batchIds = [...new Set(answers.map(({ claim }) => claim.batchId))];
    const knew = batchIds.map((batchId) => settling.settledAgeMs(batchId));
    await record(deps, options, answers);
    for (const [i, batchId] of batchIds.entries()) {
      const learned = settling.settledAgeMs(batchId);
      if (learned !== undefined && learned !== knew[i]) {
        await journal.pollBatchSooner(batchId, learnedPollAgeMs(learned));
      }
    }
  };

  // A poll's answer shares a commit with the others' of the next few ms.
  // Said once written, so that the pass it wakes reads the payout settled.
  const settledMoves = new WeakSet<Move>();
  const writer = createAnswerWriter({
    journal,
    written: (group) => {
      if (group.some((move) => settledMoves.has(move))) options.onMoved?.();
    },
    groupMs: GROUP_COMMIT_MS,
    groupSize: pool.concurrency,
    fail: (error) => {
      failure ??= { error };
    },
  });

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
      pool.pause(decision.signal.ms, 'rate-limited');
    }
    const now = clock.now();
    const next =
      decision.to === 'pending'
        ? nextPoll(decision, claim.polls + 1, batchSays(claim, now) ?? now + pollDelay(claim))
        : decision;
    const knew = settling.settledAgeMs(claim.batchId);
    const move = moveOf(deps, options, { claim, decision: next });
    if (decision.to !== 'pending') settledMoves.add(move);
    writer.add(move);
    const ageMs =
      claim.lastSentAt === null ? undefined : settleAgeLearned(decision.to, now - claim.lastSentAt);
    // The batch's other payouts are likely paid as long after their own send.
    if (ageMs !== undefined) settling.sawSettled(claim.batchId, ageMs);
    const learned = settling.settledAgeMs(claim.batchId);
    if (learned !== undefined && learned !== knew) {
      // Brought forward after the answers decided before it was learned are written
      // (see recordLearning), this one's included.
      await writer.flush();
      await journal.pollBatchSooner(claim.batchId, learnedPollAgeMs(learned));
    }
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

  // Due payouts claimed ahead of a free place: a claim is a commit, so one claims as many
  // as the places, and each place that frees polls the next of them (at most a
  // concurrency's worth, polled within about a request's time, well inside their lease).
  const ahead: Claim[] = [];
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
      if (ahead.length === 0) {
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
      }
      const grant = await pool.grant();
      if (grant === 0) continue; // stopped
      if (ahead.length === 0) {
        const claims = await journal.claimDue(options.owner, pool.concurrency, options.leaseMs);
        if (claims.length === 0) {
          // Due, but leased: by this process (its poll in flight, or its answer not yet
          // written) or another. Look again once our answers are written, when a poll of
          // ours ends, or shortly.
          if (writer.unwritten > 0) {
            await writer.flush();
            continue;
          }
          await pause(Math.min(1_000, options.until - now), false);
          continue;
        }
        // A payout whose batch says it is not settled yet waits, without a request; one a
        // postback named is polled now.
        const waiting: { claim: Claim; decision: Decision }[] = [];
        // The grant and the claim may have waited (a pause, the budget): the time is now.
        const claimedAt = clock.now();
        for (const claim of claims) {
          const at = options.doorbell?.takeNamed(claim) ? undefined : batchSays(claim, claimedAt);
          if (at === undefined) ahead.push(claim);
          else waiting.push({ claim, decision: nextPoll(WAIT, claim.polls, at) });
        }
        if (waiting.length > 0) await recordLearning(waiting);
      }
      for (const claim of ahead.splice(0, grant)) {
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
    await writer.flush();
    // Claimed but not polled: due at once again, for the next loop or another process,
    // rather than leased until the lease ends.
    if (ahead.length > 0 && failure === undefined) {
      const at = clock.now();
      await record(
        deps,
        options,
        ahead
          .splice(0)
          .map((claim) => ({ claim, decision: nextPoll(NOT_POLLED, claim.polls, at) })),
      );
    }
  }
  if (failure) throw failure.error;
  if (!report.stopped && pool.stop.aborted) report.stopped = 'asked to stop';
  return report;
}

/** A claimed payout left pending, unpolled, until its batch says it may be settled. */
const WAIT: Decision = {
  to: 'pending',
  reason: 'waits for its batch',
  details: {},
  signal: { kind: 'continue' },
};

/** A claimed payout the loop ended before polling. */
const NOT_POLLED: Decision = {
  to: 'pending',
  reason: 'not polled before following stopped',
  details: {},
  signal: { kind: 'continue' },
};

/** A row still pending is polled again at `nextPollAt`, `polls` polls made so far. */
function nextPoll(decision: Decision, polls: number, nextPollAt: number): Decision {
  return { ...decision, details: { ...decision.details, polls, nextPollAt } };
}
