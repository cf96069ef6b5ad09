/**
 * The one family of errors a person is meant to read. A PayoutsError says what failed
 * and what to do in its message, carries a stable `code` naming the part that failed,
 * the exit code it ends a command with, and its `cause`. Anything thrown that is not one
 * (nor a system failure the entry point knows) is a bug: an internal error.
 *
 * It lives at the root of src/ and imports nothing, so every layer, the pure ones too,
 * may throw it without reaching for runtime/ (logger, signals) or cli/.
 */

export const PAYOUTS_ERROR_CODES = [
  /** A command's own verdict (ExitError): its line, if any, and its exit code. */
  'command',
  /** A setting that cannot be used (ConfigError): nothing ran. */
  'config',
  /** The gateway failed or refused (GatewayError, whose `kind` the caller acts on). */
  'gateway',
  /** The journal refused or cannot be used (JournalError). */
  'journal',
  /** The journal is not this home's own (JournalLossError, with its `kind`). */
  'journal-lost',
  /** The journal's marker cannot be read (MarkerError). */
  'journal-marker',
  /** The postback secret file holds something else. */
  'postback-secret',
  /** The temp folder cannot hold a big file's repeat keys (see csv/fingerprints.ts). */
  'temp-folder',
] as const;
export type PayoutsErrorCode = (typeof PAYOUTS_ERROR_CODES)[number];

/**
 * The exit codes of failures, as README.md "Exit codes" lists them (a command's own 2
 * and 3 are its verdict on the rows): sysexits' EX_USAGE for a command line that cannot
 * be taken, EX_SOFTWARE for a bug.
 */
export const EXIT_CODES = { failed: 1, usage: 64, internal: 70 } as const;

export interface PayoutsErrorOptions {
  /** The exit code a command ends with; `failed` (1) unless said. */
  exitCode?: number;
  cause?: unknown;
}

export class PayoutsError extends Error {
  override readonly name: string = 'PayoutsError';
  readonly exitCode: number;

  constructor(
    readonly code: PayoutsErrorCode,
    message: string,
    options: PayoutsErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.exitCode = options.exitCode ?? EXIT_CODES.failed;
  }
}

/**
 * A system or store error's code (`EACCES`), which says what failed on its own;
 * undefined for a PayoutsError, whose message says more than its code.
 */
export function systemCodeOf(error: unknown): string | undefined {
  if (error instanceof PayoutsError) return undefined;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
