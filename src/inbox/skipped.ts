/**
 * Files of a folder that are not taken as payout files (hidden, temporary, lock files),
 * each with why, so that no file is ever left unseen: a run names them every time, and
 * `status` lists them. Sidecars (`<file>.done`, `<file>.total`, reasons and reports) are
 * part of their file, and are not listed.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Said } from '../messages/said.js';

export interface SkippedFile {
  name: string;
  /** Why it is not taken. */
  why: string;
  /** What to do about it, when anything. */
  advice: Said | undefined;
  /** A file that may hold payouts no run will pay: a person must look (exit 2). */
  needsAPerson: boolean;
  /** A file still being written: it is taken once it has its final name (exit 3). */
  waits: boolean;
}

const SIDECAR = /\.(total|done|reason\.txt|report\.txt)$/i;
const TEMPORARY = /\.(tmp|part|crdownload)$/i;
const LOCK = /^(~\$|\.~lock)/;
const TABLE = /\.(csv|txt|tsv)$/i;

/** Why `name` is not a payout file, or undefined when it is one (or a sidecar). */
export function whySkipped(name: string): Omit<SkippedFile, 'name'> | undefined {
  if (LOCK.test(name)) {
    return {
      why: 'skipped: a lock file a spreadsheet keeps while the file is open (not payouts)',
      advice: undefined,
      needsAPerson: false,
      waits: false,
    };
  }
  if (TEMPORARY.test(name)) {
    return {
      why: 'skipped: a temporary file, still being written or downloaded',
      advice: { code: 'takenOnceRenamed' },
      needsAPerson: false,
      waits: true,
    };
  }
  if (name.startsWith('.')) {
    const table = TABLE.test(name);
    return {
      why: 'skipped: a hidden file (its name starts with a dot)',
      advice: table ? { code: 'hiddenPayoutFile' } : undefined,
      needsAPerson: table,
      waits: false,
    };
  }
  return undefined;
}

const NOT_A_FILE: Omit<SkippedFile, 'name'> = {
  why: 'not read: not a regular file (a folder, a pipe, or a link to a file that is gone)',
  advice: { code: 'notARegularFile' },
  needsAPerson: true,
  waits: false,
};

/** Every file of `folder` that is neither a payout file nor a sidecar, by name. */
export function skippedFiles(folder: string): SkippedFile[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => !SIDECAR.test(name) || LOCK.test(name))
    .sort()
    .flatMap((name) => {
      const regular = statSync(join(folder, name), { throwIfNoEntry: false })?.isFile() ?? false;
      const skipped = whySkipped(name);
      if (skipped) return regular ? [{ name, ...skipped }] : [];
      // Named like a payout file but not one that can be read: said, never passed over.
      if (!regular && TABLE.test(name)) return [{ name, ...NOT_A_FILE }];
      return [];
    });
}
