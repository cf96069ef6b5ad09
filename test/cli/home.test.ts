/** A mistyped home folder or inbox is said, never created empty and reported as "nothing to do". */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';

describe('a home folder or inbox that is not there', () => {
  const folder = useTempFolder();

  it.each([
    [['status'], 'status'],
    [['reconcile', '--days', '3'], 'reconcile'],
    [['approve', 'payroll.csv'], 'approve'],
    [['reject', 'payroll.csv', '--reason', 'wrong month'], 'reject'],
  ])('%j: exit 1, names the journal it looked for, creates nothing', async (args, verb) => {
    const home = join(folder(), 'typo');
    const result = await runCli(args, { env: { PAYOUTS_HOME: home, PAYOUTS_GATEWAY: 'sandbox' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `payouts ${verb}: no journal at ${join(home, 'journal.db')}: nothing has run in this home folder yet (is home, or PAYOUTS_HOME, right?)`,
    );
    expect(existsSync(home)).toBe(false);
  });

  it('reject needs a reason that says something', async () => {
    const result = await runCli(['reject', 'payroll.csv', '--reason', '  ']);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('Say why the file is turned down.');
  });

  it.each([['run'], ['watch']])(
    '%s --inbox that is not a folder: exit 1, nothing created',
    async (verb) => {
      const home = join(folder(), 'home');
      const inbox = join(folder(), 'no-such-inbox');
      const result = await runCli([verb, '--inbox', inbox, '--sandbox'], {
        env: { PAYOUTS_HOME: home },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `payouts ${verb}: --inbox ${inbox} is not a folder: check the path`,
      );
      expect(existsSync(inbox)).toBe(false);
      expect(existsSync(home)).toBe(false);
    },
  );
});
