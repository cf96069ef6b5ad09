/**
 * How the engine is wired for a process: its leases and grace periods sized from the
 * gateway's timeouts, its gateway pool, clock and randomness. Used by a pass and by reconcile.
 */
import { formatElapsed } from '../config/duration.js';
import type { Config } from '../config/schema.js';
import { requestBudget } from '../engine/budget.js';
import type { EngineDeps, EngineOptions } from '../engine/engine.js';
import { createGatewayPool } from '../engine/pool.js';
import type { Doorbell } from '../engine/follow.js';
import { requestDeadlineMs, type GatewayClient } from '../gateway/client.js';
import { clockAllowanceMs } from '../journal/clock-skew.js';
import type { JournalLimits } from '../journal/journal.js';
import { hostNameOf, workerName } from '../runtime/worker-name.js';
import type { PassOptions } from './pass.js';

/** The engine's dependencies and options for this process, from the config. */
export function engineFor<J extends JournalLimits>(
  journal: J,
  gateway: GatewayClient,
  config: Config,
  options: PassOptions,
): { deps: EngineDeps<J>; engine: EngineOptions & { doorbell?: Doorbell } } {
  // Beyond the longest a request can take (its deadline: connect, then the whole answer),
  // with a margin of another requestTimeout and 2 s.
  const longestRequestMs =
    requestDeadlineMs({
      connectTimeoutMs: config.connectTimeout,
      requestTimeoutMs: config.requestTimeout,
    }) +
    config.requestTimeout +
    2_000;
  const host = hostNameOf(config.hostName);
  const engine: EngineOptions = {
    owner: workerName(host),
    // A claim must not end while its request may still be on its way.
    leaseMs: longestRequestMs,
    // From the lease's end, not the send: a paused process's request may leave late in its
    // lease. The send may have been dated by another host's clock, off by up to the allowance.
    graceMs:
      longestRequestMs +
      config.resendGrace +
      clockAllowanceMs(config.journal !== null, config.maxClockSkew),
    maxUnreachable: 8,
    pollPolicy: options.pollPolicy,
    ...(options.postbackUrl === undefined ? {} : { postbackUrl: options.postbackUrl }),
    admission: { duplicateWindowMs: config.duplicateWindow },
    onClaimTooOld: (orderId, ageMs, kept) =>
      options.note(
        `payout ${orderId} not sent: its claim was ${Math.round(ageMs / 1000)} s old when its request was to leave, past half its lease (${longestRequestMs / 2000} s): this process was stopped or paused; ${kept ? 'given back unsent' : 'another run had taken it over'}`,
      ),
  };
  const deps: EngineDeps<J> = {
    journal,
    gateway,
    clock: options.clock,
    elapsed: () => performance.now(),
    random: Math.random,
    pool:
      options.pool ??
      createGatewayPool({
        concurrency: config.concurrency,
        budget: requestBudget(config.maxRequestsPerSecond),
        maxPauseMs: config.maxGatewayPause,
        stop: options.signal,
        clock: options.clock,
        together: {
          journal,
          host,
          perSecond: config.maxRequestsPerSecond,
          onPaused: (ms, here) =>
            options.note(
              here
                ? `the gateway answered 429 (too many requests): no request starts for ${formatElapsed(ms)} on any host of this journal`
                : `another host of this journal was answered 429 (too many requests): no request starts here for ${formatElapsed(ms)}`,
            ),
        },
      }),
  };
  return { deps, engine: options.doorbell ? { ...engine, doorbell: options.doorbell } : engine };
}
