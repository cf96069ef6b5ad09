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
