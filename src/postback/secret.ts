/**
 * The per-install secret in the postback path: made once, kept owner-only in the home
 * folder, so every postbackUrl the gateway was given keeps working across restarts.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PayoutsError } from '../errors.js';

/** Reads the secret, making it first when there is none. */
export function postbackSecret(home: string): string {
  const path = join(home, 'postback.secret');
  // Written whole under a name of its own, then linked into place: a reader never sees
  // it half written, and of two processes starting at once one secret wins (EEXIST).
  const draft = `${path}.${process.pid}.tmp`;
  writeFileSync(draft, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  const secret = readFileSync(path, 'utf8').trim();
  if (!/^[\w-]{32,}$/.test(secret)) {
    throw new PayoutsError(
      'postback-secret',
      `${path} does not hold a postback secret: delete it and one is made again`,
    );
  }
  return secret;
}
