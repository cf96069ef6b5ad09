/**
 * The home folder's layout: files arrive in `inbox/`, are worked on in `processing/`,
 * end in `archive/` (every row final) or `rejected/` (the file itself unreadable), and
 * the journal sits beside them.
 */
import {
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';

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
  };
}

export function ensureFolders(folders: Folders): void {
  for (const folder of [
    folders.inbox,
    folders.processing,
    folders.archive,
    folders.rejected,
    folders.results,
    folders.awaiting,
    folders.approved,
  ]) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  }
}

/** Files a person or an ERP may leave that are not payout files, or not finished ones. */
const NOT_A_PAYOUT_FILE =
  /^(\.|~\$|\.~lock)|\.(tmp|part|crdownload|total|done|reason\.txt|report\.txt)$/i;

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
        // An inbox on another disk: copy, still refusing to replace (COPYFILE_EXCL).
        copyFileSync(file, target, constants.COPYFILE_EXCL);
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
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
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
