import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';

interface Report {
  files: { file: string; state: string; outcome: string; problems: string[] }[];
}

describe('nothing in the inbox is dropped silently', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    ({ home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
    }));
  });
  afterEach(() => sandbox.close());

  const HIDDEN = ['.csv', '..csv', '..\\..\\evil.csv'];

  it('hidden and temporary files are named with why, on every run, in the summary and in status', async () => {
    const inbox = join(home, 'inbox');
    for (const [i, name] of HIDDEN.entries())
      writeFileSync(join(inbox, name), payrollFile(`h${i}`, 6));
    writeFileSync(join(inbox, 'pay.csv.part'), payrollFile('p', 2));
    writeFileSync(join(inbox, '~$pay.csv'), 'owner');
    writeFileSync(join(inbox, 'good.csv'), payrollFile('g', 2));

    for (let run = 0; run < 2; run++) {
      const result = await runCli(['run', '--json'], { env });
      // Hidden files with payouts in them need a person: their rows are not paid.
      expect(result.code, result.stderr).toBe(2);
      const report = JSON.parse(result.stdout) as Report;
      const outcome = (file: string) => report.files.find((entry) => entry.file === file);
      for (const name of HIDDEN) {
        expect(outcome(name)?.outcome, name).toMatch(/skipped: a hidden file/);
        expect(outcome(name)?.state, name).toBe('skipped');
        expect(outcome(name)?.problems.join(' ')).toMatch(/rename it/);
      }
      expect(outcome('pay.csv.part')?.outcome).toMatch(/skipped: a temporary file/);
      expect(outcome('~$pay.csv')?.outcome).toMatch(/skipped: a lock file/);
    }
    expect(sandbox.ledger()).toHaveLength(2); // good.csv only
    expect(readdirSync(inbox).sort()).toEqual([...HIDDEN, 'pay.csv.part', '~$pay.csv'].sort());

    const text = await runCli(['run'], { env });
    expect(text.stdout).toContain('..csv: skipped: a hidden file');
    expect(text.stdout).not.toContain('The inbox is empty');

    const status = await runCli(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    for (const name of [...HIDDEN, 'pay.csv.part', '~$pay.csv'])
      expect(status.stdout).toContain(name);
    expect(status.stdout).toContain('skipped');
  });

  it('an inbox holding only a hidden payout file is not "empty"', async () => {
    writeFileSync(join(home, 'inbox', '..csv'), payrollFile('x', 6));
    const result = await runCli(['run'], { env });
    expect(result.code).toBe(2);
    expect(result.stdout).not.toContain('The inbox is empty');
    expect(result.stdout).toContain('..csv: skipped: a hidden file');
  });

  it('a folder, a pipe or a link to nothing named like a payout file is named with why, for a person', async () => {
    const inbox = join(home, 'inbox');
    mkdirSync(join(inbox, 'pasta.csv'));
    symlinkSync(join(folder(), 'gone.csv'), join(inbox, 'link.csv'));
    writeFileSync(join(inbox, 'good.csv'), payrollFile('g', 2));
    const result = await runCli(['run', '--json'], { env });
    expect(result.code, result.stderr).toBe(2);
    const report = JSON.parse(result.stdout) as Report;
    for (const name of ['pasta.csv', 'link.csv']) {
      expect(report.files.find((entry) => entry.file === name)?.outcome, name).toMatch(
        /not read: not a regular file/,
      );
    }
    expect(sandbox.ledger()).toHaveLength(2); // good.csv is paid all the same
  });
});
