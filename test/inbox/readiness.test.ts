import { utimesSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settledByAge, settledFiles, settledOnOurClock } from '../../src/inbox/readiness.js';
import { useTempFolder } from '../support/files.js';

describe('when an inbox file may be taken', () => {
  const folder = useTempFolder();

  it('the daemon waits until a file has not changed for the settle time', () => {
    let clock = 0;
    const ready = settledFiles(2_000, () => clock);
    const path = join(folder(), 'pay.csv');
    writeFileSync(path, 'a\n');
    expect(ready(path)).toBe(false); // first seen
    clock += 1_999;
    expect(ready(path)).toBe(false);
    appendFileSync(path, 'b\n'); // still being written: the wait starts again
    clock += 1;
    expect(ready(path)).toBe(false);
    clock += 1_999;
    expect(ready(path)).toBe(false);
    clock += 1;
    expect(ready(path)).toBe(true);
    expect(ready(join(folder(), 'gone.csv'))).toBe(false);
  });

  it('a .done beside a file says it is complete at once', () => {
    const path = join(folder(), 'pay.csv');
    writeFileSync(path, 'a\n');
    writeFileSync(`${path}.done`, '');
    expect(settledFiles(60_000, () => 0)(path)).toBe(true);
    expect(settledByAge(60_000, Date.now)(path)).toBe(true);
  });

  it('a single look (payouts run) takes a file last changed at least the settle time ago', () => {
    const path = join(folder(), 'pay.csv');
    writeFileSync(path, 'a\n');
    const ready = settledByAge(2_000, Date.now);
    expect(ready(path)).toBe(false);
    const earlier = new Date(Date.now() - 2_000);
    utimesSync(path, earlier, earlier);
    expect(ready(path)).toBe(true);
  });

  it('payouts run looks twice, on our clock: a file whose time is ahead of ours (a share) is taken once unchanged', async () => {
    const ahead = join(folder(), 'ahead.csv');
    const growing = join(folder(), 'growing.csv');
    const done = join(folder(), 'done.csv');
    writeFileSync(ahead, 'a\n');
    const future = new Date(Date.now() + 60 * 60 * 1000);
    utimesSync(ahead, future, future);
    writeFileSync(growing, 'a\n');
    writeFileSync(done, 'a\n');
    writeFileSync(`${done}.done`, '');
    const waited: number[] = [];
    const ready = await settledOnOurClock([ahead, growing, done], 2_000, async (ms) => {
      waited.push(ms);
      appendFileSync(growing, 'b\n'); // still being written between the two looks
    });
    expect(ready(ahead)).toBe(true);
    expect(ready(growing)).toBe(false);
    expect(ready(done)).toBe(true);
    expect(ready(join(folder(), 'unseen.csv'))).toBe(false);
    // Once per run, the settle time.
    expect(waited).toEqual([2_000]);
  });

  it('payouts run does not wait when every file says it is complete, or there is none', async () => {
    const done = join(folder(), 'done.csv');
    writeFileSync(done, 'a\n');
    writeFileSync(`${done}.done`, '');
    const waited: number[] = [];
    const sleep = async (ms: number) => {
      waited.push(ms);
    };
    expect((await settledOnOurClock([done], 2_000, sleep))(done)).toBe(true);
    await settledOnOurClock([], 2_000, sleep);
    expect(waited).toEqual([]);
  });
});
