/** Thrown by a command to end with a code; the entry point prints the message and exits. */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  constructor(
    readonly exitCode: number,
    message = '',
  ) {
    super(message);
  }
}
