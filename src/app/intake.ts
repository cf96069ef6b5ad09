/**
 * What a pass does with each payout file it finds and with each batch only the journal
 * knows of, decided from what it knows of them, with no file or journal touched: the
 * plan half of intake (applyIntake reads the folders and the journal, then does it).
 */
import { commandTarget, givenName } from '../csv/given-name.js';
import type { IngestResult } from '../engine/ingest.js';
import type { FileState } from '../messages/file-state.js';
import type { BatchState } from '../journal/journal.js';
import type { Said } from '../messages/said.js';

/** What a pass knows of one payout file when it decides what to do with it. */
export type FileFacts =
  /** In the inbox, `ready` once it has settled; `settle` is inboxSettle, for people. */
  | { where: 'inbox'; file: string; name: string; ready: boolean; settle: string }
  /**
   * In processing/, not read yet. `seenAs`: the batch this process journaled it as, when
   * its size and time have not changed since.
   */
  | { where: 'processing'; file: string; seenAs: number | undefined }
  /** In processing/, just read into the journal, with the state its batch is in now. */
  | { where: 'read'; file: string; read: IngestResult; batchState: BatchState | undefined };

export type IntakeAction =
  /** Left in the inbox for a later pass. */
  | { kind: 'leave'; file: string; why: Said }
  /** Moved into processing/, read there with the files an earlier run left. */
  | { kind: 'take'; file: string }
  /** Read into the journal: a batch found or made, its rows admitted as they stream in. */
  | { kind: 'read'; file: string }
  /** Journaled before: its rows are followed, not journaled again. */
  | { kind: 'resume'; file: string; batchId: number }
  /** Moved on by another run while this one read it: that run's now. */
  | { kind: 'forget'; file: string }
  /**
   * Moved to awaiting-approval/ with its report. `remember`: when it cannot be moved, this
   * process takes it as read (a file just journaled), rather than trying again next pass.
   */
  | { kind: 'await-approval'; file: string; batchId: number; remember: boolean }
  /** Its reading stopped for a reason of the machine's: left in processing/, read again next pass. */
  | { kind: 'wait'; file: string; batchId: number | undefined; why: Said }
  /** It cannot be used: moved to rejected/ with its reasons. */
  | { kind: 'reject'; file: string; batchId: number | undefined; problems: Said[] }
  /** Journaled now: its rows queued (`taken`), or every one held by its file (`held`). */
  | { kind: 'journal'; file: string; batchId: number; state: 'taken' | 'held'; problems: Said[] };

/** What may become of a file once it is read, or known to be journaled. */
export type ReadAction = Exclude<IntakeAction, { kind: 'leave' | 'take' | 'read' }>;

type FactsIn<Where extends FileFacts['where']> = Extract<FileFacts, { where: Where }>;
type ActionOf<Kind extends IntakeAction['kind']> = Extract<IntakeAction, { kind: Kind }>;

export function planFile(facts: FactsIn<'inbox'>): ActionOf<'take' | 'leave'>;
export function planFile(facts: FactsIn<'processing'>): ActionOf<'read' | 'resume'>;
export function planFile(facts: FactsIn<'read'>): ReadAction;
export function planFile(facts: FileFacts): IntakeAction;
export function planFile(facts: FileFacts): IntakeAction {
  const { file } = facts;
  switch (facts.where) {
    case 'inbox':
      // A file still being written is never read half: taken once it has settled.
      return facts.ready
        ? { kind: 'take', file }
        : {
            kind: 'leave',
            file,
            why: { code: 'waitingToSettle', settle: facts.settle, file: facts.name },
          };
    case 'processing':
      return facts.seenAs === undefined
        ? { kind: 'read', file }
        : { kind: 'resume', file, batchId: facts.seenAs };
    case 'read':
      return planRead(file, facts.read, facts.batchState);
  }
}

function planRead(
  file: string,
  read: IngestResult,
  batchState: BatchState | undefined,
): ReadAction {
  switch (read.kind) {
    case 'gone':
      return { kind: 'forget', file };
    case 'same-file':
      // Its bytes wait for approval (left here by a crash, or dropped again): back to
      // wait. Otherwise left here by an earlier run: followed, not journaled again.
      return batchState === 'awaiting-approval'
        ? { kind: 'await-approval', file, batchId: read.batchId, remember: false }
        : { kind: 'resume', file, batchId: read.batchId };
    case 'unusable':
      return { kind: 'reject', file, batchId: read.batchId, problems: problemsOf(read) };
    case 'unfinished':
      return { kind: 'wait', file, batchId: read.batchId, why: read.why };
    case 'awaiting-approval':
      return { kind: 'await-approval', file, batchId: read.batchId, remember: true };
    case 'held':
    case 'open':
      return {
        kind: 'journal',
        file,
        batchId: read.batchId,
        state: read.kind === 'held' ? 'held' : 'taken',
        problems: problemsOf(read),
      };
  }
}

function problemsOf(read: { report: { problems: readonly { message: Said }[] } }): Said[] {
  return read.report.problems.map((problem) => problem.message);
}

