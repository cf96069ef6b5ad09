import { closeSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes the rename of `path` durable: a renamed file's new name is on disk only once its
 * folder is synced, so a power cut right after leaves the old file or the new one.
 */
export function syncFolderOf(path: string): void {
  const folder = openSync(dirname(path), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
