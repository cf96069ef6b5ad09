import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// The built module, as `payouts` loads it (the suite builds first).
const SQLITE = new URL('../../dist/journal/sqlite.js', import.meta.url).href;

// Many databases and statements, some never closed: the garbage collector frees them
// while the process ends by itself. With better-sqlite3 12, Node 24 aborted here in
// about four runs of five (exit 134, `Assertion failed: (env) != nullptr`).
const LEAVE_TO_THE_COLLECTOR = `
  const { Database } = await import(${JSON.stringify(SQLITE)});
  const open = [];
  for (let i = 0; i < 300; i++) {
    const db = new Database(':memory:');
    for (let j = 0; j < 50; j++) db.prepare('SELECT ' + j).get();
    if (i % 3 === 0) open.push(db);
    else if (i % 3 === 1) db.close();
  }
`;

function endOfProcess(): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '--eval', LEAVE_TO_THE_COLLECTOR],
      { timeout: 20_000, encoding: 'utf8' },
      (error, _stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          stderr,
        });
      },
    );
  });
}

describe('the SQLite binding', () => {
  it(`lets a process end by itself with statements left to the garbage collector (Node ${process.versions.node})`, async () => {
    for (let run = 0; run < 5; run++) {
      expect(await endOfProcess()).toEqual({ code: 0, signal: null, stderr: '' });
    }
  });
});
