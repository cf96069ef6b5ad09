/**
 * Seeded fault injection for the sandbox: the same seed and the same order of
 * requests give the same faults, so a failing test can be replayed.
 */
import type { Operation } from '../gateway/errors.js';

export interface Faults {
  /** Seed of the pseudo-random draws. */
  seed: number;
  /** Added to every answer: a fixed delay, or a uniform draw in [min, max]. */
  latencyMs: number | { min: number; max: number };
  /** Share of requests answered 500 before anything is created. */
  serverErrorRate: number;
  /** Share of creates answered 500 after the transaction was created. */
  serverErrorAfterCommitRate: number;
  /** Share of requests answered 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitRate: number;
  retryAfterSeconds: number;
  /** Share of requests never answered (the connection stays open). */
  hangRate: number;
  /** Share of creates whose transaction is created, then the connection destroyed. */
  dropAfterCommitRate: number;
  /** Operations the faults apply to; all of them when empty. */
  operations: readonly Operation[];
}

export const NO_FAULTS: Faults = {
  seed: 1,
  latencyMs: 0,
  serverErrorRate: 0,
  serverErrorAfterCommitRate: 0,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  hangRate: 0,
  dropAfterCommitRate: 0,
  operations: [],
};

/** What happens to one request before the operation runs. */
export type BeforeFault = 'none' | 'rate-limit' | 'server-error' | 'hang';
/** What happens to a create's answer after the transaction exists. */
export type AfterFault = 'none' | 'server-error' | 'drop';

/** mulberry32: small, fast and good enough to spread faults. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function appliesTo(faults: Faults, operation: Operation): boolean {
  return faults.operations.length === 0 || faults.operations.includes(operation);
}

export function drawLatency(faults: Faults, random: () => number): number {
  if (typeof faults.latencyMs === 'number') return faults.latencyMs;
  const { min, max } = faults.latencyMs;
  return min + Math.floor(random() * (max - min + 1));
}

export function drawBefore(faults: Faults, random: () => number): BeforeFault {
  const r = random();
  let edge = faults.rateLimitRate;
  if (r < edge) return 'rate-limit';
  edge += faults.serverErrorRate;
  if (r < edge) return 'server-error';
  edge += faults.hangRate;
  if (r < edge) return 'hang';
  return 'none';
}

export function drawAfter(faults: Faults, random: () => number): AfterFault {
  const r = random();
  if (r < faults.dropAfterCommitRate) return 'drop';
  if (r < faults.dropAfterCommitRate + faults.serverErrorAfterCommitRate) return 'server-error';
  return 'none';
}
