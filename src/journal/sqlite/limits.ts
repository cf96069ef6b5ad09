/**
 * The gateway's limits on a SQLite journal: one host owns it, so there is no other host to
 * pause or to share a budget with; the pool keeps that host's own.
 */
import type { JournalLimits } from '../journal.js';
import type { GatewaySight } from '../types.js';
import type { Synchronous } from './context.js';

export function createLimits(): Synchronous<JournalLimits> {
  return {
    lookAtGateway: (): GatewaySight => ({ pausedForMs: 0, others: [], joined: false }),
    pauseGateway: () => undefined,
  };
}
