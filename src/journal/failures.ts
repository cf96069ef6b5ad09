/**
 * The store's failures that a person must act on, as sentences that name the journal and
 * say what happened and what to do: a damaged journal, a full disk, a journal that cannot
 * be used. Told by the JournalError's kind; the journal's own word (a refusal, a newer
 * schema) is a Said of its facts, for the catalogs to say.
 */
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';
import { JournalError } from './journal-error.js';
import { isPostgresUrl } from './location.js';
import { remakeDatabase, restoreOf, waysOn } from './loss.js';

/**
 * The sentence for a failure of the journal's store, or undefined when `error` is none.
 * `sent` says whether requests may have left before it (a failure at open: none did).
 */
export function explainJournalFailure(
  error: unknown,
  sent: 'nothing' | 'maybe',
): string | undefined {
  if (!(error instanceof JournalError) || error.path === undefined) return undefined;
  const { path } = error;
  if (error.kind === 'refused' || error.kind === 'newer-schema') return undefined;
  // A PostgreSQL journal is named by its server's address, a SQLite one by its file.
  const store = isPostgresUrl(path) ? 'postgres' : 'sqlite';
  const what = error.message;
  const stopped =
    sent === 'nothing'
      ? 'nothing was sent'
      : 'nothing more is sent; requests in flight are left for the next run to resolve by lookup';
  switch (error.kind) {
    case 'full':
      return `the disk holding the journal ${path} is full or failing to write (${what}): ${stopped}. Free space on that disk (df -h), then run again; the journal is kept as it is.`;
    case 'damaged':
      return `the journal ${path} is damaged (${what}): ${stopped}. Do not delete it, and keep it for a person to look at. ${waysOn(
        restoreOf(store, path),
      )
        .replace('Either restore the right journal', 'Either restore the last good copy of it')
        .replace(
          'or run "payouts run --recover"',
          'or move it aside and run "payouts run --recover"',
        )}`;
    case 'missing': {
      const code = error.storeCode === undefined ? '' : `${error.storeCode}: `;
      return `the journal's database ${path} does not exist (${code}${what}): ${stopped}, and every file stays where it was. ${remakeDatabase(path)} Then run again: payouts makes the journal in it.`;
    }
    case 'unavailable': {
      const code = error.storeCode === undefined ? '' : `${error.storeCode}: `;
      if (store === 'postgres')
        return `the journal's database ${path} cannot be reached (${code}${what}): ${stopped}, and every file stays where it was. Check that the PostgreSQL server is running and reachable from this host, and that the journal setting (PAYOUTS_JOURNAL) names the right user, password and database, then run again.`;
      return `the journal ${path} cannot be used (${code}${what}): ${stopped}. Check that its folder exists, that the user running payouts may write to it and to its folder, and that its disk works, then run again.`;
    }
  }
}

/**
 * What a person reads of the journal's own word, from its kind and facts: a newer schema,
 * a refusal; undefined for anything else (a store's failure: explainJournalFailure).
 */
export function saidOfJournalError(error: unknown): Said | undefined {
  if (!(error instanceof JournalError)) return undefined;
  const { kind, schema, path } = error;
  if (kind === 'newer-schema' && schema !== undefined && path !== undefined)
    return { code: 'journalNewerSchema', path, schema: schema.found, latest: schema.latest };
  if (kind !== 'refused' && kind !== 'newer-schema') return undefined;
  return error.refusal ?? { code: 'journalRefused', detail: error.message };
}

/** Any JournalError as an operator's log or check reads it, in English; undefined for anything else. */
export function journalErrorInEnglish(
  error: unknown,
  sent: 'nothing' | 'maybe',
): string | undefined {
  const said = saidOfJournalError(error);
  return (
    explainJournalFailure(error, sent) ?? (said === undefined ? undefined : sayInEnglish(said))
  );
}
