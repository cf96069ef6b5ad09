/**
 * Where a journal is, as a person names it: a file's path, or a database's URL shown
 * without its credentials (a password in the URL or in its parameters is never printed).
 */
import type { JournalLocation } from './journal.js';

/** Whether `text` names a PostgreSQL database (the `journal` setting's one form). */
export function isPostgresUrl(text: string): boolean {
  if (!/^postgres(ql)?:\/\//.test(text)) return false;
  try {
    return new URL(text).pathname.length > 1;
  } catch {
    return false;
  }
}

/** The journal the `journal` setting names: none, the SQLite file of the home (`homeFile`). */
export function journalLocationOf(setting: string | null, homeFile: string): JournalLocation {
  return setting === null ? { kind: 'sqlite', path: homeFile } : { kind: 'postgres', url: setting };
}

/** Where the journal is, as a person finds it, before it is opened. */
export function journalAddress(location: JournalLocation): string {
  return location.kind === 'sqlite' ? location.path : postgresAddress(location.url);
}

/** The database a PostgreSQL URL (or its address) names, and the user it connects as, if named. */
export function postgresDatabase(url: string): { database: string; user: string | undefined } {
  const parsed = new URL(url);
  return {
    database: decodeURIComponent(parsed.pathname.slice(1)),
    user: userOf(parsed),
  };
}

/**
 * The server and database, nothing secret: `postgres://user@host:port/database`, or for a
 * socket folder (a host that is a path: percent-encoded, or the `host` parameter)
 * `postgres:///database?host=/folder&port=…&user=…`, as libpq reads it.
 */
export function postgresAddress(url: string): string {
  const parsed = new URL(url);
  const host = decodeURIComponent(parsed.hostname) || (parsed.searchParams.get('host') ?? '');
  const port = parsed.port || (parsed.searchParams.get('port') ?? '');
  const user = userOf(parsed);
  if (!host.startsWith('/')) {
    const at = user === undefined ? '' : `${encodeURIComponent(user)}@`;
    return `${parsed.protocol}//${at}${host}${port === '' ? '' : `:${port}`}${parsed.pathname}`;
  }
  const params = [
    `host=${host}`,
    ...(port === '' ? [] : [`port=${port}`]),
    ...(user === undefined ? [] : [`user=${encodeURIComponent(user)}`]),
  ];
  return `${parsed.protocol}//${parsed.pathname}?${params.join('&')}`;
}

function userOf(parsed: URL): string | undefined {
  const user = decodeURIComponent(parsed.username) || parsed.searchParams.get('user');
  return user === null || user === '' ? undefined : user;
}
