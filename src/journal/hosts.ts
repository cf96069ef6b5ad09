/** The hosts at work on a journal, one entry each, from what the store saw of them. Pure. */
import { hostOfWorker } from '../runtime/worker-name.js';
import type { HostsSeen } from './types.js';

export interface HostAtWork {
  host: string;
  /** Its last sight by the journal's clock; undefined for a host known only by its leases. */
  seenAt: number | undefined;
  /**
   * How far its clock read from the journal's when last measured; undefined if never, or
   * when that reading's round trip was too slow to tell.
   */
  clockOffsetMs: number | undefined;
  /** The round trip of its last clock reading; undefined if never measured. */
  clockRoundTripMs: number | undefined;
  /** The locks it holds, by name. */
  holds: string[];
  /** The rows under its leases, and when the last of those leases ends. */
  leased: { rows: number; until: number } | undefined;
}

/** Every host seen, holding a lock or holding leased rows, by name. */
export function hostsAtWork(seen: HostsSeen): HostAtWork[] {
  const byHost = new Map<string, HostAtWork>();
  const entry = (host: string): HostAtWork => {
    const known = byHost.get(host) ?? {
      host,
      seenAt: undefined,
      clockOffsetMs: undefined,
      clockRoundTripMs: undefined,
      holds: [],
      leased: undefined,
    };
    byHost.set(host, known);
    return known;
  };
  const sighted = (host: string, at: number) => {
    const known = entry(host);
    known.seenAt = Math.max(known.seenAt ?? at, at);
  };
  for (const { host, seenAt, clockOffsetMs, clockRoundTripMs } of seen.hosts) {
    sighted(host, seenAt);
    entry(host).clockOffsetMs = clockOffsetMs ?? undefined;
    entry(host).clockRoundTripMs = clockRoundTripMs ?? undefined;
  }
  for (const { name, host, heartbeatAt } of seen.locks) {
    sighted(host, heartbeatAt);
    entry(host).holds.push(name);
  }
  for (const { owner, rows, until } of seen.leases) {
    const known = entry(hostOfWorker(owner));
    known.leased = {
      rows: (known.leased?.rows ?? 0) + rows,
      until: Math.max(known.leased?.until ?? until, until),
    };
  }
  return [...byHost.values()].sort((a, b) => a.host.localeCompare(b.host));
}
