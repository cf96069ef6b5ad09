/**
 * The submission engine: sends the journal's queued payouts with bounded concurrency,
 * and resolves rows whose create had no clear answer by looking their orderId up.
 *
 * The order of events for one payout, which is the whole safety argument:
 *   1. claim it in the journal and commit `sending` (with a fence) — durable;
 *   2. send the create, with the row's own orderId;
 *   3. commit the answer, only if the fence is still ours.
 * A crash between 1 and 3 leaves `sending`; the next run resolves it by lookup (found:
 * adopt; not found twice, after the grace period: send again with the same orderId).
 * A row may be claimed a moment before a place is free for it (claim-ahead.ts): given
 * back to the queue if the run stops or pauses first, resolved by lookup after a crash.
 * Every request checks its claim's age the moment before it leaves (claimFreshEnough): a
 * process frozen since its claim gives the row back unsent, as another run may have it.
 */
import type { GatewayClient } from '../gateway/client.js';
import type { CashOutRequest } from '../gateway/contract.js';
import type {
  AdmissionRules,
  Claim,
  JournalAnswers,
  JournalFollowing,
  JournalLimits,
  JournalRecovery,
  JournalSending,
  Move,
} from '../journal/journal.js';
import type { Clock } from '../runtime/clock.js';
import { failpoint } from '../runtime/failpoint.js';
import { createAnswerWriter } from './answer-writer.js';
import { createClaimAhead, type Claimed } from './claim-ahead.js';
import { decideLookup, decideSend, type Decision, type RunSignal } from './decisions.js';
import { backoffMs, claimFreshEnough, mayResend, pollDelayMs, type PollPolicy } from './policy.js';
import type { GatewayPool } from './pool.js';
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';

/** How long answers wait to share a commit. */
export const GROUP_COMMIT_MS = 10;

/**
 * The most rows held ahead of the places (claim-ahead.ts), when the claims' commits cannot
 * keep up with the answers: at zero latency a commit then claims a few hundred rows. After
 * a crash, rows held are left `sending` unsent and are resolved by lookup.
 */
const MAX_AHEAD = 512;

/** The journal's reason for a row given back because its claim aged before its request left. */
const FROZEN_REASON: Said = { code: 'auditClaimTooOld' };

/** The journal's aggregates the engine's loops use: each loop takes only its own. */
export type EngineJournal = JournalSending &
  JournalAnswers &
  JournalRecovery &
  JournalFollowing &
  JournalLimits;

/** What resolving a row with no clear answer uses: it may send it again. */
type Resolving = JournalRecovery & JournalSending & JournalAnswers;

export interface EngineDeps<J = EngineJournal> {
  journal: J;
  gateway: GatewayClient;
  clock: Clock;
  /**
   * The process's own monotonic clock, in ms (`performance.now`): how long a claim has
   * waited before its request leaves, which no step of the wall clock can move.
   */
  elapsed: () => number;
  random: () => number;
  /**
   * Every gateway request of the run starts through it: its concurrency, request budget,
   * pause and stop are shared by sending, resolving, following and reconciling.
   */
  pool: GatewayPool;
}

export interface EngineOptions {
  /** This process's name in the journal's leases. */
  owner: string;
  /** How long a claim stays ours; longer than the request time-out, with margin. */
  leaseMs: number;
  /** Time after a send before a row not found twice may be sent again. */
  graceMs: number;
  /** Consecutive "nothing reached the gateway" answers after which the run gives up. */
  maxUnreachable: number;
  /** When payouts that become pending are polled (following). */
  pollPolicy: PollPolicy;
  /**
   * Sent with each create when the postback receiver is on. Not part of the journaled
   * request: a payout is the same payout whatever address its news goes to.
   */
  postbackUrl?: string;
  /** The cover rule, checked again as rows are claimed (see claimToSend). */
  admission?: AdmissionRules;
  /**
   * A row not sent because its claim was `ageMs` old when its request was to leave (see
   * claimFreshEnough); `kept`: still this run's, so given back; else another run took it.
   */
  onClaimTooOld?: (orderId: string, ageMs: number, kept: boolean) => void;
}

/** A claimed row and what its answer means for it. */
interface Answer {
  claim: Claim;
  decision: Decision;
}

function withPostback(request: CashOutRequest, options: EngineOptions): CashOutRequest {
  return options.postbackUrl === undefined
    ? request
    : { ...request, postbackUrl: options.postbackUrl };
}

export interface EngineReport {
  /** Payouts the gateway created in this run: a 429, a 401 or no answer sent nothing. */
  sent: number;
  /** Why the run stopped early, when it did (auth, wrong address, unreachable, signal). */
  stopped: string | undefined;
  /** True when the stop was the run failing (credentials refused, not the gateway's address). */
  failed: boolean;
}

