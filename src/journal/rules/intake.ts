/**
 * Which batch a file's bytes belong to, decided from the batches these bytes made before:
 * an admission a dead run left (resumed), the batch a file left in processing/ made
 * (followed, never journaled again), or none (a batch of its own).
 */
import type { ArrivingFile, BatchOfFile, BatchRecord } from '../types.js';

export function earlierBatchOf(
  file: ArrivingFile,
  earlier: readonly BatchRecord[],
): { kind: Exclude<BatchOfFile['kind'], 'new'>; batch: BatchRecord } | undefined {
  const resuming = earlier.find((batch) => batch.state === 'admitting');
  if (resuming) return { kind: 'resume', batch: resuming };
  // A file that has just arrived is a batch of its own whatever its bytes (next month's
  // fixed payroll may be byte for byte this month's): the rules on who is paid judge its
  // rows. A waiting batch whose file is in awaiting-approval/ already is not this one: an
  // approved file's copy of its very bytes must not take it back there. Of several
  // batches of these bytes, the one read under this name in processing/; under another
  // name, only an approved file (moved there from approved/). Any other is a file a run
  // moved in and died before reading: a batch of its own.
  const candidates = earlier.filter(
    (batch) =>
      !file.arrived &&
      !['unusable', 'refused', 'done'].includes(batch.state) &&
      !(batch.state === 'awaiting-approval' && batch.awaitingName !== null),
  );
  const made =
    candidates.findLast((batch) => batch.fileName === file.name) ??
    candidates.findLast((batch) => batch.awaitingName !== null);
  return made && { kind: 'same-file', batch: made };
}
