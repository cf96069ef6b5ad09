import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';

/**
 * Rows of R$ 1,00, each to a person of its own (a CPF per row): one person and amount in
 * two files would be held as a possible duplicate, which is not what these tests are about.
 */
interface Plan {
  dryRun: true;
  files: { file: string; wouldSend: number; wouldSendCents: number; problems: string[] }[];
}

describe('run --dry-run says what a run would really send now', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    // R$ 3,00: less than the five rows of R$ 1,00 the tests journal.
    sandbox = await startSandbox({
      token: TOKEN,
      settleDelayMs: 3_600_000,
      initialBalanceCents: 300,
    });
    ({ home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
    }));
  });
  afterEach(() => sandbox.close());

  it('rows journaled but never sent (a refused token) are counted and weighed against the balance, with new files', async () => {
    writeFileSync(join(home, 'inbox', 'a.csv'), payrollFile('a', 5));
    sandbox.setToken('a-token-we-do-not-have');
    const refused = await runCli(['run'], { env });
    expect(refused.code, refused.stderr).toBe(1);
    expect(sandbox.ledger()).toHaveLength(0);
    sandbox.setToken(TOKEN);

    const dry = await runCli(['run', '--dry-run', '--json'], { env });
    expect(dry.code, dry.stderr).toBe(2);
    const plan = JSON.parse(dry.stdout) as Plan;
    const sum = plan.files.reduce((cents, file) => cents + file.wouldSendCents, 0);
    expect(plan.files.reduce((rows, file) => rows + file.wouldSend, 0)).toBe(5);
    expect(sum).toBe(500);
    expect(plan.files.flatMap((file) => file.problems).join('\n')).toContain(
      'the balance leaves R$ 3,00',
    );

    writeFileSync(join(home, 'inbox', 'b.csv'), payrollFile('b', 2));
    const both = JSON.parse(
      (
        await runCli(['run', '--dry-run', '--json'], {
          env: { ...env, PAYOUTS_BALANCE_CHECK: 'off' },
        })
      ).stdout,
    ) as Plan;
    expect(both.files.map((file) => [file.file, file.wouldSend, file.wouldSendCents])).toEqual([
      ['a.csv', 5, 500],
      ['b.csv', 2, 200],
    ]);
    expect(sandbox.ledger()).toHaveLength(0);
  });
});
