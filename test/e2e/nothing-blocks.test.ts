/**
 * No file can block the others (issue 18, section 2): an unreadable file is rejected with
 * its reason while the others are paid; a home, journal or port problem is a sentence,
 * not `unexpected error`; a gateway that cannot be reached for the balance is an outage,
 * not an underfunded batch; the balance check counts a fee per payout.
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN, ledgerCounts, startLoopbackServer } from '../support/gateway.js';
import { IS_ROOT, NOBODY, nobodyReachesCheckout } from '../support/nobody.js';

const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount';
const payroll = (prefix: string, amounts: readonly string[]) =>
  [
    HEADER,
    ...amounts.map(
      (amount, index) =>
        `${prefix}-${index + 1},Ana,a@example.com,11987654321,52998224725,EMAIL,a${index}@example.com,"${amount}"`,
    ),
  ].join('\n') + '\n';

function chownTree(path: string): void {
  chownSync(path, NOBODY.uid, NOBODY.gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) chownTree(child);
    else chownSync(child, NOBODY.uid, NOBODY.gid);
  }
}

describe('nothing blocks the other files', { timeout: 60_000 }, () => {
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

  // As root in a checkout `nobody` cannot reach, no file can be made unreadable to the run.
  // Root reads every file whatever its mode, so as root the run is made by `nobody`, as a
  // service user would be, over a home it owns: the unreadable file is really unreadable.
  it.skipIf(IS_ROOT && !nobodyReachesCheckout())(
    'an unreadable file in the inbox and one in processing/ go to rejected/ with why; the good file is paid',
    async () => {
      const user = IS_ROOT ? { user: NOBODY } : {};
      // A home that has worked before: its journal knows processing/.
      writeFileSync(join(home, 'inbox', 'c-good.csv'), payroll('c', ['12,00', '13,00']));
      if (IS_ROOT) chownTree(folder());
      const first = await runCli(['run'], { env, ...user });
      expect(first.code, first.stderr).toBe(3);
      writeFileSync(join(home, 'inbox', 'a-locked.csv'), payroll('a', ['10,00']));
      writeFileSync(join(home, 'processing', 'b-locked.csv'), payroll('b', ['11,00']));
      writeFileSync(join(home, 'inbox', 'd-good.csv'), payroll('d', ['14,00']));
      if (IS_ROOT) chownTree(folder());
      chmodSync(join(home, 'inbox', 'a-locked.csv'), 0);
      chmodSync(join(home, 'processing', 'b-locked.csv'), 0);

      const run = await runCli(['run', '--json'], { env, ...user });
      expect(run.stderr).not.toContain('unexpected error');
      expect(run.code, run.stderr).toBe(2); // the unreadable files need a person
      expect([...ledgerCounts(sandbox).keys()].sort()).toEqual(['c-1', 'c-2', 'd-1']);
      const rejected = readdirSync(join(home, 'rejected')).sort();
      expect(rejected).toEqual([
        'a-locked.csv',
        'a-locked.csv.reason.txt',
        'b-locked.csv',
        'b-locked.csv.reason.txt',
      ]);
      const reason = readFileSync(join(home, 'rejected', 'a-locked.csv.reason.txt'), 'utf8');
      expect(reason).toMatch(/cannot be read \(EACCES\)/);
      const files = (JSON.parse(run.stdout) as { files: { file: string; outcome: string }[] })
        .files;
      expect(files.find((file) => file.file === 'a-locked.csv')?.outcome).toContain(
        'moved to rejected/',
      );

      // The next run has nothing left to trip on.
      const again = await runCli(['run'], { env, ...user });
      expect(again.stderr).not.toContain('unexpected error');
      expect(again.code).toBe(3); // c's payouts still pending
    },
  );

  // A file dropped with umask 077 by another user: the service user cannot read it.
  it.skipIf(IS_ROOT && !nobodyReachesCheckout())(
    'run --dry-run names an unreadable file and goes on with the others; the run rejects it with why in the home language',
    async () => {
      const user = IS_ROOT ? { user: NOBODY } : {};
      writeFileSync(join(home, 'inbox', 'a-locked.csv'), payroll('a', ['10,00']));
      writeFileSync(join(home, 'inbox', 'b-good.csv'), payroll('b', ['11,00', '12,00']));
      if (IS_ROOT) chownTree(folder());
      chmodSync(join(home, 'inbox', 'a-locked.csv'), 0);

      const dry = await runCli(['run', '--dry-run'], { env, ...user });
      expect(dry.stderr).not.toContain('unexpected error');
      expect(dry.code, dry.stderr).toBe(2); // the unreadable file needs a person
      expect(dry.stdout).toContain('b-good.csv: would send 2 (R$ 23,00)');
      expect(dry.stdout).toMatch(
        /a-locked\.csv: would send 0 \(R\$ 0,00\).*\n {2}cannot be read \(EACCES\): the user running payouts may not read it/,
      );
      expect(sandbox.ledger()).toHaveLength(0);

      const run = await runCli(['run'], { env: { ...env, PAYOUTS_LANGUAGE: 'pt-BR' }, ...user });
      expect(run.code, run.stderr).toBe(2);
      const reason = readFileSync(join(home, 'rejected', 'a-locked.csv.reason.txt'), 'utf8');
      expect(reason).toContain('não pode ser lido (EACCES)');
      expect(run.stdout).toContain('não pode ser lido (EACCES)');
    },
  );

  it('a home folder that is a file: a sentence naming it, exit 1', async () => {
    const file = join(folder(), 'not-a-folder');
    writeFileSync(file, 'x');
    const result = await runCli(['run'], { env: { ...env, PAYOUTS_HOME: file } });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('unexpected error');
    expect(result.stderr).toContain(`${file} is a file, not a folder`);
  });

  it('a damaged journal: a sentence naming it and what to do, exit 1, nothing sent', async () => {
    writeFileSync(join(home, 'journal.db'), 'this is not a database, '.repeat(50));
    writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('d', ['10,00']));
    for (const args of [['run'], ['status']]) {
      const result = await runCli(args, { env });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('unexpected error');
      expect(result.stderr).toContain(`the journal ${join(home, 'journal.db')} is damaged`);
    }
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('payouts sandbox on a port already in use: a sentence naming the port, exit 1', async () => {
    const taken = await startLoopbackServer((_req, res) => res.end());
    try {
      const port = String(new URL(taken.url).port);
      const result = await runCli(['sandbox', '--port', port], { env: {} });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('unexpected error');
      expect(result.stderr).toContain(
        `payouts sandbox: port ${port} on 127.0.0.1 is already in use by another program`,
      );
    } finally {
      await taken.close();
    }
  });

  it('a gateway that cannot be reached for the balance is an outage: nothing sent, run again later (exit 3), not underfunded', async () => {
    writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('e', ['10,00', '11,00']));
    sandbox.setFaults({ serverErrorRate: 1, operations: ['getBalance'] });
    const run = await runCli(['run', '--json'], { env });
    expect(run.code, run.stderr).toBe(3);
    const report = JSON.parse(run.stdout) as {
      stopped: string;
      files: { outcome: string; rows: object; problems: string[] }[];
    };
    expect(report.stopped).toMatch(
      /^the gateway could not be reached to read the balance \(.*\): nothing was sent; run again later$/,
    );
    expect(report.files[0]?.rows).toEqual({ queued: 2 });
    expect(JSON.stringify(report)).not.toMatch(/underfunded|does not cover|held/);
    expect(sandbox.ledger()).toHaveLength(0);
    const status = await runCli(['status'], { env });
    expect(status.stdout).not.toContain('underfunded');

    sandbox.setFaults({ serverErrorRate: 0 });
    expect((await runCli(['run'], { env })).code).toBe(3); // sent, pending
    expect(sandbox.ledger()).toHaveLength(2);
  });
});

describe('the balance check counts a fee per payout', { timeout: 60_000 }, () => {
  const folder = useTempFolder();

  it('a batch funded to the cent for its values but not its fees is held, not failed at its tail', async () => {
    // R$ 30,00 in two payouts; the gateway debits R$ 1,00 more for each.
    const sandbox = await startSandbox({
      token: TOKEN,
      settleDelayMs: 3_600_000,
      initialBalanceCents: 3_000,
      feeDebitCents: 100,
    });
    try {
      const { home, env } = sandboxHome(folder(), sandbox.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
        PAYOUTS_FEE_PER_PAYOUT_CENTS: '100',
      });
      writeFileSync(join(home, 'inbox', 'pay.csv'), payroll('f', ['10,00', '20,00']));
      const run = await runCli(['run', '--json'], { env });
      expect(run.code, run.stderr).toBe(2);
      const file = (
        JSON.parse(run.stdout) as {
          files: { outcome: string; rows: object; problems: string[] }[];
        }
      ).files[0];
      expect(file).toMatchObject({
        outcome: 'held: the balance does not cover it',
        rows: { held: 2 },
      });
      expect(file?.problems.join('\n')).toContain(
        "the balance leaves R$ 30,00 for this batch's R$ 32,00 (R$ 30,00 in 2 payouts and R$ 2,00 in fees at R$ 1,00 each, feePerPayoutCents)",
      );
      expect(sandbox.ledger()).toHaveLength(0);
    } finally {
      await sandbox.close();
    }
  });
});
