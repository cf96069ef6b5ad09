/**
 * What the person reads when a command fails below the command itself: a journal from a
 * newer payouts, a damaged journal and a damaged postback secret each reach stderr as one
 * sentence naming the file, with exit 1, never `unexpected error`, and nothing is sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';

const PAYROLL =
  'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n' +
  'e-1,Ana,a@example.com,11987654321,52998224725,EMAIL,a@example.com,"10,00"\n';

/** The commands that open the journal to work, each as a person would type it. */
const WORKING = [
  ['run'],
  ['status'],
  ['approve', 'pay.csv', '--by', 'Maria'],
  ['retry', 'pay.csv'],
];

describe('failures below a command reach the person as a sentence', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN });
    ({ home, env } = sandboxHome(folder(), sandbox.url));
  });
  afterEach(() => sandbox.close());

  it('a journal written by a newer payouts (once `unexpected error`): its path and what to do, exit 1', async () => {
    const first = await runCli(['run'], { env });
    expect(first.code, first.stderr).toBe(0);
    const path = join(home, 'journal.db');
    const db = new Database(path);
    db.pragma('user_version = 999');
    db.close();
    writeFileSync(join(home, 'inbox', 'pay.csv'), PAYROLL);
    for (const args of WORKING) {
      const result = await runCli(args, { env });
      expect([result.code, result.stderr], args.join(' ')).toEqual([
        1,
        `payouts: the journal ${path} is at schema version 999, newer than this program knows (${MIGRATIONS.at(-1)?.version}): use a newer payouts (payouts --version says which this is). Nothing was sent\n`,
      ]);
    }
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('a damaged journal ("file is not a database"): its path and what to do, exit 1', async () => {
    const path = join(home, 'journal.db');
    writeFileSync(path, 'this is not a database, '.repeat(50));
    writeFileSync(join(home, 'inbox', 'pay.csv'), PAYROLL);
    for (const args of WORKING) {
      const result = await runCli(args, { env });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).not.toContain('unexpected error');
      expect(result.stderr).toMatch(
        new RegExp(
          `^payouts( \\w+)?: the journal ${path} is damaged \\(file is not a database\\): nothing was sent\\. Do not delete it`,
        ),
      );
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('payouts doctor on a damaged journal: a failed journal check naming it, the other checks still made', async () => {
    const path = join(home, 'journal.db');
    writeFileSync(path, 'this is not a database, '.repeat(50));
    const result = await runCli(['doctor'], { env });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^FAIL  journal: the journal ${path} is damaged \\(file is not a database\\): nothing was sent\\. Do not delete it`,
        'm',
      ),
    );
    expect(result.stdout).toMatch(/^ok {4}gateway:/m);
    // What it waited for, said before the balance read, then the verdict.
    expect(result.stderr).toMatch(
      /^payouts doctor: reading the balance at .*\npayouts doctor: 1 of \d+ checks failed; nothing was changed\n$/,
    );
  });

  it('a damaged postback secret (once `unexpected error`): its path and what to do, exit 1', async () => {
    const secret = join(home, 'postback.secret');
    writeFileSync(secret, 'not a secret\n');
    const result = await runCli(['watch'], {
      env: { ...env, PAYOUTS_POSTBACK_LISTEN: '127.0.0.1:0' },
    });
    expect([result.code, result.stderr]).toEqual([
      1,
      `payouts: ${secret} does not hold a postback secret: delete it and one is made again\n`,
    ]);
  });
});
