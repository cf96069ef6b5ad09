/**
 * A person's answer to the rules on who is paid: the rows of a file held as possible
 * duplicates, or held whole because the file is named as an earlier batch, are new
 * payments after all (`payouts approve FILE --new-batch`). Each release frees only the
 * reasons it names, and every row it frees records who released it and when. A row that
 * repeats a payout of duplicateWindow is freed only when the person gave the count of
 * such rows the tool listed (`--repeats N`): money paid twice needs saying so. Under four
 * eyes an answer frees rows only while their file waits for its approvers.
 */
import { basename } from 'node:path';
import { givenName } from '../csv/given-name.js';
import { newBatchRelease, type LinePick } from '../journal/answers.js';
import { droppedBy } from './four-eyes.js';
import type {
  AdmissionRules,
  BatchRecord,
  HeldRow,
  JournalBatches,
  JournalCorrections,
  JournalReports,
} from '../journal/journal.js';
import type { HoldReason } from '../journal/states.js';
import type { Said } from '../messages/said.js';

export type HoldRelease =
  | {
      kind: 'released';
      batchId: number;
      rows: number;
      cents: number;
      /** Rows that repeat a payout of duplicateWindow: freed only when `repeatsReleased`. */
      repeating: HeldRow[];
      repeatsReleased: boolean;
    }
  /** `--repeats N` named another count than the rows that repeat: nothing was freed. */
  | { kind: 'repeats-differ'; batchId: number; repeating: HeldRow[]; given: number }
  /** `--rows` or `--except` named lines not held for these answers: nothing was freed. */
  | { kind: 'rows-not-held'; batchId: number; repeating: HeldRow[]; lines: number[] }
  /** Several files of that name wait for an answer and none was picked: nothing was freed. */
  | { kind: 'which-batch'; batches: BatchRecord[] }
  /** `--corrects` named a batch this file neither shares a name with nor repeats: nothing changed. */
  | { kind: 'not-a-copy'; batchId: number; corrected: BatchRecord; candidates: BatchRecord[] }
  /** Under four eyes, of a batch its approvers released: only approvers send rows, nothing was freed. */
  | { kind: 'four-eyes'; batchId: number; dropper: string };

/**
 * The reasons `--new-batch` answers: "these are new payments, not copies" (a corrected
 * key's too: the right person is paid once the wrong one returned the money).
 */
const NEW_BATCH_REASONS: readonly HoldReason[] = ['duplicate', 'same-name', 'changes-payee'];
const CLOSED: readonly BatchRecord['state'][] = ['refused', 'unusable', 'done'];
/** The reasons a person's answer may release, one answer each. */
export const ANSWERED: readonly HoldReason[] = [...NEW_BATCH_REASONS, 'identical'];

export type HoldAnswer =
  /**
   * `approve FILE --new-batch`: its held rows are new payments (those of the lines `pick`
   * names, when given); `repeats`: the count of those that repeat a payout of
   * duplicateWindow, said by the person to free them too.
   */
  | { newBatch: true; by: string; repeats?: number; pick?: LinePick }
  /** `approve FILE --identical`: its rows identical to an earlier row of it are both due. */
  | { identical: true; by: string }
  /** `approve FILE --corrects BATCH`: it is a corrected copy of that batch. */
  | { corrects: number; by: string };

/** `line 2 (Ana Souza, R$ 3.500,00) repeats folha.csv line 2 (paid)`, for the audit trail. */

/** The batches of a file name as the accountant gave it (`folha [2].csv` is `folha.csv`), oldest first. */
export async function batchesGivenAs(
  journal: JournalBatches,
  fileName: string,
): Promise<BatchRecord[]> {
  const name = givenName(basename(fileName));
  return (await journal.batches()).filter((batch) => givenName(batch.fileName) === name);
}

/** The batches a copy may correct: earlier ones of its name, and those its held rows repeat. */
async function correctable(
  journal: JournalBatches & JournalReports,
  copy: BatchRecord,
): Promise<BatchRecord[]> {
  const repeated = new Set(
    (await journal.heldRowsOfBatch(copy.id)).flatMap((row) => row.repeats?.batchId ?? []),
  );
  return (await journal.batches()).filter(
    (batch) =>
      batch.id !== copy.id &&
      (repeated.has(batch.id) ||
        (batch.id < copy.id && givenName(batch.fileName) === givenName(copy.fileName))),
  );
}

