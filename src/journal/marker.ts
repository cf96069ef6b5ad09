/**
 * The journal's marker: a small owner-only file in the home folder that remembers which
 * journal this home has (the identity its store reports) and how far it had got (the
 * highest audit id of a commit before which requests left, as the store reports it). It
 * outlives a deleted, emptied, replaced or restored journal, which is how such a journal
 * is noticed. Host-local by design, wherever the store lives: it is this host's own word
 * on the journal, so it is kept apart from the store whose loss it is to catch.
 *
 * It is made once by a write to a temporary file and a rename, then updated in place
 * with the commits that send: two slots, written in turn, each with a sequence number
 * and a checksum, so a write cut short by a crash leaves the other slot, and the marker
 * never says more than was durably written. An update in place, not a rename, so it
 * costs about what a SQLite commit does (docs/benchmarks.md).
 *
 * On a journal hosts share, each host keeps a marker of its own (`journal@HOST.marker`):
 * a host's word is then never written over by another's, which may say less. The home's
 * word is the highest of all its markers.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  write,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PayoutsError } from '../errors.js';
import { syncFolderOf } from '../runtime/sync-folder.js';

export const MARKER_NAME = 'journal.marker';

export interface MarkerState {
  /** The journal's identity: a random id kept in the journal too. */
  journalId: string;
  /** The highest audit id of a sending commit: a journal below it has forgotten sends. */
  highWater: number;
}

const SLOT_BYTES = 512;
const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);

export class MarkerError extends PayoutsError {
  override readonly name = 'MarkerError';
  constructor(message: string) {
    super('journal-marker', message);
  }
}

/** The marker of a home folder. */
export function markerIn(home: string): string {
  return join(home, MARKER_NAME);
}

/** The marker host `host` writes, on a journal hosts share. */
export function hostMarkerIn(home: string, host: string): string {
  return join(home, `journal@${host}.marker`);
}

/** A host's marker by its name: any host name, the machine's hostname included. */
const HOST_MARKER = /^journal@.+\.marker$/;

/** Every marker of a home folder: its own, and each host's, whether there or not. */
export function markersIn(home: string): string[] {
  let names: string[];
  try {
    names = readdirSync(home);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [markerIn(home)];
    throw error;
  }
  const hosts = names.filter((name) => HOST_MARKER.test(name)).sort();
  return [markerIn(home), ...hosts.map((name) => join(home, name))];
}

/**
 * What the markers of a home say together: the one that saw the most sent (each speaks
 * of one journal: a recovery writes one anew and removes the others), or undefined when
 * there is none.
 */
export function readHomeMarker(home: string): MarkerState | undefined {
  let highest: MarkerState | undefined;
  for (const path of markersIn(home)) {
    const state = readMarker(path);
    if (state && (!highest || state.highWater > highest.highWater)) highest = state;
  }
  return highest;
}

function encodeSlot(state: MarkerState, seq: number): Buffer {
  const body = JSON.stringify({ v: 1, seq, ...state });
  const sum = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const text = `${body} ${sum}`;
  if (text.length > SLOT_BYTES - 1) throw new MarkerError('journal marker: state too long');
  return Buffer.from(`${text.padEnd(SLOT_BYTES - 1)}\n`, 'utf8');
}

function decodeSlot(bytes: Buffer): (MarkerState & { seq: number }) | undefined {
  const text = bytes.toString('utf8').trimEnd();
  const cut = text.lastIndexOf(' ');
  if (cut < 0) return undefined;
  const body = text.slice(0, cut);
  if (createHash('sha256').update(body).digest('hex').slice(0, 16) !== text.slice(cut + 1)) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const { seq, journalId, highWater } = parsed;
    if (typeof seq !== 'number' || typeof journalId !== 'string' || typeof highWater !== 'number')
      return undefined;
    return { seq, journalId, highWater };
  } catch {
    return undefined;
  }
}

