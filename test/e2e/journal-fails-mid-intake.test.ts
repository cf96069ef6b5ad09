/**
 * A journal that fails while a file is taken in never sets the file aside: it stays for
 * the next run, which takes it in again and pays each of its rows once.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serve } from '../../src/app/serve.js';
import { loadConfig } from '../../src/config/load.js';
import { ensureFolders, homeFolders } from '../../src/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { createLogger } from '../../src/runtime/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli, type CliResult } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, clientFor, ledgerCounts } from '../support/gateway.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';
import { IS_ROOT } from '../support/nobody.js';
import { payrollFile } from '../support/payroll.js';

/** Two chunks of the journal's admission, the second failing. */
const ROWS = 1_200;
/** More than the small disk below holds in the journal. */
const ROWS_PAST_THE_DISK = 3_000;

const SETTINGS = {
  PAYOUTS_INBOX_SETTLE: '1ms',
  PAYOUTS_FOLLOW_TIMEOUT: '20s',
  ...QUICK_TIMEOUTS,
};

/** Where each payout file of the home is, by folder. */
function whereFiles(home: string): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const folder of ['inbox', 'processing', 'rejected', 'archive']) {
    const files = readdirSync(join(home, folder)).filter((name) => name.endsWith('.csv'));
    if (files.length > 0) found[folder] = files;
  }
  return found;
}

/** The run the journal failed under: exit 1, one line, the file left for the next run, nothing sent. */
function expectLeftForNextRun(failed: CliResult, home: string, sandbox: Sandbox): void {
  expect(failed.code, failed.stderr + failed.stdout).toBe(1);
  expect(failed.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(failed.stderr).toContain(join(home, 'journal.db'));
  expect(whereFiles(home)).not.toHaveProperty('rejected');
  expect(Object.values(whereFiles(home)).flat()).toEqual(['folha.csv']);
  expect(sandbox.ledger()).toHaveLength(0);
}

/**
 * The next run takes the file in again: each row paid once, the file archived (on a busy
 * machine, payouts still pending when a run stops following are followed by the next).
 */
async function expectPaidOnceNextRun(
  rows: number,
  env: Record<string, string>,
  home: string,
  sandbox: Sandbox,
) {
  let next = await runCli(['run'], { env });
  for (let rerun = 0; next.code === 3 && rerun < 5; rerun++) next = await runCli(['run'], { env });
  expect(next.code, next.stderr + next.stdout).toBe(0);
  expect(sandbox.ledger()).toHaveLength(rows);
  expect([...ledgerCounts(sandbox).values()].filter((n) => n !== 1)).toEqual([]);
  expect(whereFiles(home)).toEqual({ archive: [expect.stringMatching(/^folha\./)] });
}

describe('a journal that fails while a file is taken in', { timeout: 300_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
  });
  afterEach(() => sandbox.close());

  it('failing in a way SQLite has no code for (a store connection reset): the file stays, exit 1; the next run pays each row once', async () => {
    const { home, env } = sandboxHome(folder(), sandbox.url, SETTINGS);
    writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('f', ROWS));
    // A process of its own: the failpoint is armed by its environment as it starts.
    const failed = await new Promise<CliResult>((resolve) => {
      execFile(
        process.execPath,
        [BIN, 'run'],
        { env: cleanEnv({ ...env, PAYOUTS_FAILPOINT: 'admitting-chunk:2:throw' }) },
        (error, stdout, stderr) => resolve({ code: Number(error?.code ?? 0), stdout, stderr }),
      );
    });
    expectLeftForNextRun(failed, home, sandbox);
    expect(failed.stderr).toContain('cannot be used (failpoint admitting-chunk)');
    await expectPaidOnceNextRun(ROWS, env, home, sandbox);
  });
});

/**
 * Unmounted once nothing has a file there open: a command's reading closes its file
 * after the command has ended.
 */
async function unmount(folder: string): Promise<void> {
  for (const until = Date.now() + 10_000; ;) {
    try {
      execFileSync('umount', [folder], { stdio: 'pipe' });
      break;
    } catch (error) {
      if (Date.now() > until) throw error;
      await delay(50);
    }
  }
  rmdirSync(folder);
}

// Only root may mount a file system: elsewhere the full disk cannot be made for real.
describe.runIf(IS_ROOT)(
  'a journal whose disk fills while a file is taken in',
  { timeout: 300_000 },
  () => {
    let mounted: string | undefined;
    let sandbox: Sandbox;
    beforeEach(async () => {
      mounted = mkdtempSync(join(tmpdir(), 'payouts-full-'));
      // Room for the file and a new journal, not for the file's rows in the journal.
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mounted]);
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    });
    afterEach(async () => {
      await sandbox.close();
      if (mounted) await unmount(mounted);
      mounted = undefined;
    });

    it('leaves the file to be taken in again, exit 1 naming the journal and to free space; with room, each row is paid once', async () => {
      const disk = mounted ?? '';
      const { home, env } = sandboxHome(disk, sandbox.url, SETTINGS);
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('f', ROWS_PAST_THE_DISK));
      const full = await runCli(['run'], { env });
      expectLeftForNextRun(full, home, sandbox);
      expect(full.stderr).toContain(
        `the disk holding the journal ${join(home, 'journal.db')} is full`,
      );
      expect(full.stderr).toContain('Free space on that disk');
      execFileSync('mount', ['-o', 'remount,size=64m', disk]);
      await expectPaidOnceNextRun(ROWS_PAST_THE_DISK, env, home, sandbox);
    });

    it('watch logs the failed pass naming the journal and to free space, and leaves the file', async () => {
      const folders = homeFolders(join(mounted ?? '', 'home'));
      ensureFolders(folders);
      writeFileSync(join(folders.inbox, 'folha.csv'), payrollFile('f', ROWS_PAST_THE_DISK));
      const { config } = loadConfig({
        env: { PAYOUTS_HOME: folders.home, PAYOUTS_BASE_URL: sandbox.url, PAYOUTS_TOKEN: TOKEN },
      });
      const journal = await openJournal(sqliteJournalAt(folders.journal));
      const gateway = clientFor(sandbox.url);
      let log = '';
      const stop = new AbortController();
      const daemon = serve({
        config: { ...config, inboxSettle: 1, inboxRescan: 100 },
        folders,
        journal,
        gateway,
        logger: createLogger('info', {
          stderr: { write: (text) => (log += String(text)) },
          env: {},
        }),
        clock: systemClock,
        signal: stop.signal,
        hintFlags: '',
        setHealth: () => undefined,
      });
      try {
        for (let i = 0; i < 3000 && !log.includes('pass failed'); i++) await delay(10);
        expect(log).toContain(
          `pass failed: the disk holding the journal ${folders.journal} is full`,
        );
        expect(log).toContain('Free space on that disk');
      } finally {
        stop.abort();
        await daemon.catch(() => undefined);
        await gateway.close();
        await journal.close();
      }
      expect(whereFiles(folders.home)).toEqual({ processing: ['folha.csv'] });
      expect(sandbox.ledger()).toHaveLength(0);
    });
  },
);