/**
 * Applies a person's answer to the batch of this file name that has rows held by the
 * rules on who is paid (the one numbered `pick`, when given); undefined when none has
 * (nothing changes then). Several such batches and none picked free nothing: the person
 * says which. `rows`: how many of its rows may now be sent, as `rules` weigh them.
 */
export async function releaseHolds(
  journal: JournalBatches & JournalReports & JournalCorrections,
  fileName: string,
  answer: HoldAnswer,
  rules: AdmissionRules,
  pick?: number,
  fourEyes = false,
): Promise<HoldRelease | undefined> {
  const waiting: BatchRecord[] = [];
  for (const candidate of await batchesGivenAs(journal, fileName)) {
    // A batch turned down or closed sends nothing: an answer must not free (or supersede) for it.
    if (CLOSED.includes(candidate.state)) continue;
    if (pick !== undefined && candidate.id !== pick) continue;
    const holds = await journal.holdsOfBatch(candidate.id);
    if (holds.some((hold) => hold.reason !== null && ANSWERED.includes(hold.reason))) {
      waiting.push(candidate);
    }
  }
  if (waiting.length > 1) return { kind: 'which-batch', batches: waiting };
  const batch = waiting[0];
  if (!batch) return undefined;
  // Freed now, its rows would go out with no approver: the service answers, never approves.
  if (batch.state !== 'awaiting-approval') {
    const dropped = droppedBy(await journal.batchEvents(batch.id));
    if (fourEyes || dropped !== undefined)
      return { kind: 'four-eyes', batchId: batch.id, dropper: dropped ?? '?' };
  }
  if ('identical' in answer) {
    const freed = await journal.releaseHolds(batch.id, 'identical', {
      code: 'releasedIdenticalBy',
      by: answer.by,
    });
    await journal.recordBatchEvent(batch.id, 'released', answer.by, {
      code: 'eventIdenticalDue',
      rows: freed.rows,
    });
    return { kind: 'released', batchId: batch.id, ...freed, repeating: [], repeatsReleased: false };
  }
  if ('corrects' in answer) {
    // A mistyped number must not link the file to another, whose unsent rows would close.
    const candidates = await correctable(journal, batch);
    const corrected = await journal.batch(answer.corrects);
    if (corrected && !candidates.some((candidate) => candidate.id === corrected.id)) {
      return { kind: 'not-a-copy', batchId: batch.id, corrected, candidates };
    }
    const why: Said = { code: 'linkedCopyBy', by: answer.by, batchId: answer.corrects };
    const rows = await journal.correctBatch(batch.id, answer.corrects, why, rules);
    await journal.recordBatchEvent(batch.id, 'corrects', answer.by, {
      code: 'eventCorrects',
      batchId: answer.corrects,
    });
    return {
      kind: 'released',
      batchId: batch.id,
      rows,
      cents: 0,
      repeating: [],
      repeatsReleased: false,
    };
  }
  const held = await journal.heldRowsOfBatch(batch.id);
  const { free, repeating, differ, notHeld } = newBatchRelease(held, answer.repeats, answer.pick);
  if (notHeld.length > 0) {
    return { kind: 'rows-not-held', batchId: batch.id, repeating, lines: notHeld };
  }
  if (differ) {
    return { kind: 'repeats-differ', batchId: batch.id, repeating, given: answer.repeats ?? 0 };
  }
  const repeatsReleased = answer.repeats !== undefined;
  const why: Said = { code: 'releasedNewBy', by: answer.by, repeats: answer.repeats ?? null };
  let rows = 0;
  let cents = 0;
  for (const reason of NEW_BATCH_REASONS) {
    const only = free.filter((row) => row.reason === reason).map((row) => row.orderId);
    if (only.length === 0) continue;
    const freed = await journal.releaseHolds(batch.id, reason, why, only);
    rows += freed.rows;
    cents += freed.cents;
  }
  await journal.recordBatchEvent(batch.id, 'released', answer.by, {
    code: 'eventNewPayments',
    rows,
    confirmed: repeatsReleased,
    repeating: repeating.map(({ line, name, cents, repeats }) => ({
      line,
      name,
      cents,
      repeats: repeats && {
        file: repeats.fileName,
        line: repeats.line,
        orderId: repeats.orderId,
        state: repeats.state,
      },
    })),
  });
  return { kind: 'released', batchId: batch.id, rows, cents, repeating, repeatsReleased };
}
