import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MARKER_NAME, readHomeMarker, readMarker } from '../../src/journal/marker.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { openJournalForWork } from '../../src/journal/open-for-work.js';
import pg from 'pg';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest } from '../support/gateway.js';
import { postgresBinaries, postgresMissing, usePostgres } from '../support/postgres.js';
import type { Journal, JournalLocation } from '../../src/journal/journal.js';

describe('a journal opened for work', () => {
  const folder = useTempFolder();

  it('keeps its marker in the home folder, wherever the store is, and weighs it against what the store reports', async () => {
    const home = join(folder(), 'home');
    mkdirSync(home);
    const store = sqliteJournalAt(join(folder(), 'store', 'journal.db'));
    const options = { home, historyFolders: [], now: Date.now };
    const journal = await openJournalForWork(store, options);
    const journalId = (await journal.identity())?.journalId;
    const highWater = await journal.highWater();
    await journal.close();
    expect(readMarker(join(home, MARKER_NAME))).toEqual({ journalId, highWater });
    expect(existsSync(join(folder(), 'store', MARKER_NAME))).toBe(false);

    // Another journal in the store's place: told by the identity the store reports.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${store.path}${suffix}`, { force: true });
    await (await openJournal(store)).close();
    await expect(openJournalForWork(store, options)).rejects.toMatchObject({ kind: 'replaced' });
    // And the store gone: missing, by the home's marker.
    rmSync(store.path);
    await expect(openJournalForWork(store, options)).rejects.toMatchObject({ kind: 'missing' });
  });
});

/** Rows claimed to send: the marker must say so before a request may leave. */
async function claimOne(journal: Journal, orderId: string): Promise<void> {
  const batchId = await recordOpenBatch(journal, `${orderId}.csv`, 1);
  await journal.admitPayouts(batchId, [{ line: 2, request: cashOutRequest(orderId) }], {
    duplicateWindowMs: 0,
  });
  expect(await journal.claimToSend('me', 1, 60_000)).toHaveLength(1);
  await journal.sendable();
}

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `a journal on PostgreSQL opened for work${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const folder = useTempFolder();
    const postgres = usePostgres();

    it('has the marker follow every sending commit, so a database restored from before them is older', async () => {
      const home = join(folder(), 'home');
      mkdirSync(home);
      const location: JournalLocation = { kind: 'postgres', url: await postgres.made('work') };
      const options = { home, historyFolders: [], now: Date.now };
      const journal = await openJournalForWork(location, options);
      await claimOne(journal, 'p-1');
      await journal.close();
      // A backup of the database taken here, before the next send.
      const admin = new pg.Client({ connectionString: await postgres.made('admin') });
      await admin.connect();
      try {
        await admin.query(
          `CREATE DATABASE ${new URL(postgres.url('backup')).pathname.slice(1)} TEMPLATE ${new URL(location.url).pathname.slice(1)}`,
        );
      } finally {
        await admin.end();
      }
      const again = await openJournalForWork(location, options);
      await claimOne(again, 'p-2');
      expect(readMarker(join(home, MARKER_NAME))?.highWater).toBe(await again.highWater());
      await again.close();
      // The backup put in its place forgets p-2 was sent: told by the marker, never sent blind.
      await expect(
        openJournalForWork({ kind: 'postgres', url: postgres.url('backup') }, options),
      ).rejects.toMatchObject({ kind: 'older' });
    });

    it('keeps the highest of what two hosts sent, whatever order they wrote it in, so a database restored between their sends is older', async () => {
      const home = join(folder(), 'home');
      mkdirSync(home);
      const url = await postgres.made('hosts');
      const location: JournalLocation = { kind: 'postgres', url };
      const as = (host: string) => ({ home, historyFolders: [], now: Date.now, host });
      const first = await openJournalForWork(location, as('pay-1'));
      const second = await openJournalForWork(location, as('pay-2'));
      // pay-1 sends twice, then pay-2 once: pay-2's word on the marker comes last.
      await claimOne(first, 'p-1');
      await claimOne(first, 'p-2');
      // A backup of the database taken here, after pay-1's sends, before pay-2's.
      const dump = join(folder(), 'hosts.dump');
      tool('pg_dump', ['--format=custom', '--file', dump, '--dbname', url]);
      await claimOne(second, 'p-3');
      const highest = await second.highWater();
      await first.close();
      await second.close();
      // Each host's marker its own; together they say the highest sent.
      expect(readdirSync(home).sort()).toEqual(['journal@pay-1.marker', 'journal@pay-2.marker']);
      expect(readHomeMarker(home)?.highWater).toBe(highest);
      const backup = await postgres.made('restored');
      tool('pg_restore', ['--no-owner', '--dbname', backup, dump]);
      // The backup put in its place forgets p-3 was sent: told by the markers, never sent blind.
      await expect(
        openJournalForWork({ kind: 'postgres', url: backup }, as('pay-1')),
      ).rejects.toMatchObject({ kind: 'older' });
      // Recovered from one host, the backup is the journal of every host from then on.
      await (
        await openJournalForWork(
          { kind: 'postgres', url: backup },
          { ...as('pay-2'), recover: true },
        )
      ).close();
      expect(readdirSync(home)).toEqual(['journal@pay-2.marker']);
      await (await openJournalForWork({ kind: 'postgres', url: backup }, as('pay-1'))).close();
    });
  },
);

/** A PostgreSQL client program of the machine's cluster (pg_dump, pg_restore). */
function tool(name: string, args: readonly string[]): void {
  const bin = postgresBinaries();
  execFileSync(bin ? join(bin, name) : name, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
