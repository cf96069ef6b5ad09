/** Running a command as `nobody`, the stand-in for a service user, when the tests run as root. */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NOBODY = { uid: 65534, gid: 65534 };
export const IS_ROOT = process.getuid?.() === 0;

/**
 * Whether `nobody` can reach this checkout (and so bin/payouts.js): every folder above it
 * open to others. A clone in a folder of root's own (`mktemp -d` makes it 0700) is not,
 * and a run as `nobody` there could not even start.
 */
export function nobodyReachesCheckout(): boolean {
  const checkout = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  for (let folder = checkout; ; folder = dirname(folder)) {
    if ((statSync(folder).mode & 0o001) === 0) return false;
    if (dirname(folder) === folder) return true;
  }
}
