/**
 * Opens a home folder's journal for work (sending, approving, reconciling) only when it
 * is the journal this home had: a missing, emptied, replaced or older journal would pay
 * again what it forgot, so it stops the command until a person restores the right one or
 * chooses recovery (docs/operations.md, "A lost journal"). A new home starts with no extra step.
 */
import { readdirSync, rmSync } from 'node:fs';
import { PayoutsError } from '../errors.js';
import { explainJournalFailure } from './failures.js';
import type {
  Journal,
  JournalLocation,
  JournalRecovery,
  JournalState,
  JournalStore,
} from './journal.js';
import type { Said } from '../messages/said.js';
import {
  journalAddress,
  journalMoved,
  journalState,
  openJournal,
  openJournalReadOnly,
} from './open.js';
import {
  describeBehind,
  describeLoss,
  judgeBeforeOpen,
  judgeOpened,
  recoveryNote,
  remakeDatabase,
  restoreOf,
  waysOn,
  type FoundAtGateway,
  type LossKind,
} from './loss.js';
import {
  createMarker,
  hostMarkerIn,
  markerIn,
  markersIn,
  MarkerError,
  openMarker,
  readHomeMarker,
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
  /** The home folder: its marker is kept there, wherever the journal's store is. */
  home: string;
  /** This host's name on a journal hosts share: it writes a marker of its own. */
  host?: string;
  /** Folders whose files show the home has worked before (processing/, archive/, results/). */
  historyFolders: readonly string[];
  /** A person chose recovery (`run --recover`): a loss is recorded and work goes on. */
  recover?: boolean;
  /** Remarks for the person (stderr). */
  note?: (text: string) => void;
  /** The journal's clock. */
  now: () => number;
  /** Requests in flight at once: a journal on a server sizes its connections from it. */
  concurrency?: number;
  /** Opened by journal copy, which reads a journal moved already (see JournalOptions). */
  copying?: boolean;
}

export async function openJournalForWork(
  location: JournalLocation,
  options: OpenForWorkOptions,
): Promise<Journal> {
  const note = options.note ?? (() => undefined);
  const path = journalAddress(location);
  const restore = restoreOf(location.kind, path);
  const markerPath =
    options.host === undefined ? markerIn(options.home) : hostMarkerIn(options.home, options.host);
  let marker: MarkerState | undefined;
  try {
    marker = readHomeMarker(options.home);
  } catch (error) {
    if (!(error instanceof MarkerError)) throw error;
    throw new JournalLossError(
      'marker',
      `${error.message}: nothing was sent. If ${path} is this home's own journal, move the marker aside and run again; otherwise ${waysOn(restore).replace(/^Either r/, 'r')}`,
    );
  }
  let before: LossKind | undefined;
  let journal: Journal;
  let open: Marker | undefined;
  try {
    const state = await journalState(location);
    before = judgeBeforeOpen({
      store: state,
      marker,
      homeHasHistory: options.historyFolders.some(hasFiles),
    });
    if (before && !options.recover) {
      throw new JournalLossError(
        before,
        lossMessage(describeLoss(before, path, { marker }), restore, firstOf(state, path)),
      );
    }
    journal = await openJournal(location, {
      now: options.now,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      copying: options.copying ?? false,
      onSending: (highWater) => open?.cover(highWater) ?? Promise.resolve(),
    });
  } catch (error) {
    if (error instanceof JournalLossError) throw error;
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
          restore,
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
    // Written anew when there was none (a new home, a journal from before markers, a host
    // new to the home) or after a recovery; otherwise opened to be kept up with the sends.
    const own = marker && !after ? readMarker(markerPath) : undefined;
    open = own ? openMarker(markerPath, own) : createMarker(markerPath, state);
    // The other hosts' markers speak of the journal before the recovery: they would refuse it.
    if (after) {
      for (const path of markersIn(options.home)) {
        if (path !== markerPath) rmSync(path, { force: true });
      }
    }
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
 * This home's journal read only (a dry run, status, doctor), when there is a file, with
 * the same judgement: the sentence for a lost, emptied, replaced or older journal, or
 * undefined when it is this home's own (or a new home); and where journal copy moved it,
 * if it did (work with it is refused). Nothing is created or written, not even a marker.
 */
export async function readJournal(
  location: JournalLocation,
  home: Pick<OpenForWorkOptions, 'home' | 'historyFolders'>,
  now: () => number,
): Promise<{ journal: Journal | undefined; loss: string | undefined; moved: Said | undefined }> {
  const state = await journalState(location);
  // A dropped database of a new home: opening it says which one, and what to do.
  const lost = state === 'no-store' ? await lossOf(undefined, state, location, home) : undefined;
  const journal =
    state === 'absent' || lost !== undefined ? undefined : await openJournalReadOnly(location, now);
  try {
    const moved = journalMoved(location);
    return {
      journal,
      loss: lost ?? (await lossOf(journal, state, location, home)),
      moved: moved && { code: 'journalMoved', ...moved },
    };
  } catch (error) {
    await journal?.close();
    throw error;
  }
}

async function lossOf(
  journal: Journal | undefined,
  state: JournalState,
  location: JournalLocation,
  { home, historyFolders }: Pick<OpenForWorkOptions, 'home' | 'historyFolders'>,
): Promise<string | undefined> {
  const path = journalAddress(location);
  const restore = restoreOf(location.kind, path);
  let marker: MarkerState | undefined;
  try {
    marker = readHomeMarker(home);
  } catch (error) {
    if (error instanceof MarkerError) return error.message;
    throw error;
  }
  const before = judgeBeforeOpen({
    store: state,
    marker,
    homeHasHistory: historyFolders.some(hasFiles),
  });
  if (before)
    return lossMessage(describeLoss(before, path, { marker }), restore, firstOf(state, path));
  if (marker === undefined || journal === undefined) return undefined;
  const journalId = (await journal.identity())?.journalId ?? '(none)';
  const highWater = await journal.highWater();
  const after = judgeOpened({ marker, journalId, highWater });
  return after
    ? lossMessage(describeLoss(after, path, { marker, journalId, highWater }), restore)
    : undefined;
}

/**
 * A batch about to be sent for the first time has a payout the gateway already has: the
 * journal is behind it. Without `recover`, the error that stops the command; with it, the
 * journal starts recovering, so every payout not yet sent is looked up first.
 */
export async function behindTheGateway(
  journal: JournalStore & JournalRecovery,
  found: FoundAtGateway,
  options: Pick<OpenForWorkOptions, 'recover' | 'note'>,
): Promise<void> {
  const what = describeBehind(found);
  if (!options.recover) {
    const { kind, address } = await journal.describe();
    throw new JournalLossError('behind', lossMessage(what, restoreOf(kind, address)));
  }
  await journal.startRecovery(what);
  options.note?.(recoveryNote(what));
}

/** What a person does before either way on: with no store, make it (the database) again. */
function firstOf(state: JournalState, address: string): string | undefined {
  return state === 'no-store' ? remakeDatabase(address) : undefined;
}

function lossMessage(what: string, restore: string, first?: string): string {
  const ways =
    first === undefined
      ? waysOn(restore)
      : `${first} Then ${waysOn(restore).replace(/^Either/, 'either')}`;
  return `${what}: nothing was sent. The journal is the only memory of what was paid, and a journal that forgot a payout would pay it again. ${ways}`;
}

/** Whether a folder holds a file (what payouts leaves there), not only folders. */
function hasFiles(folder: string): boolean {
  try {
    return readdirSync(folder, { withFileTypes: true }).some((entry) => entry.isFile());
  } catch {
    return false;
  }
}
