import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempFolder } from '../support/files.js';
import { useTranspiledSrc } from '../support/transpiled.js';

// Our modules in a process of their own, as `payouts` loads them.
const moduleUrl = useTranspiledSrc();

// Many databases and statements, some never closed: the garbage collector frees them
// while the process ends by itself. With better-sqlite3 12, Node 24 aborted here in
// about four runs of five (exit 134, `Assertion failed: (env) != nullptr`).
const leaveToTheCollector = () => `
  const { Database } = await import(${JSON.stringify(moduleUrl('journal/sqlite.js'))});
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
      ['--input-type=module', '--eval', leaveToTheCollector()],
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

// Two processes opening one new journal at once (two daemons started together): before
// the switch to WAL was retried, about one pair in ten failed with SQLITE_BUSY.
const openJournalScript = () => `
  const { openJournal, sqliteJournalAt } = await import(${JSON.stringify(moduleUrl('journal/open.js'))});
  await (await openJournal(sqliteJournalAt(process.argv[1]))).close();
`;

describe('a new journal opened by two processes at once', () => {
  const folder = useTempFolder();

  it('opens in both, every time', async () => {
    const open = (path: string) =>
      new Promise<string>((resolve) =>
        execFile(
          process.execPath,
          ['--input-type=module', '--eval', openJournalScript(), path],
          { timeout: 20_000, encoding: 'utf8' },
          (error, _stdout, stderr) => resolve(error ? `exit ${String(error.code)}: ${stderr}` : ''),
        ),
      );
    const failures: string[] = [];
    for (let pair = 0; pair < 30; pair++) {
      const path = join(folder(), `pair-${pair}`, 'journal.db');
      failures.push(...(await Promise.all([open(path), open(path)])).filter(Boolean));
    }
    expect(failures).toEqual([]);
    // Sixty processes, two at a time: about 10 s alone, 18-30 s beside the suite's other
    // files on two cores, where the default 30 s ended it once.
  }, 90_000);
});
