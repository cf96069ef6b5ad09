import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits (bounded by `ms`) until `condition` holds, looking every 100 ms; a condition that
 * throws (a database away) does not hold yet.
 */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = 90_000,
): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {
      // looked at again below
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(100);
  }
}

/**
 * Waits until process `pid` is stopped (state T in /proc): a run says it freezes a moment
 * before it does, and a SIGCONT sent in between would be lost and leave it frozen.
 */
export async function waitForStopped(pid: number, ms = 10_000): Promise<void> {
  await waitFor(
    `process ${pid} to stop`,
    () => /^\d+ \(.*\) T /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')),
    ms,
  );
}
