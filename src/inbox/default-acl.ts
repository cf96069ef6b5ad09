/**
 * Whether a file that another user saves in a shared inbox is readable by payouts, whatever
 * that user's umask: only the folder's default ACL decides that (a file made in a folder
 * with one takes its entries, and the writer's umask is not applied), so that is what
 * `payouts doctor` reads.
 */
import { execFileSync } from 'node:child_process';

/** One entry of a default ACL: `id` for a named user or group, undefined for the owner's. */
export interface AclEntry {
  tag: 'user' | 'group' | 'mask' | 'other';
  id: number | undefined;
  read: boolean;
  write: boolean;
}

/** The entries of `getfacl --omit-header --numeric --default` (`group:1001:rw-`); empty when none. */
export function parseDefaultAcl(text: string): AclEntry[] {
  const entries: AclEntry[] = [];
  for (const line of text.split('\n')) {
    const [tag, id, perms] = (line.split('#')[0] ?? '').trim().split(':');
    if (tag !== 'user' && tag !== 'group' && tag !== 'mask' && tag !== 'other') continue;
    entries.push({
      tag,
      id: id ? Number(id) : undefined,
      read: perms?.[0] === 'r',
      write: perms?.[1] === 'w',
    });
  }
  return entries;
}

/**
 * Whether `reader` may read a file another user makes in the folder, by the POSIX ACL
 * check: a named user entry of the reader decides; else the group entries the reader is
 * in (the file's own group, which a setgid folder gives it, or a named one); else other.
 * The mask limits every entry but other's.
 */
export function defaultAclLetsRead(
  entries: readonly AclEntry[],
  reader: { uid: number; gids: readonly number[] },
  fileGid: number,
): boolean {
  if (entries.length === 0) return false;
  const mask = entries.find((entry) => entry.tag === 'mask')?.read ?? true;
  const own = entries.find((entry) => entry.tag === 'user' && entry.id === reader.uid);
  if (own) return own.read && mask;
  const groups = entries.filter(
    (entry) =>
      entry.tag === 'group' && reader.gids.includes(entry.id === undefined ? fileGid : entry.id),
  );
  if (groups.length > 0) return mask && groups.some((entry) => entry.read);
  return entries.some((entry) => entry.tag === 'other' && entry.read);
}

/**
 * Whether a file made in the folder may be changed by others than its owner: a named
 * user's or a group's entry with write (within the mask), or other's. Under four eyes
 * such a file is not taken: its owner is who dropped it.
 */
export function defaultAclLetsOthersWrite(entries: readonly AclEntry[]): boolean {
  const mask = entries.find((entry) => entry.tag === 'mask')?.write ?? true;
  return entries.some((entry) =>
    entry.tag === 'other'
      ? entry.write
      : (entry.tag === 'group' || (entry.tag === 'user' && entry.id !== undefined)) &&
        entry.write &&
        mask,
  );
}

/** The folder's default ACL as getfacl prints it, or undefined when getfacl is not installed. */
export function readDefaultAcl(
  folder: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  try {
    return execFileSync('getfacl', ['--omit-header', '--numeric', '--default', folder], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
