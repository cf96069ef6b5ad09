import { PayoutsError } from '../errors.js';

/**
 * Thrown by a command to end with a code: its verdict (2, 3) or its failure with the
 * line to say. The entry point prints the message, if any, and exits with the code.
 */
export class ExitError extends PayoutsError {
  override readonly name = 'ExitError';
  constructor(exitCode: number, message = '') {
    super('command', message, { exitCode });
  }
}

/** The exit code of a command line that cannot be understood (sysexits' EX_USAGE). */
export const USAGE_EXIT_CODE = 64;

/**
 * A command line that cannot be taken, found by the command rather than by the parser:
 * one line and where to read more, as the parser's own usage errors say it.
 */
export function usageError(command: string, message: string): ExitError {
  const help = command === '' ? 'payouts --help' : `payouts ${command} --help`;
  return new ExitError(USAGE_EXIT_CODE, `${message} (see ${help})`);
}