/** Sends every queued payout, until none is left or the run must stop. */
export async function sendQueued(
  deps: EngineDeps<JournalSending & JournalAnswers>,
  options: EngineOptions,
): Promise<EngineReport> {
  const { journal, gateway, pool } = deps;
  let sent = 0;
  let stopped: string | undefined;
  let failed = false;
  let unreachableInARow = 0;
  // The first failure that is not a gateway's answer (a bug, the journal failing): the
  // run ends with it once the requests in flight are answered and written.
  let failure: unknown;
  const fail = (error: unknown): void => {
    failure ??= error;
  };

  const react = (signal: RunSignal): void => {
    if (signal.kind === 'stop') {
      stopped ??= signal.why;
      failed = true;
    }
    if (signal.kind === 'pause' || signal.kind === 'retry-later') {
      unreachableInARow += signal.kind === 'retry-later' ? 1 : 0;
      // The whole pool waits, not one request: the gateway is telling us all the same.
      const wait =
        signal.kind === 'pause' && signal.ms !== undefined
          ? signal.ms
          : backoffMs(Math.max(1, unreachableInARow), deps.random);
      pool.pause(wait, signal.kind === 'pause' ? 'rate-limited' : 'unreachable');
      if (unreachableInARow >= options.maxUnreachable) {
        stopped ??= `the gateway could not be reached ${unreachableInARow} times in a row`;
      }
    } else if (signal.kind === 'continue') {
      unreachableInARow = 0;
    }
  };

  // A group holds at most an answer a place: more wait only when no claim comes to take them.
  const writer = createAnswerWriter({
    journal,
    groupMs: GROUP_COMMIT_MS,
    groupSize: pool.concurrency,
    fail,
  });
  // None held ahead under a request budget, whose pace, not the commits, is the ceiling.
  const ahead = createClaimAhead({
    ahead: pool.paced ? 0 : pool.concurrency,
    maxAhead: pool.paced ? 0 : Math.max(pool.concurrency, MAX_AHEAD),
    claim: async (limit) => {
      const claims = await writer.withAnswers((answers) =>
        journal.claimToSend(options.owner, limit, options.leaseMs, options.admission, answers),
      );
      if (claims.length > 0) failpoint('after-sending-commit');
      return claims;
    },
    unclaim: (claims, why) => journal.unclaim(claims, why),
    sendable: () => journal.sendable(),
    elapsed: deps.elapsed,
    fail,
  });

  const send = async ({ claim, at, sendable }: Claimed): Promise<void> => {
    // The journal's marker must know of the claim before its request leaves.
    await sendable;
    if (stopped !== undefined || failure !== undefined) {
      // A 401 or a failure read while it waited for its claim's commit or the marker: not sent.
      await journal.unclaim([claim], {
        code: 'auditClaimedNotSent',
        why: stopped === undefined ? { code: 'runFailed' } : { code: 'english', text: stopped },
      });
      return;
    }
    const leaving = deps.elapsed();
    if (!claimFreshEnough(at, leaving, options.leaseMs)) {
      // Fenced: a row another run took over stays its own; one still ours is queued again.
      const kept = (await journal.unclaim([claim], FROZEN_REASON)) > 0;
      options.onClaimTooOld?.(claim.orderId, leaving - at, kept);
      return;
    }
    const answer = await pool.ask((call) =>
      gateway.createCashOut(withPostback(claim.request, options), call),
    );
    const decision = decideSend(answer);
    if (decision.created) sent++;
    // The run reacts at once (a 401 stops the very next claim), before the write.
    react(decision.signal);
    writer.add(moveOf(deps, options, { claim, decision }));
  };
  const start = (row: Claimed): void => {
    // Never an unhandled rejection: what a send throws ends the run (see failure).
    pool.run(() => send(row)).catch(fail);
  };

  try {
    while (!stopped && !pool.stop.aborted && failure === undefined) {
      if (pool.running > 0 && pool.running < pool.concurrency) {
        // One turn for answers arriving together, so that their rows' successors share one
        // claim commit.
        await new Promise((resolve) => setImmediate(resolve));
        // A 401 or a failed write read in that turn starts nothing more: what is held goes back.
        if (stopped || failure !== undefined) break;
      }
      // After that turn, with no wait until the places are counted: a pause that an answer
      // in it started is seen here, and the rows claimed ahead go back to the queue rather
      // than wait through it.
      if (pool.pausedUntil > deps.clock.now()) {
        await ahead.giveBack({ code: 'sendingPaused' });
        await pool.waitToStart();
        continue;
      }
      const free = pool.startable();
      if (free > 0) {
        const filled = await ahead.fill(free, start);
        if (filled === 'waited') continue;
        if (filled === 'empty' && pool.running === 0) {
          // Answers not yet written, or still being written, may put rows back in the
          // queue (a 429): write, then look again.
          if (writer.unwritten === 0) break;
          await writer.flush();
          continue;
        }
      } else if (pool.running < pool.concurrency) {
        // The request budget or a pause, not the places, keeps the next one: wait for it.
        await pool.waitToStart();
        continue;
      }
      if (pool.running > 0) await pool.taskEnded();
    }
  } finally {
    await pool.idle();
    try {
      // Awaits a top-up on its way first, whose answers, if it failed, wait again.
      await ahead.giveBack(
        stopped === undefined ? { code: 'runStopped' } : { code: 'english', text: stopped },
      );
    } catch (error) {
      // Left `sending`: the next run resolves them by lookup.
      fail(error);
    }
    await writer.flush();
  }
  if (failure !== undefined) throw failure;
  if (!stopped && pool.stop.aborted) stopped = 'asked to stop';
  return { sent, stopped, failed };
}

