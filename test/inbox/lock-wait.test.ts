import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockHome } from '../../src/inbox/lock.js';
import { type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import type { Clock } from '../../src/runtime/clock.js';
import { useTempFolder } from '../support/files.js';

describe('waiting for the home folder lock', () => {
  const folder = useTempFolder();
  let journal: Journal;
  afterEach(async () => await journal.close());

  it('waits on the clock it is given: a minute of waiting takes no real minute', async () => {
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    // Held by a running process of this host (this one, under another name): never stale.
    const holder = { holder: 'the other run', host: hostname(), pid: process.pid, command: 'run' };
    expect(await journal.takeLock('home', holder, 30_000, () => true)).toEqual({ taken: true });
    let now = 1_000_000;
    const slept: number[] = [];
    const clock: Clock = {
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
    };
    const waitedFor: string[] = [];
    const result = await lockHome(journal, {
      command: 'run',
      perHost: false,
      host: hostname(),
      waitMs: 60_000,
      signal: new AbortController().signal,
      clock,
      onWait: (heldBy) => waitedFor.push(heldBy.holder),
      onLost: () => undefined,
    });
    expect(result).toMatchObject({ heldBy: { holder: 'the other run' } });
    expect(waitedFor).toEqual(['the other run']);
    expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(60_000);
  });
});
