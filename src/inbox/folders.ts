/**
 * The home folder's layout: files arrive in `inbox/`, are worked on in `processing/`,
 * end in `archive/` (every row final) or `rejected/` (the file itself unreadable), and
 * the journal sits beside them.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  constants,
  copyFileSync,
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError } from '../config/load.js';

/** A file's SHA-256, read as a stream: a payout file may be hundreds of megabytes. */
export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface Folders {
  home: string;
  inbox: string;
  processing: string;
  archive: string;
  rejected: string;
  results: string;
  /** Files waiting for a person's approval (requireApproval), with their reports. */
  awaiting: string;
  /** Where a person moves an awaiting file to release it. */
  approved: string;
  journal: string;
  /** The journal's copy for sharedGroup, which `validate` weighs files against (journal/sqlite/view.ts). */
  view: string;
}

export function homeFolders(home: string, inbox?: string): Folders {
  const root = resolve(home);
  return {
    home: root,
    inbox: resolve(inbox ?? join(root, 'inbox')),
    processing: join(root, 'processing'),
    archive: join(root, 'archive'),
    rejected: join(root, 'rejected'),
    results: join(root, 'results'),
    awaiting: join(root, 'awaiting-approval'),
    approved: join(root, 'approved'),
    journal: join(root, 'journal.db'),
    view: join(root, 'journal-view.db'),
  };
}

/**
 * What a group sharing the home (accounting) may do in each folder: drop files in the
 * inbox and move them through approval, read results and what became of each file. The
 * setgid bit gives what is made inside the folder's group. The journal, its marker and
 * the postback secret stay owner-only (0600) whatever the sharing.
 */
export const SHARED_MODES = {
  inbox: 0o2770,
  awaiting: 0o2770,
  approved: 0o2770,
  processing: 0o2750,
  archive: 0o2750,
  rejected: 0o2750,
  results: 0o2750,
  // Last: the folders inside make it (a home that is a file fails there, with ENOTDIR).
  home: 0o750,
} as const satisfies Partial<Record<keyof Folders, number>>;

/**
 * Under four eyes, folders where people leave files for others to weigh: sticky (+t), so
 * nobody renames or deletes another person's file there (a dropped file, an approval).
 */
const STICKY: readonly (keyof Folders)[] = ['inbox', 'awaiting', 'approved'];

/**
 * Makes the home's folders, and sets their modes at every start, so a folder made before
 * the first run, or changed by hand, is set right. Without a shared group every folder
 * under the home is owner-only (0700); the home is left as it was made. With one
 * (`sharedGroup`), every folder is given that group and its mode in SHARED_MODES, sticky
 * where STICKY says under `fourEyes`. An `--inbox` elsewhere is the operator's and is left alone.
 */
export function ensureFolders(
  folders: Folders,
  sharedGroup: string | null = null,
  fourEyes = false,
): void {
  const gid = sharedGroup === null ? undefined : groupId(sharedGroup);
  for (const [name, mode] of Object.entries(SHARED_MODES) as [
    keyof typeof SHARED_MODES,
    number,
  ][]) {
    const folder = folders[name];
    if (name !== 'home') mkdirSync(folder, { recursive: true, mode: 0o700 });
    if (name === 'inbox' && dirname(folder) !== folders.home) continue;
    if (gid === undefined && name === 'home') continue;
    try {
      if (gid !== undefined) chownSync(folder, -1, gid);
      const sticky = fourEyes && STICKY.includes(name) ? 0o1000 : 0;
      chmodSync(folder, gid === undefined ? 0o700 : mode | sticky);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EPERM') throw error;
      throw new ConfigError([folderRefused(folder, folders.home, sharedGroup)]);
    }
  }
}

/** Why a folder's group or mode cannot be set: another user's folder, or a group we are not in. */
function folderRefused(folder: string, home: string, sharedGroup: string | null): string {
  const owner = statSync(folder).uid;
  const runner = process.getuid?.();
  const what =
    sharedGroup === null
      ? `cannot make ${folder} owner-only (EPERM)`
      : `sharedGroup "${sharedGroup}": cannot give ${folder} to that group (EPERM)`;
  if (runner !== undefined && owner !== runner)
    return `${what}: ${folder} belongs to ${userNameOf(owner)} (uid ${owner}), not to ${userNameOf(runner)} (uid ${runner}), who runs this command: a command run as ${userNameOf(owner)} left it. As root: chown -R ${userNameOf(runner)}: ${home}`;
  if (sharedGroup === null) return what;
  return `${what}: the user running payouts must be a member of the group (usermod -aG ${sharedGroup} USER, then start payouts again)`;
}

/** A group's id from its name (through getent, so LDAP groups count) or its number. */
export function groupId(group: string): number {
  const gid = sharedGroupId(group);
  if (gid === undefined) {
    throw new ConfigError([
      `sharedGroup "${group}": there is no such group on this machine (make it with groupadd ${group}, or give its number)`,
    ]);
  }
  return gid;
}

/** The id of `sharedGroup`, or undefined when the machine has no such group. */
export function sharedGroupId(group: string): number | undefined {
  if (/^\d+$/.test(group)) return Number(group);
  const gid = Number(groupLine(group)?.split(':')[2]);
  return Number.isInteger(gid) ? gid : undefined;
}

