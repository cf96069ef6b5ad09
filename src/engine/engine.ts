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
 */
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError } from '../gateway/errors.js';
import type { Claim, Journal } from '../journal/journal.js';
import { decideLookup, decideSend, type Decision, type RunSignal } from './decisions.js';
import { backoffMs, mayResend } from './policy.js';

/** How long answers wait to share a commit. */
const GROUP_COMMIT_MS = 10;

export interface EngineDeps {
  journal: Journal;
  gateway: GatewayClient;
  now: () => number;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
  /** Told about every move, for logs and progress. */
  onMove?: (event: { orderId: string; to: string; reason: string }) => void;
}

export interface EngineOptions {
  /** This process's name in the journal's leases. */
  owner: string;
  concurrency: number;
  /** How long a claim stays ours; longer than the request time-out, with margin. */
  leaseMs: number;
  /** Time after a send before a row not found twice may be sent again. */
  graceMs: number;
  /** Consecutive "nothing reached the gateway" answers after which the run gives up. */
  maxUnreachable: number;
  /** Stop sending: in-flight requests finish and are journaled, nothing new leaves. */
  signal: AbortSignal;
}

export interface EngineReport {
  sent: number;
  /** Why the run stopped early, when it did (auth, wrong address, unreachable, signal). */
  stopped: string | undefined;
  /** True when the stop was the run failing (credentials refused, not the gateway's address). */
  failed: boolean;
}

/** Sends every queued payout, until none is left or the run must stop. */
export async function sendQueued(deps: EngineDeps, options: EngineOptions): Promise<EngineReport> {
  const { journal, gateway } = deps;
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let stopped: string | undefined;
  let failed = false;
  let pausedUntil = 0;
  let unreachableInARow = 0;

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
      pausedUntil = Math.max(pausedUntil, deps.now() + wait);
      if (unreachableInARow >= options.maxUnreachable) {
        stopped ??= `the gateway could not be reached ${unreachableInARow} times in a row`;
      }
    } else if (signal.kind === 'continue') {
      unreachableInARow = 0;
    }
  };

  // Answers are written in groups, one commit for all that arrive within GROUP_COMMIT_MS:
  // a commit costs ~0.3 ms of blocked event loop here. An answer not yet written when the
  // process dies leaves its row `sending`, which the next run resolves by lookup.
  const unwritten: { claim: Claim; decision: Decision }[] = [];
  let writeTimer: NodeJS.Timeout | undefined;
  let writeError: unknown;
  const writeAnswers = (): void => {
    clearTimeout(writeTimer);
    writeTimer = undefined;
    const answers = unwritten.splice(0);
    if (answers.length === 0) return;
    try {
      recordAll(deps, answers);
    } catch (error) {
      writeError ??= error;
    }
  };

  const send = async (claim: Claim): Promise<void> => {
    const answer = await answerOf(gateway.createCashOut(claim.request));
    sent++;
    const decision = decideSend(answer);
    // The run reacts at once (a 401 stops the very next claim), before the write.
    react(decision.signal);
    unwritten.push({ claim, decision });
    writeTimer ??= setTimeout(writeAnswers, GROUP_COMMIT_MS);
  };

  // Woken by any request that ends: O(1), where racing every request in flight is O(n).
  let wake: (() => void) | undefined;
  const slotFreed = () => new Promise<void>((resolve) => (wake = resolve));
  const dispatch = (claim: Claim) => {
    const flight = send(claim).finally(() => {
      inFlight.delete(flight);
      wake?.();
    });
    inFlight.add(flight);
  };

  // Rows claimed ahead (already `sending` in the journal), so that one commit serves half
  // a pool's worth of sends instead of one or two.
  const ready: Claim[] = [];
  const claimAhead = Math.max(1, Math.ceil(options.concurrency / 2));
  while (!stopped && !options.signal.aborted && writeError === undefined) {
    const wait = pausedUntil - deps.now();
    if (wait > 0) {
      await deps.sleep(wait, options.signal);
      continue;
    }
    if (ready.length === 0 && inFlight.size < options.concurrency) {
      const want = options.concurrency - inFlight.size + claimAhead;
      ready.push(...journal.claimToSend(options.owner, want, options.leaseMs));
      if (ready.length === 0 && inFlight.size === 0) {
        // Answers not yet written may put rows back in the queue (a 429): write, then look again.
        if (unwritten.length === 0) break;
        writeAnswers();
        continue;
      }
    }
    while (ready.length > 0 && inFlight.size < options.concurrency)
      dispatch(ready.shift() as Claim);
    if (inFlight.size > 0) await slotFreed();
  }
  // Claimed, marked `sending`, and never sent: back to the queue, so nothing waits for
  // a lookup that could only say "not found".
  if (ready.length > 0) {
    const reason = `claimed but not sent: the run stopped (${stopped ?? 'asked to stop'})`;
    deps.journal.moveMany(
      ready
        .splice(0)
        .map((claim) => ({ orderId: claim.orderId, fence: claim.fence, to: 'queued', reason })),
    );
  }
  await Promise.all(inFlight);
  writeAnswers();
  if (writeError !== undefined) throw writeError;
  if (!stopped && options.signal.aborted) stopped = 'asked to stop';
  return { sent, stopped, failed };
}

