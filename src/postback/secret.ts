/**
 * The per-install secret in the postback path: made once, kept owner-only in the home
 * folder, so every postbackUrl the gateway was given keeps working across restarts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Reads the secret, making it first when there is none. */
export function postbackSecret(home: string): string {
  const path = join(home, 'postback.secret');
  try {
    // wx: two processes starting at once make one secret, and the second reads it.
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = readFileSync(path, 'utf8').trim();
  if (!/^[\w-]{32,}$/.test(secret)) {
    throw new Error(`${path} does not hold a postback secret: delete it and one is made again`);
  }
  return secret;
}
