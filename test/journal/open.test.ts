import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  journalAddress,
  journalState,
  openJournal,
  openJournalReadOnly,
  sqliteJournalAt,
} from '../../src/journal/open.js';
import pg from 'pg';
import { useTempFolder } from '../support/files.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';

describe('a SQLite journal opened by its location', () => {
  const folder = useTempFolder();

  it('is asked of its file: absent, then present once opened, and read only by the same factory', async () => {
    const location = sqliteJournalAt(join(folder(), 'journal.db'));
    expect(await journalState(location)).toBe('absent');
    const journal = await openJournal(location);
    const id = (await journal.identity())?.journalId;
    await journal.close();
    expect(await journalState(location)).toBe('present');
    const read = await openJournalReadOnly(location, Date.now);
    try {
      expect((await read.identity())?.journalId).toBe(id);
      expect((await read.describe()).kind).toBe('sqlite');
    } finally {
      await read.close();
    }
    expect(journalAddress(location)).toBe(location.path);
  });
});

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a PostgreSQL journal opened by its location${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();
    /** The test database's URL with a password in it (the test cluster trusts loopback). */
    const withPassword = async (name: string) =>
      Object.assign(new URL(await postgres.made(name)), { password: 's3cr3t-pw' }).href;

    it('is asked of its database: absent until a schema with an identity is there', async () => {
      const location = { kind: 'postgres' as const, url: await withPassword('state') };
      expect(await journalState(location)).toBe('absent');
      const journal = await openJournal(location);
      const id = (await journal.identity())?.journalId;
      const description = await journal.describe();
      await journal.close();
      expect(description.kind).toBe('postgres');
      expect(await journalState(location)).toBe('present');

      const read = await openJournalReadOnly(location, Date.now);
      try {
        expect((await read.identity())?.journalId).toBe(id);
        // Read only: a write is refused by the server, not made.
        await expect(read.bindGateway('sandbox')).rejects.toMatchObject({ name: 'JournalError' });
        expect(await read.gatewayKind()).toBeUndefined();
      } finally {
        await read.close();
      }
    });

    it('is named without its password: host, port and database', async () => {
      const url = await withPassword('named');
      const location = { kind: 'postgres' as const, url };
      const { hostname, port, pathname } = new URL(url);
      expect(journalAddress(location)).toBe(`postgres://postgres@${hostname}:${port}${pathname}`);
      const journal = await openJournal(location);
      try {
        expect((await journal.describe()).address).toBe(journalAddress(location));
        expect(journal.path).toBe(journalAddress(location));
      } finally {
        await journal.close();
      }
      expect(journalAddress({ kind: 'postgres', url: `${url}?password=other-pw` })).not.toMatch(
        /pw/,
      );
    });

    it('is empty when its schema holds no identity, as a failed restore leaves it', async () => {
      const location = { kind: 'postgres' as const, url: await postgres.made('emptied') };
      await (await openJournal(location)).close();
      const client = new pg.Client({ connectionString: location.url });
      await client.connect();
      await client.query('DELETE FROM identity');
      await client.end();
      expect(await journalState(location)).toBe('empty');
    });
  },
);