export interface ResolveReport {
  adopted: number;
  resent: number;
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
  deps: EngineDeps,
  options: EngineOptions,
): Promise<ResolveReport> {
  const { journal } = deps;
  const report: ResolveReport = {
    adopted: 0,
    resent: 0,
    stillUnknown: 0,
    stopped: undefined,
    failed: false,
  };
  // Each row is looked at once a pass: a row left unknown is released, and would
  // otherwise come straight back.
  const seen = new Set<string>();
  while (!report.stopped && !options.signal.aborted) {
    const claims = journal
      .claimAbandoned(options.owner, options.concurrency, options.leaseMs)
      .filter((claim) => !seen.has(claim.orderId));
    if (claims.length === 0) break;
    await Promise.all(
      claims.map(async (claim) => {
        seen.add(claim.orderId);
        const outcome = await resolveOne(deps, options, claim);
        if (outcome.kind === 'stop') {
          report.stopped ??= outcome.why;
          report.failed = true;
        } else report[outcome.kind]++;
      }),
    );
  }
  return report;
}

type ResolveOutcome =
  { kind: 'adopted' | 'resent' | 'stillUnknown' } | { kind: 'stop'; why: string };

async function resolveOne(
  deps: EngineDeps,
  options: EngineOptions,
  claim: Claim,
): Promise<ResolveOutcome> {
  const { journal, gateway } = deps;
  if (mayResend(claim.notFound, claim.lastSentAt, deps.now(), options.graceMs)) {
    return resend(deps, claim);
  }
  const answer = await answerOf(gateway.getTransactionByOrderId(claim.orderId));
  const decision = decideLookup(claim.request, answer, claim.notFound);
  switch (decision.kind) {
    case 'adopt':
      record(deps, claim, decision.decision);
      return { kind: 'adopted' };
    case 'not-found': {
      const reason = `not found by lookup (${decision.notFound} time${decision.notFound === 1 ? '' : 's'})`;
      const again = mayResend(decision.notFound, claim.lastSentAt, deps.now(), options.graceMs);
      // Kept leased when it goes again at once, so no other process picks it up between.
      journal.move(
        claim.orderId,
        claim.fence,
        'unknown',
        reason,
        { notFound: decision.notFound },
        { release: !again },
      );
      if (again) return resend(deps, { ...claim, notFound: decision.notFound });
      return { kind: 'stillUnknown' };
    }
    case 'keep':
      journal.move(claim.orderId, claim.fence, 'unknown', decision.message, {
        message: decision.message,
      });
      if (decision.signal.kind === 'stop') return { kind: 'stop', why: decision.signal.why };
      return { kind: 'stillUnknown' };
  }
}

/** Sends an unknown row again, with its own orderId, after marking it `sending` durably. */
async function resend(deps: EngineDeps, claim: Claim): Promise<ResolveOutcome> {
  const { journal, gateway } = deps;
  const reason = `not found ${claim.notFound} times, ${Math.round((deps.now() - (claim.lastSentAt ?? 0)) / 1000)}s after its last send: sending again with the same orderId`;
  if (!journal.markResending(claim, reason)) return { kind: 'stillUnknown' };
  const decision = decideSend(await answerOf(gateway.createCashOut(claim.request)));
  record(deps, claim, decision);
  if (decision.signal.kind === 'stop') return { kind: 'stop', why: decision.signal.why };
  return { kind: 'resent' };
}

/** The gateway's answer, or the GatewayError it failed with: both are answers here. */
async function answerOf<T>(call: Promise<T>): Promise<T | GatewayError> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

/** Writes the decisions of several claimed rows in one commit, telling the listener of each written. */
function recordAll(
  deps: EngineDeps,
  answers: readonly { claim: Claim; decision: Decision }[],
): void {
  const written = deps.journal.moveMany(
    answers.map(({ claim, decision }) => ({
      orderId: claim.orderId,
      fence: claim.fence,
      to: decision.to,
      reason: decision.reason,
      details: decision.details,
    })),
  );
  answers.forEach(({ claim, decision }, index) => {
    if (written[index])
      deps.onMove?.({ orderId: claim.orderId, to: decision.to, reason: decision.reason });
  });
}

/** Writes a decision for a claimed row, and tells the listener when it was written. */
function record(deps: EngineDeps, claim: Claim, decision: Decision): boolean {
  const wrote = deps.journal.move(
    claim.orderId,
    claim.fence,
    decision.to,
    decision.reason,
    decision.details,
  );
  if (wrote) deps.onMove?.({ orderId: claim.orderId, to: decision.to, reason: decision.reason });
  return wrote;
}
