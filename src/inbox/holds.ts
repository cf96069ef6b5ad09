/**
 * A person's answer to the rules on who is paid: the rows of a file held as possible
 * duplicates, or held whole because the file is named as an earlier batch, are new
 * payments after all (`payouts approve FILE --new-batch`). Each release frees only the
 * reasons it names, and every row it frees records who released it and when.
 */
import { basename } from 'node:path';
import type { BatchRecord, Journal } from '../journal/journal.js';
import type { HoldReason } from '../journal/states.js';

export interface HoldRelease {
  batchId: number;
  rows: number;
  cents: number;
}

/**
 * The reasons `--new-batch` answers: "these are new payments, not copies" (a corrected
 * key's too: the right person is paid once the wrong one returned the money).
 */
const NEW_BATCH_REASONS: readonly HoldReason[] = ['duplicate', 'same-name', 'changes-payee'];
/** The reasons a person's answer may release, one answer each. */
const ANSWERED: readonly HoldReason[] = [...NEW_BATCH_REASONS, 'identical'];

export type HoldAnswer =
  /** `approve FILE --new-batch`: its held rows are new payments. */
  | { newBatch: true; by: string }
  /** `approve FILE --identical`: its rows identical to an earlier row of it are both due. */
  | { identical: true; by: string }
  /** `approve FILE --corrects BATCH`: it is a corrected copy of that batch. */
  | { corrects: number; by: string };

/**
 * Applies a person's answer to the newest batch of this file name that has rows held by
 * the rules on who is paid; undefined when none has (nothing changes then). `rows`: how
 * many of its rows may now be sent.
 */
export async function releaseHolds(
  journal: Journal,
  fileName: string,
  answer: HoldAnswer,
): Promise<HoldRelease | undefined> {
  const name = basename(fileName);
  let batch: BatchRecord | undefined;
  for (const candidate of (await journal.batches(name)).reverse()) {
    const holds = await journal.holdsOfBatch(candidate.id);
    if (holds.some((hold) => hold.reason !== null && ANSWERED.includes(hold.reason))) {
      batch = candidate;
      break;
    }
  }
  if (!batch) return undefined;
  if ('identical' in answer) {
    const freed = await journal.releaseHolds(
      batch.id,
      'identical',
      `released by ${answer.by}: both identical rows are due (payouts approve --identical)`,
    );
    await journal.recordBatchEvent(
      batch.id,
      'released',
      answer.by,
      `${freed.rows} identical rows are due`,
    );
    return { batchId: batch.id, ...freed };
  }
  if ('corrects' in answer) {
    const why = `linked by ${answer.by} as a corrected copy of batch ${answer.corrects} (payouts approve --corrects)`;
    const rows = await journal.correctBatch(batch.id, answer.corrects, why);
    await journal.recordBatchEvent(
      batch.id,
      'corrects',
      answer.by,
      `a corrected copy of batch ${answer.corrects}`,
    );
    return { batchId: batch.id, rows, cents: 0 };
  }
  const why = `released by ${answer.by}: new payments, not copies of an earlier file (payouts approve --new-batch)`;
  let rows = 0;
  let cents = 0;
  for (const reason of NEW_BATCH_REASONS) {
    const freed = await journal.releaseHolds(batch.id, reason, why);
    rows += freed.rows;
    cents += freed.cents;
  }
  await journal.recordBatchEvent(
    batch.id,
    'released',
    answer.by,
    `${rows} held rows are new payments`,
  );
  return { batchId: batch.id, rows, cents };
}
