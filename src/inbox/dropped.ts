/**
 * Under four eyes, the person who dropped a file is its owner, so the file whose owner is
 * read must be a file of its own (no link, one name, writable by its owner alone), and
 * the file moved into processing/ the very one: owner, inode and, when it had to be
 * copied, its bytes, all through one handle opened in the inbox.
 */
import { createHash } from 'node:crypto';
import { constants, lstatSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Said } from '../messages/said.js';
import { moveInto } from './folders.js';

/** Who dropped a file; `sha256`: its bytes as dropped, when it reached processing/ as a copy. */
export interface Dropper {
  uid: number;
  sha256?: string;
}

/** Moves an inbox file into `processing` with its dropper, or says why four eyes leaves it. */
export async function moveDropped(
  file: string,
  processing: string,
): Promise<{ refused: Said } | { moved: string | undefined; dropper?: Dropper }> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO dropped there never stalls the pass.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { refused: refusal(file, 'link', 1, 0) };
    // Gone (another host took it), or unreadable: the move and the reading say so.
    return { moved: code === 'ENOENT' ? undefined : moveInto(file, processing) };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { refused: refusal(file, 'not-a-file', stat.nlink, stat.mode) };
    if (stat.nlink !== 1) return { refused: refusal(file, 'linked', stat.nlink, stat.mode) };
    if ((stat.mode & 0o022) !== 0)
      return { refused: refusal(file, 'writable', stat.nlink, stat.mode) };
    const moved = moveInto(file, processing);
    if (!moved) return { moved };
    const now = lstatSync(moved, { throwIfNoEntry: false });
    if (now?.dev === stat.dev && now.ino === stat.ino) return { moved, dropper: { uid: stat.uid } };
    // Copied across disks, or another file put in its place meanwhile: its bytes tell.
    return { moved, dropper: { uid: stat.uid, sha256: await sha256Through(handle) } };
  } finally {
    await handle.close();
  }
}

function refusal(
  file: string,
  why: Extract<Said, { code: 'fourEyesInboxRefused' }>['why'],
  links: number,
  mode: number,
): Said {
  const octal = (mode & 0o7777).toString(8).padStart(4, '0');
  return { code: 'fourEyesInboxRefused', file: basename(file), why, links, mode: octal };
}

/** The SHA-256 of what a handle reads from its start. */
async function sha256Through(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1 << 20);
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return hash.digest('hex');
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}
