/**
 * Opens a home folder's journal for work (sending, approving, reconciling) only when it
 * is the journal this home had: a missing, emptied, replaced or older journal would pay
 * again what it forgot, so it stops the command until a person restores the right one or
 * chooses recovery (docs/operations.md, "A lost journal"). A new home starts with no extra step.
 */
import { readdirSync, statSync } from 'node:fs';
import { PayoutsError } from '../errors.js';
import { explainJournalFailure } from './failures.js';
import { openJournal, type Journal } from './journal.js';
import { Database } from './sqlite.js';
import { asJournal } from './sqlite/store-errors.js';
import {
  describeBehind,
  describeLoss,
  judgeBeforeOpen,
  judgeOpened,
  recoveryNote,
  waysOn,
  type FoundAtGateway,
  type LossKind,
} from './loss.js';
import {
  createMarker,
  markerPathOf,
  MarkerError,
  openMarker,
  readMarker,
  type Marker,
  type MarkerState,
} from './marker.js';

/** Why the journal may not be worked with: a sentence of what happened and what to do. */
export class JournalLossError extends PayoutsError {
  override readonly name = 'JournalLossError';
  constructor(
    readonly kind: LossKind | 'damaged' | 'marker' | 'behind',
    message: string,
  ) {
    super('journal-lost', message);
  }
}

export interface OpenForWorkOptions {
  /** Folders whose files show the home has worked before (processing/, archive/, results/). */
  historyFolders: readonly string[];
  /** A person chose recovery (`run --recover`): a loss is recorded and work goes on. */
  recover?: boolean;
  /** Remarks for the person (stderr). */
  note?: (text: string) => void;
  /** The journal's clock. */
  now: () => number;
}

export async function openJournalForWork(
  path: string,
  options: OpenForWorkOptions,
): Promise<Journal> {
  const note = options.note ?? (() => undefined);
  const markerPath = markerPathOf(path);
  let marker: MarkerState | undefined;
  try {
    marker = readMarker(markerPath);
  } catch (error) {
    if (!(error instanceof MarkerError)) throw error;
    throw new JournalLossError(
      'marker',
      `${error.message}: nothing was sent. If ${path} is this home's own journal, move the marker aside and run again; otherwise ${waysOn(path).replace(/^Either r/, 'r')}`,
    );
  }
  const size = statSync(path, { throwIfNoEntry: false })?.size;
  const before = judgeBeforeOpen({
    file: size === undefined ? 'absent' : size === 0 ? 'empty' : 'present',
    marker,
    homeHasHistory: options.historyFolders.some(hasFiles),
  });
  if (before && !options.recover) {
    throw new JournalLossError(before, lossMessage(describeLoss(before, path, { marker }), path));
  }

  let open: Marker | undefined;
  let journal: Journal;
  try {
    journal = openJournal(path, {
      now: options.now,
      onSending: (highWater) => open?.cover(highWater) ?? Promise.resolve(),
    });
  } catch (error) {
    const damaged = explainJournalFailure(error, 'nothing');
    if (damaged) throw new JournalLossError('damaged', damaged);
    throw error;
  }
  try {
    const identity = await journal.identity();
    if (!identity) throw new Error('the journal has no identity after its migrations');
    const highWater = await journal.highWater();
    const after =
      before ??
      judgeOpened({
        marker,
        journalId: identity.journalId,
        highWater,
      });
    if (after && !options.recover) {
      throw new JournalLossError(
        after,
        lossMessage(
          describeLoss(after, path, { marker, journalId: identity.journalId, highWater }),
          path,
        ),
      );
    }
    if (after) {
      const what = describeLoss(after, path, { marker, journalId: identity.journalId, highWater });
      await journal.startRecovery(what);
      note(recoveryNote(what));
    } else if (options.recover) {
      note(
        identity.recoverySince === null
          ? '--recover: the journal is this home folder\u2019s own and up to date by its marker: it recovers only if the gateway has a payout of a new batch it never sent'
          : '--recover: this journal is already recovering (every first send is looked up first): running as usual',
      );
    }
    const state = { journalId: identity.journalId, highWater };
    // Written anew when there was none (a new home, or a journal from before markers) or
    // after a recovery; otherwise opened to be kept up with the sends.
    open =
      marker === undefined || after
        ? createMarker(markerPath, state)
        : openMarker(markerPath, marker);
  } catch (error) {
    await journal.close();
    if (error instanceof JournalLossError) throw error;
    const damaged = explainJournalFailure(error, 'nothing');
    if (damaged) throw new JournalLossError('damaged', damaged);
    throw error;
  }
  const markerFile = open;
  return {
    ...journal,
    close: async () => {
      try {
        await journal.close();
      } finally {
        markerFile.close();
      }
    },
  };
}

/**
 * The same judgement, reading only (a dry run, status): the sentence for a lost, emptied,
 * replaced or older journal, or undefined when it is this home's own (or a new home).
 * Nothing is created or written, not even a marker.
 */
export function journalLoss(path: string, historyFolders: readonly string[]): string | undefined {
  let marker: MarkerState | undefined;
  try {
    marker = readMarker(markerPathOf(path));
  } catch (error) {
    if (error instanceof MarkerError) return error.message;
    throw error;
  }
  const size = statSync(path, { throwIfNoEntry: false })?.size;
  const before = judgeBeforeOpen({
    file: size === undefined ? 'absent' : size === 0 ? 'empty' : 'present',
    marker,
    homeHasHistory: historyFolders.some(hasFiles),
  });
  if (before) return lossMessage(describeLoss(before, path, { marker }), path);
  if (marker === undefined || size === undefined) return undefined;
  // Read as the journal reads: its failures are the journal's (store-errors.ts).
  return asJournal(path, () => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const hasIdentity = db
        .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'identity'`)
        .get();
      const journalId = hasIdentity
        ? (
            db.prepare(`SELECT journal_id FROM identity WHERE id = 1`).get() as
              { journal_id: string } | undefined
          )?.journal_id
        : undefined;
      const highWater = (
        db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM audit`).get() as { id: number }
      ).id;
      const after = judgeOpened({ marker, journalId: journalId ?? '(none)', highWater });
      return after
        ? lossMessage(
            describeLoss(after, path, { marker, journalId: journalId ?? '(none)', highWater }),
            path,
          )
        : undefined;
    } finally {
      db.close();
    }
  });
}

/**
 * A batch about to be sent for the first time has a payout the gateway already has: the
 * journal is behind it. Without `recover`, the error that stops the command; with it, the
 * journal starts recovering, so every payout not yet sent is looked up first.
 */
export async function behindTheGateway(
  journal: Journal,
  found: FoundAtGateway,
  options: Pick<OpenForWorkOptions, 'recover' | 'note'>,
): Promise<void> {
  const what = describeBehind(found);
  if (!options.recover) {
    throw new JournalLossError('behind', lossMessage(what, journal.path));
  }
  await journal.startRecovery(what);
  options.note?.(recoveryNote(what));
}

function lossMessage(what: string, path: string): string {
  return `${what}: nothing was sent. The journal is the only memory of what was paid, and a journal that forgot a payout would pay it again. ${waysOn(path)}`;
}

/** Whether a folder holds a file (what payouts leaves there), not only folders. */
function hasFiles(folder: string): boolean {
  try {
    return readdirSync(folder, { withFileTypes: true }).some((entry) => entry.isFile());
  } catch {
    return false;
  }
}
