/**
 * When a file in the inbox may be taken: once it has stopped changing (size and
 * modification time the same for `settleMs`), or at once when a `<file>.done` sits
 * beside it. A file still being copied in is never read half.
 */
import { existsSync, statSync } from 'node:fs';

export function settledFiles(settleMs: number, now: () => number): (path: string) => boolean {
  const seen = new Map<string, { size: number; mtimeMs: number; since: number }>();
  return (path) => {
    if (existsSync(`${path}.done`)) return true;
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) {
      seen.delete(path);
      return false;
    }
    const last = seen.get(path);
    if (!last || last.size !== stat.size || last.mtimeMs !== stat.mtimeMs) {
      seen.set(path, { size: stat.size, mtimeMs: stat.mtimeMs, since: now() });
      return false;
    }
    if (now() - last.since < settleMs) return false;
    seen.delete(path);
    return true;
  };
}

/**
 * The same rule for a process that looks once (`payouts run`): a file last changed at
 * least `settleMs` ago, or with a `<file>.done` beside it.
 */
export function settledByAge(settleMs: number, now: () => number): (path: string) => boolean {
  return (path) => {
    if (existsSync(`${path}.done`)) return true;
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat !== undefined && now() - stat.mtimeMs >= settleMs;
  };
}

/**
 * The longest `payouts run` waits for a second look at the inbox: a cron run must not
 * stall on a long inboxSettle; files it could not look at twice wait for a later run.
 */
export const MAX_SECOND_LOOK_MS = 30_000;

/**
 * The rule for `payouts run`, judged on our own clock (a file share's may run ahead, or
 * behind): a file is taken when a `<file>.done` sits beside it, when its modification
 * time is at least `settleMs` before our now, or when its size and time are the same
 * after we wait `settleMs` once (when that is at most MAX_SECOND_LOOK_MS). Looks at
 * `paths` now, waits at most once, and answers for each.
 */
export async function settledOnOurClock(
  paths: readonly string[],
  settleMs: number,
  sleep: (ms: number) => Promise<void>,
  now: () => number = Date.now,
): Promise<(path: string) => boolean> {
  const ready = new Set<string>();
  const firstLook = new Map<string, { size: number; mtimeMs: number }>();
  for (const path of paths) {
    if (existsSync(`${path}.done`)) {
      ready.add(path);
      continue;
    }
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    // Old on our clock: it stopped changing long enough ago. A time ahead of ours proves
    // nothing, so such a file is looked at again.
    if (now() - stat.mtimeMs >= settleMs) ready.add(path);
    else firstLook.set(path, { size: stat.size, mtimeMs: stat.mtimeMs });
  }
  if (firstLook.size > 0 && settleMs <= MAX_SECOND_LOOK_MS) {
    await sleep(settleMs);
    for (const [path, seen] of firstLook) {
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat && stat.size === seen.size && stat.mtimeMs === seen.mtimeMs) ready.add(path);
    }
  }
  return (path) => ready.has(path) || existsSync(`${path}.done`);
}
