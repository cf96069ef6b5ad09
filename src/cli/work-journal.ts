/**
 * The journal of a command that works (run, watch, approve, reject, retry, reconcile):
 * opened only when it is this home's own (see openJournalForWork), else exit 1 with what
 * happened and the two ways on; and only on a clock not behind it (see refuseClockBehind).
 */
import { existsSync } from 'node:fs';
import type { Folders } from '../inbox/folders.js';
import type { Config } from '../config/schema.js';
import { ClockBehindError, refuseClockBehind } from '../journal/clock-behind.js';
import type { Journal } from '../journal/journal.js';
import { JournalLossError, openJournalForWork, readJournal } from '../journal/open-for-work.js';
import { markersIn } from '../journal/marker.js';
import { journalLocationOf } from '../journal/location.js';
import type { JournalLocation } from '../journal/journal.js';
import { homeJournalFailure, requireJournal, requireOwnHome, type Output } from './context.js';
import { ExitError } from './exit-error.js';
import { hostClockOff } from '../journal/clock-skew.js';
import { HEARTBEAT_MS } from '../inbox/lock.js';
import { CATALOGS } from '../messages/catalog.js';
import { say } from '../messages/say.js';
import { hostNameOf } from '../runtime/worker-name.js';

/**
 * Read-only (status, run --dry-run): this home's journal when it has one, and why it is
 * not this home's own (lost, emptied, replaced, older), if so; exit 1 naming a journal
 * that cannot be read.
 */
export async function readHomeJournal(
  folders: Folders,
  config: Pick<Config, 'journal'>,
  now: () => number,
): ReturnType<typeof readJournal> {
  try {
    return await readJournal(homeJournalAt(folders, config), homeOf(folders), now);
  } catch (error) {
    throw homeJournalFailure(error);
  }
}

/** Read-only (doctor): the same, a journal that cannot be read thrown as it failed. */
export function readJournalOf(
  folders: Folders,
  config: Pick<Config, 'journal'>,
  now: () => number,
): ReturnType<typeof readJournal> {
  return readJournal(homeJournalAt(folders, config), homeOf(folders), now);
}

/** Where this home's journal is: the `journal` setting's database, or the home's own file. */
export function homeJournalAt(folders: Folders, config: Pick<Config, 'journal'>): JournalLocation {
  return journalLocationOf(config.journal, folders.journal);
}

/** The home's marker, and the folders whose files show it has worked before. */
function homeOf(folders: Folders): { home: string; historyFolders: string[] } {
  return {
    home: folders.home,
    historyFolders: [folders.processing, folders.archive, folders.results],
  };
}

export async function openWorkJournal(
  verb: string,
  folders: Folders,
  out: Output,
  config: Pick<
    Config,
    'language' | 'timeZone' | 'journal' | 'concurrency' | 'maxClockSkew' | 'hostName'
  >,
  options: {
    now: () => number;
    recover?: boolean;
    mustExist?: boolean;
    copying?: boolean;
    waitForClock?: WaitForClock;
  },
): Promise<Journal> {
  requireOwnHome(verb, folders);
  const location = homeJournalAt(folders, config);
  // A home with a marker has had a journal: its absence is a loss, not a typo.
  if (options.mustExist && !markersIn(folders.home).some((path) => existsSync(path))) {
    await requireJournal(verb, location);
  }
  let journal: Journal;
  try {
    // Awaited here: a loss the opening finds is its rejection, said as this command's.
    journal = await openJournalForWork(location, {
      ...homeOf(folders),
      // Hosts sharing a journal each keep a marker: none writes over another's word.
      ...(location.kind === 'postgres' && { host: hostNameOf(config.hostName) }),
      concurrency: config.concurrency,
      recover: options.recover ?? false,
      now: options.now,
      copying: options.copying ?? false,
      // Said even with --quiet: a recovery changes how every payout is sent from now on.
      note: (text) => out.warn(text),
    });
  } catch (error) {
    if (error instanceof JournalLossError)
      throw new ExitError(1, `payouts ${verb}: ${error.message}`);
    throw error;
  }
  try {
    // A daemon stopped while its clock was off works on nothing: nothing more to check.
    if (await refuseClockOff(verb, journal, config, options))
      await refuseClockBehind(journal, options.now(), config);
  } catch (error) {
    await journal.close();
    if (error instanceof ClockBehindError)
      throw new ExitError(1, `payouts ${verb}: ${error.message}`);
    throw error;
  }
  return journal;
}

/** The daemon's way with a clock off: told the sentence once, then a wait before it looks again. */
export interface WaitForClock {
  told(text: string): void;
  /** False once the daemon is stopping. */
  wait(): Promise<boolean>;
}

type ClockSettings = Pick<Config, 'language' | 'maxClockSkew' | 'hostName'>;

/**
 * What to say when this host's clock is off from the journal's by more than maxClockSkew,
 * or cannot be told to be within it; `working` on a clock found right, only when it is off.
 */
export async function clockOffText(
  journal: Journal,
  config: ClockSettings,
  now: () => number,
  watching: boolean,
  working: boolean,
): Promise<string | undefined> {
  const off = await hostClockOff(
    journal,
    hostNameOf(config.hostName),
    now,
    config.maxClockSkew,
    watching,
  );
  // A slow round trip is no news of a clock found right: the next heartbeat reads it again.
  if (off === undefined || (working && off.code === 'hostClockUnknown')) return undefined;
  return say(CATALOGS[config.language ?? 'en'], off);
}

/**
 * This host's clock measured against the journal's: off by more than maxClockSkew, a
 * command refuses (exit 1, the sentence), and the daemon waits until it is right (true) or
 * it stops (false).
 */
async function refuseClockOff(
  verb: string,
  journal: Journal,
  config: ClockSettings,
  options: { now: () => number; waitForClock?: WaitForClock },
): Promise<boolean> {
  const { waitForClock } = options;
  for (let told = false; ; told = true) {
    const text = await clockOffText(
      journal,
      config,
      options.now,
      waitForClock !== undefined,
      false,
    );
    if (text === undefined) return true;
    if (!waitForClock) throw new ExitError(1, `payouts ${verb}: ${text}`);
    if (!told) waitForClock.told(text);
    if (!(await waitForClock.wait())) return false;
  }
}

/** The daemon waiting, out of the home's way, until this host's clock is right again. */
export function untilClockRight(
  journal: Journal,
  config: ClockSettings,
  options: { now: () => number; waitForClock: WaitForClock },
): Promise<boolean> {
  return refuseClockOff('watch', journal, config, options);
}

/**
 * This host's clock measured again with each heartbeat of the home's lock while a command
 * works; `onOff` is told the sentence the first time it is off. Returns what stops it.
 */
export function checkClockWhileWorking(
  journal: Journal,
  config: ClockSettings,
  options: { now: () => number; watching: boolean; onOff: (text: string) => void },
): () => void {
  const check = async (): Promise<void> => {
    try {
      const text = await clockOffText(journal, config, options.now, options.watching, true);
      if (text === undefined) return;
      clearInterval(timer);
      options.onOff(text);
    } catch {
      // The journal away: the lock's heartbeat says so, and the next beat measures again.
    }
  };
  // Not awaited by the timer: check catches what fails.
  const timer = setInterval(() => void check(), HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