export interface ResolveReport {
  adopted: number;
  /** Rows sent again after lookups found nothing; one turned away (a 429) is not. */
  resent: number;
  /** Rows a person must look at (moved to `conflict`). */
  conflicts: number;
  stillUnknown: number;
  stopped: string | undefined;
  failed: boolean;
}

/**
 * Resolves rows left `sending` by a process that is gone and rows `unknown` after an
 * unclear answer: found by orderId, they take the transaction's state; not found twice
 * after the grace period, they are sent again with the same orderId; otherwise they
 * stay `unknown` for a later pass.
 */
export async function resolveUnknown(
  deps: EngineDeps<Resolving>,
  options: EngineOptions,
): Promise<ResolveReport> {
  const { journal, pool } = deps;
  const report: ResolveReport = {
    adopted: 0,
    resent: 0,
    conflicts: 0,
    stillUnknown: 0,
    stopped: undefined,
    failed: false,
  };
  // A recovering journal looks up every row it has never sent before its first send.
  await journal.lookUpNeverSent();
  // Pages through the rows in file order: each is looked at once a pass, and a row left
  // unknown (released) never keeps the ones after it from their turn.
  let after: { batchId: number; line: number } | undefined;
  while (!report.stopped && !pool.stop.aborted) {
    // No more claims than the pool lets start now: a claim must not wait out its lease.
    const grant = await pool.grant();
    if (grant === 0) break;
    const claims = await journal.claimAbandoned(options.owner, grant, options.leaseMs, after);
    const last = claims.at(-1);
    if (!last) break;
    after = { batchId: last.batchId, line: last.line };
    await pool.runAll(claims, async (claim) => {
      const outcome = await resolveOne(deps, options, claim);
      if (outcome.kind === 'stop') {
        report.stopped ??= outcome.why;
        report.failed = true;
      } else if (outcome.kind !== 'notSent') report[outcome.kind]++;
    });
  }
  return report;
}

/** `notSent`: a re-send the gateway turned away before creating anything (a 429), queued again. */
type ResolveOutcome =
  | { kind: 'adopted' | 'resent' | 'conflicts' | 'stillUnknown' | 'notSent' }
  | { kind: 'stop'; why: string };

/**
 * One row: always looked up first. Sent again only on a not-found answer given now, the
 * second at least, once `graceMs` has passed since its last send: never on old answers.
 */
async function resolveOne(
  deps: EngineDeps<Resolving>,
  options: EngineOptions,
  claim: Claim,
): Promise<ResolveOutcome> {
  const { journal, gateway, pool } = deps;
  // Its request start was granted with its claim.
  const answer = await pool.ask((call) => gateway.getTransactionByOrderId(claim.orderId, call));
  const decision = decideLookup(claim.request, answer, claim.notFound);
  switch (decision.kind) {
    case 'adopt':
      await record(deps, options, [{ claim, decision: decision.decision }]);
      return { kind: 'adopted' };
    case 'not-found': {
      const reason = `not found by lookup (${decision.notFound} time${decision.notFound === 1 ? '' : 's'})`;
      let again =
        !pool.stop.aborted &&
        mayResend(decision.notFound, claim.lastSentAt, deps.clock.now(), options.graceMs);
      if (again) {
        const forgotten = await lookUpForgotten(deps, claim);
        if (forgotten.kind === 'adopt') {
          await record(deps, options, [{ claim, decision: forgotten.decision }]);
          return { kind: 'adopted' };
        }
        again = forgotten.kind === 'absent';
      }
      // Kept leased when it goes again at once, so no other process picks it up between.
      await journal.move(
        claim.orderId,
        claim.fence,
        'unknown',
        reason,
        { notFound: decision.notFound },
        { release: !again },
      );
      if (again) return resend(deps, options, { ...claim, notFound: decision.notFound });
      return { kind: 'stillUnknown' };
    }
    case 'conflict':
      await journal.move(claim.orderId, claim.fence, 'conflict', decision.message, {
        message: decision.message,
      });
      return { kind: 'conflicts' };
    case 'keep':
      await journal.move(claim.orderId, claim.fence, 'unknown', decision.message, {
        message: decision.message,
      });
      if (decision.signal.kind === 'stop') return { kind: 'stop', why: decision.signal.why };
      // A 429 holds back every request of the pool, not only this row's next lookup.
      if (decision.signal.kind === 'pause' && decision.signal.ms !== undefined) {
        pool.pause(decision.signal.ms, 'rate-limited');
      }
      return { kind: 'stillUnknown' };
  }
}

