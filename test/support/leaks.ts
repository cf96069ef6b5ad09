/**
 * After every test file, nothing its tests opened is still open: no file of the temp
 * folder (a journal left open), no server listening, no socket, no child process running.
 * Against what was open before the file began, so what vitest holds is not counted; per
 * file, since a suite may share a sandbox between its tests. A socket closes a moment
 * after its close() resolves: looked at again until then, within a bound.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect } from 'vitest';

const WATCHED = new Set(['TCPServerWrap', 'TCPSocketWrap', 'ProcessWrap', 'PipeServerWrap']);
const SETTLE_BOUND_MS = 5_000;

function openNow(): { files: string[]; handles: string[] } {
  const files: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const path = readlinkSync(`/proc/self/fd/${fd}`);
      if (path.startsWith(tmpdir())) files.push(path);
    } catch {
      // closed while we looked (the listing's own descriptor)
    }
  }
  const handles = process.getActiveResourcesInfo().filter((kind) => WATCHED.has(kind));
  return { files: files.sort(), handles: handles.sort() };
}

let before = openNow();
beforeAll(() => {
  before = openNow();
});
afterAll(async () => {
  const until = Date.now() + SETTLE_BOUND_MS;
  let now = openNow();
  while (JSON.stringify(now) !== JSON.stringify(before) && Date.now() < until) {
    await delay(20);
    now = openNow();
  }
  expect(now, 'left open by the tests of this file').toEqual(before);
});
