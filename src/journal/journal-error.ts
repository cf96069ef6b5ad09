import { PayoutsError } from '../errors.js';

/** The journal refused a change, or cannot be used as it is; the message names what. */
export class JournalError extends PayoutsError {
  override readonly name = 'JournalError';
  constructor(message: string) {
    super('journal', message);
  }
}
