import { PayoutsError } from '../errors.js';

/**
 * What became of the journal, which says what a person does about it: whichever store
 * holds it (SQLite today), its adapter says each of its failures as one of these.
 */
export type JournalErrorKind =
  /**
   * It cannot be opened or written now (its folder, its permissions, a lock held too
   * long, an I/O error, its store gone): run again once it can.
   */
  | 'unavailable'
  /** Its file is damaged: kept for a person, never deleted. */
  | 'damaged'
  /** Its disk is full or fails to write: free space, then run again. */
  | 'full'
  /** Its rules refused what was asked (a move not allowed, a row not there): the message says what. */
  | 'refused'
  /** A newer payouts wrote it. */
  | 'newer-schema';

export interface JournalErrorOptions {
  cause?: unknown;
  /** The store's own name for the failure (SQLite's result code): said beside its words, never acted on. */
  storeCode?: string;
  /**
   * The journal's file, on a failure of its store: a person is told which. Without it,
   * the journal's own word (a refusal, its schema), whole in its message.
   */
  path?: string;
}

/**
 * The journal failed or refused. Its own refusals and conditions say all in their
 * message; its store's failure carries the store's words, its code and the journal's path.
 */
export class JournalError extends PayoutsError {
  override readonly name = 'JournalError';
  readonly storeCode: string | undefined;
  readonly path: string | undefined;

  constructor(
    readonly kind: JournalErrorKind,
    message: string,
    options: JournalErrorOptions = {},
  ) {
    super('journal', message, { cause: options.cause });
    this.storeCode = options.storeCode;
    this.path = options.path;
  }
}
