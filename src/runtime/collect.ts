/**
 * A full garbage collection, asked for where a big piece of work leaves much dead: V8
 * collects its old generation only once it has grown to about four times what lived after
 * its last full collection, so `payouts run` of a million rows held the reader's dead
 * tables and 30–40 MB of dead rows at its peak, never collected (docs/benchmarks.md).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Rows read, or payees reported, between two collections: each takes 20–150 ms. */
export const WORK_BETWEEN_COLLECTIONS = 100_000;

let gc: (() => void) | undefined;

export function collectGarbage(): void {
  // Made at the first call, not at start-up (a new context costs ~5 ms to every command).
  // Given to a context of its own: the program's global never has a `gc`. Node lets V8's
  // flags be set after it started.
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
