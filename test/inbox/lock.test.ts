import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Journal } from '../../src/journal/journal.js';
import { openSqliteJournal } from '../../src/journal/sqlite/open.js';
import { useTempFolder } from '../support/files.js';

describe('the home folder lock in the journal', () => {
  const folder = useTempFolder();
  let journal: Journal;
  let clock = 1_000_000;
  afterEach(async () => await journal.close());
  const open = () =>
    (journal = openSqliteJournal(join(folder(), 'journal.db'), { now: () => clock }));
  const running = () => true;
  const gone = () => false;
  const a = { holder: 'a', host: 'h1', pid: 1, command: 'run' };
  const b = { holder: 'b', host: 'h1', pid: 2, command: 'run' };

  it('is held by one holder at a time, and says who holds it', async () => {
    open();
    expect(await journal.takeLock('home', a, 30_000, running)).toEqual({ taken: true });
    expect(await journal.takeLock('home', b, 30_000, running)).toMatchObject({
      taken: false,
      heldBy: { holder: 'a', pid: 1, host: 'h1', command: 'run' },
    });
    await journal.releaseLock('home', 'a');
    expect(await journal.takeLock('home', b, 30_000, running)).toEqual({ taken: true });
  });

  it('is taken over when its holder is silent past the stale time, and the holder learns it lost it', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    clock += 29_999;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(false);
    clock += 1;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(true);
    expect(await journal.renewLock('home', 'a')).toBe(false); // a stalled holder wakes: not its lock
    expect(await journal.renewLock('home', 'b')).toBe(true);
  });

  it('is taken over at once when its holder on this host is no longer running', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    expect((await journal.takeLock('home', b, 30_000, gone)).taken).toBe(true);
    // A holder on another host is never judged by a pid of ours.
    clock += 30_000;
    expect(
      (
        await journal.takeLock(
          'home',
          { holder: 'c', host: 'h2', pid: 3, command: 'run' },
          30_000,
          gone,
        )
      ).taken,
    ).toBe(true);
    expect((await journal.takeLock('home', a, 30_000, gone)).taken).toBe(false);
  });

  it('a renewed lock stays held', async () => {
    open();
    await journal.takeLock('home', a, 30_000, running);
    clock += 20_000;
    await journal.renewLock('home', 'a');
    clock += 20_000;
    expect((await journal.takeLock('home', b, 30_000, running)).taken).toBe(false);
  });
});
