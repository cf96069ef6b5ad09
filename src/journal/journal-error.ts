import { PayoutsError } from '../errors.js';

/** The journal refused a change, or cannot be used as it is; the message names what. */
export class JournalError extends PayoutsError {
  override readonly name = 'JournalError';
  constructor(message: string) {
    super('journal', message);
  }
}

/**
 * The journal, not a file, failed: our own journal error, or better-sqlite3's (a
 * SQLITE_* code).
 */
export function isJournalError(error: unknown): boolean {
  if (error instanceof JournalError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}
