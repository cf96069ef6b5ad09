/**
 * The home's folders and who may use them: owner-only by default; with `sharedGroup`,
 * accounting drops files and reads results while the journal stays private.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { ensureFolders, homeFolders, SHARED_MODES } from '../../src/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { useTempFolder } from '../support/files.js';

const modeOf = (path: string) => statSync(path).mode & 0o7777;
/** The name of this process's own group: a group it may give its folders to. */
const ownGroup = () => execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();

describe('the home folders', () => {
  const folder = useTempFolder();

  it('are owner-only without a shared group', () => {
    const folders = homeFolders(join(folder(), 'home'));
    ensureFolders(folders);
    for (const name of Object.keys(SHARED_MODES) as (keyof typeof SHARED_MODES)[])
      expect(modeOf(folders[name]).toString(8), name).toBe('700');
  });

  it('without a shared group, a folder made before the first run is made owner-only too; the home is left as made', () => {
    const folders = homeFolders(join(folder(), 'home'));
    mkdirSync(folders.inbox, { recursive: true });
    chmodSync(folders.home, 0o755);
    chmodSync(folders.inbox, 0o755);
    mkdirSync(folders.results, { mode: 0o2770 });
    chmodSync(folders.results, 0o2770);
    ensureFolders(folders);
    expect(modeOf(folders.inbox).toString(8)).toBe('700');
    expect(modeOf(folders.results).toString(8)).toBe('700');
    expect(modeOf(folders.home).toString(8)).toBe('755');
  });

  it.each([['by name'], ['by number']])(
    'with a shared group (%s) each folder has the group and its mode; the journal stays owner-only',
    async (how) => {
      const folders = homeFolders(join(folder(), 'home'));
      const gid = process.getgid?.() as number;
      const group = how === 'by name' ? ownGroup() : String(gid);
      // A home made before the setting, with a folder someone opened up by hand.
      ensureFolders(folders);
      chmodSync(folders.results, 0o777);
      const journal = await openJournal(sqliteJournalAt(folders.journal));
      await journal.close();
      ensureFolders(folders, group);
      const expected = {
        home: '750',
        inbox: '2770',
        awaiting: '2770',
        approved: '2770',
        processing: '2750',
        archive: '2750',
        rejected: '2750',
        results: '2750',
      };
      for (const [name, mode] of Object.entries(expected)) {
        const path = folders[name as keyof typeof expected];
        expect(modeOf(path).toString(8), name).toBe(mode);
        expect(statSync(path).gid, name).toBe(gid);
      }
      expect(modeOf(folders.journal).toString(8)).toBe('600');
      // A file dropped by a member of the group is the group's, so results can be read.
      writeFileSync(join(folders.inbox, 'payroll.csv'), 'x');
      expect(statSync(join(folders.inbox, 'payroll.csv')).gid).toBe(gid);
    },
  );

  it('leaves an --inbox outside the home as the operator set it', () => {
    const inbox = join(folder(), 'share');
    mkdirSync(inbox, { mode: 0o755 });
    chmodSync(inbox, 0o755);
    const folders = homeFolders(join(folder(), 'home'), inbox);
    ensureFolders(folders, ownGroup());
    expect(modeOf(inbox).toString(8)).toBe('755');
    expect(modeOf(folders.results).toString(8)).toBe('2750');
  });

  it('refuses a group the machine does not have, saying how to make it', () => {
    const folders = homeFolders(join(folder(), 'home'));
    expect(() => ensureFolders(folders, 'no-such-group-x7')).toThrow(ConfigError);
    expect(() => ensureFolders(folders, 'no-such-group-x7')).toThrow(
      /sharedGroup "no-such-group-x7": there is no such group on this machine \(make it with groupadd no-such-group-x7/,
    );
  });
});