/**
 * What the marker says, or undefined when there is none. A marker whose slots are both
 * unreadable is an error: it existed, so this home has had a journal, and its word is
 * not to be guessed.
 */
export function readMarker(path: string): MarkerState | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const slots = [bytes.subarray(0, SLOT_BYTES), bytes.subarray(SLOT_BYTES, 2 * SLOT_BYTES)]
    .map(decodeSlot)
    .filter((slot) => slot !== undefined);
  const newest = slots.sort((a, b) => b.seq - a.seq)[0];
  if (!newest) {
    throw new MarkerError(
      `the journal marker ${path} cannot be read (both its copies are damaged): it says this home folder has had a journal, but not which`,
    );
  }
  return { journalId: newest.journalId, highWater: newest.highWater };
}

/** An open marker, updated as sends are committed; close it with the journal. */
export interface Marker {
  readonly state: MarkerState;
  /**
   * Resolves once the marker durably says at least `highWater`. Calls made while a write
   * is on its way share the next one (a group commit), so a burst of claims costs one.
   */
  cover(highWater: number): Promise<void>;
  close(): void;
}

/**
 * Writes a new marker in one piece (temporary file, fsync, rename, fsync of the folder),
 * replacing any, and opens it for updates.
 */
export function createMarker(path: string, state: MarkerState): Marker {
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, Buffer.concat([encodeSlot(state, 1), encodeSlot(state, 0)]));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncFolderOf(path);
  return openMarker(path, { ...state }, 1);
}

/** Opens an existing marker (as read by readMarker) for updates. */
export function openMarker(path: string, state: MarkerState, seq?: number): Marker {
  const fd = openSync(path, 'r+');
  let sequence = seq ?? newestSeq(path);
  const current = { ...state };
  let target = state.highWater;
  // Each cover waits behind the writes before it; a write finds the newest target.
  let tail: Promise<void> = Promise.resolve();

  const flush = async (): Promise<void> => {
    while (current.highWater < target) {
      // Another process of this host may have written it since this one opened it (a run
      // that waited for the lock): its newest slot is neither written over nor lowered.
      const newest = newestSlot(fd);
      const theirs = newest?.journalId === current.journalId ? newest.highWater : 0;
      const next = { journalId: current.journalId, highWater: Math.max(target, theirs) };
      sequence = Math.max(sequence, newest?.seq ?? 0) + 1;
      // The slot not holding the newest state: a torn write leaves that one whole.
      const slot = encodeSlot(next, sequence);
      await writeAsync(fd, slot, 0, SLOT_BYTES, (sequence % 2) * SLOT_BYTES);
      await fdatasyncAsync(fd);
      current.highWater = next.highWater;
    }
  };

  return {
    get state() {
      return { ...current };
    },
    cover(highWater: number): Promise<void> {
      target = Math.max(target, highWater);
      if (current.highWater >= highWater) return Promise.resolve();
      const written = tail.then(flush);
      tail = written.catch(() => undefined);
      return written;
    },
    close: () => closeSync(fd),
  };
}

function newestSeq(path: string): number {
  const bytes = readFileSync(path);
  return Math.max(
    0,
    ...[bytes.subarray(0, SLOT_BYTES), bytes.subarray(SLOT_BYTES, 2 * SLOT_BYTES)]
      .map(decodeSlot)
      .map((slot) => slot?.seq ?? 0),
  );
}

/** The newest whole slot of an open marker, read again: a read from the page cache. */
function newestSlot(fd: number): (MarkerState & { seq: number }) | undefined {
  const bytes = Buffer.alloc(2 * SLOT_BYTES);
  readSync(fd, bytes, 0, bytes.length, 0);
  return [bytes.subarray(0, SLOT_BYTES), bytes.subarray(SLOT_BYTES)]
    .map(decodeSlot)
    .filter((slot) => slot !== undefined)
    .sort((a, b) => b.seq - a.seq)[0];
}