function groupLine(group: string): string | undefined {
  return databaseLine('group', group, (fields) => fields[0] === group);
}

/** A user's name from its id (through getent, so LDAP users count), or `uid N`. */
export function userNameOf(uid: number): string {
  return (
    databaseLine('passwd', String(uid), (fields) => fields[2] === String(uid))?.split(':')[0] ??
    `uid ${uid}`
  );
}

/** A user's name and primary group from its id, as the system's user database has them. */
export function userEntry(uid: number): { name: string; gid: number } | undefined {
  const fields = databaseLine('passwd', String(uid), (f) => f[2] === String(uid))?.split(':');
  return fields?.[0] && fields[3] ? { name: fields[0], gid: Number(fields[3]) } : undefined;
}

/** A user's id from its name, as the system's user database has it. */
export function userIdOf(name: string): number | undefined {
  const uid = databaseLine('passwd', name, (f) => f[0] === name)?.split(':')[2];
  return uid ? Number(uid) : undefined;
}

/** A group's id and its listed members (not those whose primary group it is). */
export function groupEntry(group: string): { gid: number; members: string[] } | undefined {
  const fields = groupLine(group)?.split(':');
  if (!fields?.[2]) return undefined;
  return { gid: Number(fields[2]), members: (fields[3] ?? '').split(',').filter(Boolean) };
}

function databaseLine(
  database: 'group' | 'passwd',
  key: string,
  matches: (fields: string[]) => boolean,
): string | undefined {
  try {
    return execFileSync('getent', [database, key], { encoding: 'utf8' }).split('\n')[0];
  } catch (error) {
    // getent exits 2 for an unknown key; without getent, /etc/group or /etc/passwd is what there is.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    return readFileSync(`/etc/${database}`, 'utf8')
      .split('\n')
      .find((line) => matches(line.split(':')));
  }
}

/** Files a person or an ERP may leave that are not payout files, or not finished ones. */
const NOT_A_PAYOUT_FILE =
  /^(\.|~\$|\.~lock)|\.(tmp|part|crdownload|total|done|reason\.txt|report\.txt|aprovado|rejeitado|aprovado\.txt|rejeitado\.txt)$/i;

/** Whether a file name may be a payout file (not a temporary, lock or sidecar file). */
export function isPayoutFileName(name: string): boolean {
  return !NOT_A_PAYOUT_FILE.test(name);
}

/** Payout files in a folder, oldest name first. */
export function payoutFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter(isPayoutFileName)
    .map((name) => join(folder, name))
    .filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false)
    .sort();
}

/**
 * Moves a file (and its `.total`/`.done` sidecars) into a folder. When the name is
 * taken, the file becomes `name [2].csv` … `[9]`: a mark batchStem drops, so the file
 * keeps the name it arrived with as a batch (a `(2)` it may carry is the accountant's:
 * an installment, say). Then, when given, `name [lastResortMark].csv`. Undefined when
 * all are taken (the file is left where it is). `asName`: the name it takes there (the
 * archive's dated name) instead of its own.
 */
export function moveInto(
  file: string,
  folder: string,
  lastResortMark?: string,
  asName?: string,
): string | undefined {
  const name = asName ?? basename(file);
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const candidates = [name, ...[2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${stem} [${n}]${extension}`)];
  if (lastResortMark !== undefined) candidates.push(`${stem} [${lastResortMark}]${extension}`);
  const target = candidates
    .map((candidate) => join(folder, candidate))
    .find((path) => !existsSync(path));
  if (!target) return undefined;
  try {
    // link then unlink: unlike rename, it fails (EEXIST) rather than replace a file that
    // another run moved in meanwhile.
    let linked = true;
    try {
      linkSync(file, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EXDEV') {
        // An inbox on another disk: copy, still refusing to replace (COPYFILE_EXCL), with
        // the time it was last changed: how old a file is decides whether it is held.
        const { atime, mtime } = statSync(file);
        copyFileSync(file, target, constants.COPYFILE_EXCL);
        utimesSync(target, atime, mtime);
      } else if (code === 'EPERM') {
        // A file of another user where hard links are protected (fs.protected_hardlinks):
        // renamed, after a last look that the name is still free.
        if (existsSync(target)) return undefined;
        renameSync(file, target);
        linked = false;
      } else throw error;
    }
    if (linked) unlinkSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT: another run took it first. EEXIST: the name was taken meanwhile: next run.
    if (code === 'ENOENT' || code === 'EEXIST') return undefined;
    throw error;
  }
  for (const suffix of ['.total', '.done']) {
    try {
      renameSync(file + suffix, target + suffix);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Across disks, rename fails (EXDEV) before it looks whether the sidecar is there.
      if (code === 'EXDEV' && existsSync(file + suffix)) {
        copyFileSync(file + suffix, target + suffix);
        unlinkSync(file + suffix);
      } else if (code !== 'ENOENT' && code !== 'EXDEV') throw error;
    }
  }
  return target;
}

/** Moves an unreadable file to `rejected/`, with the reason beside it. */
export function reject(
  file: string,
  folder: string,
  reasons: readonly string[],
): string | undefined {
  const target = moveInto(file, folder);
  if (target) writeFileSync(`${target}.reason.txt`, `${reasons.join('\n')}\n`);
  return target;
}
