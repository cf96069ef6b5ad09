import { PayoutsError } from '../errors.js';
import type { Said } from '../messages/said.js';

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
  /** Its store is not there and payouts may not make it (a database dropped or never made). */
  | 'missing'
  /** Its file is damaged: kept for a person, never deleted. */
  | 'damaged'
  /** Its disk is full or fails to write: free space, then run again. */
  | 'full'
  /** Its rules refused what was asked (a move not allowed, a row not there): `refusal` says what. */
  | 'refused'
  /** A newer payouts wrote it: `schema` says which versions. */
  | 'newer-schema';

export interface JournalErrorOptions {
  cause?: unknown;
  /** The store's own name for the failure (SQLite's result code): said beside its words, never acted on. */
  storeCode?: string;
  /** The journal's file (or address): a person is told which. */
  path?: string;
  /** Kind newer-schema: the journal's schema version, and the latest this payouts knows. */
  schema?: { found: number; latest: number };
  /** Kind refused: what a person reads of it; without it, the message is a developer's detail. */
  refusal?: Said;
}

/**
 * The journal failed or refused. A person reads it from its kind and facts (see
 * journal/failures.ts); its message is a developer's detail, or the store's own words.
 */
export class JournalError extends PayoutsError {
  override readonly name = 'JournalError';
  readonly storeCode: string | undefined;
  readonly path: string | undefined;
  readonly schema: { found: number; latest: number } | undefined;
  readonly refusal: Said | undefined;

  constructor(
    readonly kind: JournalErrorKind,
    message: string,
    options: JournalErrorOptions = {},
  ) {
    super('journal', message, { cause: options.cause });
    this.storeCode = options.storeCode;
    this.path = options.path;
    this.schema = options.schema;
    this.refusal = options.refusal;
  }
}