/**
 * Before a row is sent again: the gateway may have it under the orderId a later batch of
 * its name made, from a journal a home folder restored from a backup forgot.
 */
async function lookUpForgotten(
  deps: EngineDeps<JournalRecovery>,
  claim: Claim,
): Promise<{ kind: 'adopt'; decision: Decision } | { kind: 'absent' | 'unsure' }> {
  const { journal, gateway, pool } = deps;
  for (const orderId of await journal.forgottenOrderIds(claim.orderId)) {
    await pool.startAnother();
    const answer = await pool.ask((call) => gateway.getTransactionByOrderId(orderId, call));
    const decision = decideLookup(claim.request, answer, 0);
    if (decision.kind === 'adopt') return decision;
    if (decision.kind !== 'not-found') return { kind: 'unsure' };
  }
  return { kind: 'absent' };
}

/** Sends an unknown row again, with its own orderId, after marking it `sending` durably. */
async function resend(
  deps: EngineDeps<Resolving>,
  options: EngineOptions,
  claim: Claim,
): Promise<ResolveOutcome> {
  const { journal, gateway, pool } = deps;
  await pool.startAnother();
  const markedAt = deps.elapsed();
  const reason: Said = {
    code: 'auditResending',
    notFound: claim.notFound,
    secondsSinceSent: Math.round((deps.clock.now() - (claim.lastSentAt ?? 0)) / 1000),
  };
  if (!(await journal.markResending(claim, reason, options.leaseMs)))
    return { kind: 'stillUnknown' };
  failpoint('after-resend-commit');
  await journal.sendable();
  const leaving = deps.elapsed();
  if (!claimFreshEnough(markedAt, leaving, options.leaseMs)) {
    // Unknown again, its lookups from the start: a row another run took over stays its own.
    // Its English until `move` takes a value too.
    const reason = sayInEnglish(FROZEN_REASON);
    const release = { release: true };
    const kept = await journal.move(claim.orderId, claim.fence, 'unknown', reason, {}, release);
    options.onClaimTooOld?.(claim.orderId, leaving - markedAt, kept);
    return { kind: 'stillUnknown' };
  }
  let decision = decideSend(
    await pool.ask((call) => gateway.createCashOut(withPostback(claim.request, options), call)),
  );
  if (decision.to === 'rejected') {
    // A refusal now proves nothing about the first attempt, which may have been paid
    // (and may be why this one is refused): not "never reached", a person must look.
    const message = `refused on a re-send (${decision.reason}); the first attempt may have been paid: a person must look`;
    decision = { ...decision, to: 'conflict', reason: message, details: { message } };
  }
  await record(deps, options, [{ claim, decision }]);
  if (decision.signal.kind === 'stop') return { kind: 'stop', why: decision.signal.why };
  if (decision.to === 'queued') return { kind: 'notSent' };
  return { kind: decision.to === 'conflict' ? 'conflicts' : 'resent' };
}

/** Writes the decisions of claimed rows in one commit, each only while its fence holds. */
export async function record(
  deps: EngineDeps<JournalAnswers>,
  options: EngineOptions,
  answers: readonly Answer[],
): Promise<void> {
  await deps.journal.moveMany(answers.map((answer) => moveOf(deps, options, answer)));
}

/** The journal's move for a decision: a row that becomes pending gets its first poll time. */
export function moveOf(
  deps: Pick<EngineDeps, 'clock' | 'random'>,
  options: EngineOptions,
  { claim, decision }: Answer,
): Move {
  return {
    orderId: claim.orderId,
    fence: claim.fence,
    to: decision.to,
    reason: decision.reason,
    details:
      decision.to === 'pending' && decision.details.nextPollAt === undefined
        ? {
            ...decision.details,
            nextPollAt: deps.clock.now() + pollDelayMs(0, deps.random, options.pollPolicy),
          }
        : decision.details,
  };
}