/** A file a pass names without having handled it, as the journal knows it. */
export interface ListedBatch {
  file: string;
  batchId: number;
  state: FileState;
  outcome: string;
  problems: Said[];
  /** Waiting for a person (approval, a file gone while it was read). */
  fileNeedsAPerson: boolean;
  /** Open, its file not in processing/: its rows are followed and its result written from the journal. */
  fileElsewhere: boolean;
}

/** The journal's batches a pass names beside the files it handled. */
export interface BatchFacts {
  awaitingApproval: readonly {
    id: number;
    fileName: string;
    awaitingName: string | null;
    /** The corrected copy, itself waiting for approval, that took over every row it had left. */
    replacedBy?: { id: number; fileName: string; awaitingName: string | null; receivedAt: number };
    /** Under four eyes: who may release it, and the approvals that do not count. */
    fourEyes?: Said[];
  }[];
  /**
   * Batches with rows not final (open, underfunded, held), with whether `payouts retry`
   * made payouts of theirs, and what holds them.
   */
  open: readonly {
    id: number;
    fileName: string;
    retried: boolean;
    /** Rows held for `payouts retry`: a payout they repeat did not pay. */
    waitingRetry: boolean;
    problems: readonly Said[];
  }[];
  /** Batches still `admitting` once every file in processing/ was read. */
  admitting: readonly { id: number; fileName: string }[];
  /** Batches of the files this pass handled: named once. */
  handled: ReadonlySet<number>;
  /** Names of files in processing/ another host is reading: their batches are its to name. */
  readElsewhere: ReadonlySet<string>;
  hintFlags: string;
}

export function planListedBatches(facts: BatchFacts): ListedBatch[] {
  const nameOf = (batch: BatchFacts['awaitingApproval'][number]) =>
    batch.awaitingName ?? batch.fileName;
  const waiting = facts.awaitingApproval.filter((batch) => !batch.replacedBy);
  const target = (batch: BatchFacts['awaitingApproval'][number]) => {
    const name = nameOf(batch);
    const shared = waiting.some(
      (other) => other.id !== batch.id && givenName(nameOf(other)) === givenName(name),
    );
    return commandTarget(name, batch.id, facts.hintFlags, shared);
  };
  const awaiting = facts.awaitingApproval.map((batch): ListedBatch => {
    const name = nameOf(batch);
    const copy = batch.replacedBy;
    if (copy) {
      return {
        file: name,
        batchId: batch.id,
        state: 'replaced',
        outcome: 'replaced',
        problems: [
          {
            code: 'replacedByCopy',
            copyFile: givenName(copy.fileName),
            copyBatchId: copy.id,
            at: copy.receivedAt,
            next: target(copy),
          },
        ],
        fileNeedsAPerson: false,
        fileElsewhere: false,
      };
    }
    return {
      file: name,
      batchId: batch.id,
      state: 'awaiting-approval',
      outcome: 'waiting for approval in awaiting-approval/',
      problems: batch.fourEyes ?? [{ code: 'awaitingApproval', ...target(batch) }],
      fileNeedsAPerson: true,
      fileElsewhere: false,
    };
  });
  // Every file in processing/ was read, so an open batch not handled has its file
  // elsewhere (archived before a retry opened it again, or moved away by hand): its rows
  // are still sent, followed and written into its result like any file's.
  const mine = (batch: { id: number; fileName: string }) =>
    !facts.handled.has(batch.id) && !facts.readElsewhere.has(batch.fileName);
  const open = facts.open
    .filter((batch) => mine(batch))
    .map((batch): ListedBatch => {
      const how: Pick<ListedBatch, 'state' | 'outcome' | 'problems'> = batch.retried
        ? { state: 'retried', outcome: 'sent again on purpose (payouts retry)', problems: [] }
        : batch.waitingRetry
          ? {
              state: 'waiting-retry',
              outcome: 'rows wait for payouts retry: a payout they repeat did not pay',
              problems: [],
            }
          : {
              state: 'resumed',
              outcome: 'resumed from the journal: its file is not in processing/',
              problems: [{ code: 'fileNotInProcessing', file: batch.fileName }],
            };
      return {
        file: batch.fileName,
        batchId: batch.id,
        ...how,
        problems: [...batch.problems, ...how.problems],
        fileNeedsAPerson: false,
        fileElsewhere: true,
      };
    });
  // Every file in processing/ was read, so a batch still `admitting` lost its file while
  // a run that was reading it died: its rows wait, unsent, for the same bytes.
  const cutShort = facts.admitting
    .filter((batch) => mine(batch))
    .map((batch): ListedBatch => ({
      file: batch.fileName,
      batchId: batch.id,
      state: 'cut-short',
      outcome: 'reading cut short',
      problems: [{ code: 'cutShort', file: batch.fileName }],
      fileNeedsAPerson: true,
      fileElsewhere: false,
    }));
  return [...awaiting, ...open, ...cutShort];
}
