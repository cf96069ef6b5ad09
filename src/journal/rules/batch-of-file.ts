/**
 * Which batch a file's bytes are, decided from the batches of the same bytes a store
 * reads (by sha256): an admission to resume, the batch an earlier run made of this very
 * file, or none (a batch of its own, whose rows the rules on who is paid judge).
 */
import type { BatchState } from '../batch-states.js';
import type { ArrivingFile, BatchRecord } from '../types.js';

/** States of a batch no file of its bytes is taken back into. */
const CLOSED: readonly BatchState[] = ['unusable', 'refused', 'done'];

export type EarlierBatch = { kind: 'resume' | 'same-file'; batch: BatchRecord } | { kind: 'new' };

/**
 * A file an earlier run left in processing/: its rows are followed, not journaled again.
 * One that has just arrived is a batch of its own whatever its bytes (next month's fixed
 * payroll may be byte for byte this month's). A waiting batch whose file is in
 * awaiting-approval/ already is not this one: an approved file's copy of its very bytes
 * must not take it back there. Of several batches of these bytes, the one read under
 * this name in processing/; under another name, only an approved file (moved there from
 * approved/). Any other is a file a run moved in and died before reading.
 */
export function batchOfFile(
  file: Pick<ArrivingFile, 'name' | 'arrived'>,
  earlier: readonly BatchRecord[],
): EarlierBatch {
  const resuming = earlier.find((batch) => batch.state === 'admitting');
  if (resuming) return { kind: 'resume', batch: resuming };
  const candidates = earlier.filter(
    (batch) =>
      !file.arrived &&
      !CLOSED.includes(batch.state) &&
      !(batch.state === 'awaiting-approval' && batch.awaitingName !== null),
  );
  const made =
    candidates.findLast((batch) => batch.fileName === file.name) ??
    candidates.findLast((batch) => batch.awaitingName !== null);
  return made ? { kind: 'same-file', batch: made } : { kind: 'new' };
}
