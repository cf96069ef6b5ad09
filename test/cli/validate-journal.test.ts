/**
 * `payouts validate FILE` weighs a file against the home's journal in either store, read
 * only: the same holds `run --dry-run` finds, on homes made by real runs against the
 * sandbox.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { journalAddress } from '../../src/journal/open.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { TOKEN, closedPort } from '../support/gateway.js';
import { JOURNAL_STORES } from '../support/journal-stores.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';

interface Checked {
  valid: number;
  held: number;
  journal: string | null;
  holds: { line: number; rule: string; message: string }[];
}

describe.each(JOURNAL_STORES)('payouts validate, the journal in %s', (_, store) => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: { home: string; env: Record<string, string> };
  beforeEach(async () => {
    // Payouts stay pending: what was sent is journaled, and nothing needs following.
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    home = store.home(folder(), sandbox.url, {
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_FOLLOW_TIMEOUT: '0',
    });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  const cli = (args: string[]) => runCli(args, { env: home.env });
  const auditCount = async () =>
    (await store.select<{ n: number }>(home.home, 'SELECT COUNT(*) AS n FROM audit'))[0]?.n;

  it('holds an orderId paid before, as run --dry-run does, and writes nothing', async () => {
    const paid = payrollRows('paid', 2);
    writeFile(join(home.home, 'inbox'), 'folha.csv', [PAYROLL_HEADER, ...paid].join('\n'));
    expect((await cli(['run'])).code).toBe(3);
    const lines = [PAYROLL_HEADER, paid[1]!, ...payrollRows('new', 1)].join('\n');
    const outside = writeFile(folder(), 'outro.csv', lines);
    const entries = await auditCount();

    const validated = await cli(['validate', outside, '--json']);
    expect(validated.code, validated.stderr).toBe(2);
    const checked = JSON.parse(validated.stdout) as Checked;
    expect([checked.valid, checked.held]).toEqual([2, 1]);
    expect(checked.holds.map((hold) => [hold.line, hold.rule])).toEqual([
      [2, 'orderId of another file'],
    ]);
    expect(checked.journal).toBe(journalAddress(store.location(home.home)));
    expect((await cli(['validate', outside])).stdout).toContain(
      'line 2 (orderId of another file): ',
    );

    // The same answer from a rehearsal of the run that would take it.
    writeFile(join(home.home, 'inbox'), 'outro.csv', lines);
    const dry = await cli(['run', '--dry-run', '--json']);
    const planned = (
      JSON.parse(dry.stdout) as { files: { file: string; held: number; holds: Checked['holds'] }[] }
    ).files.find((file) => file.file === 'outro.csv');
    expect(planned?.holds).toEqual(
      checked.holds.map(({ line, rule, message }) => ({
        line,
        rule,
        message,
        code: expect.any(String),
      })),
    );
    expect(await auditCount()).toBe(entries);
  });

  it('run --dry-run holds the rows the real run then holds: repeats, possible duplicates', async () => {
    const paid = payrollRows('paid', 3);
    writeFile(join(home.home, 'inbox'), 'folha.csv', [PAYROLL_HEADER, ...paid].join('\n'));
    expect((await cli(['run'])).code).toBe(3);
    // Line 2 repeats an orderId paid, lines 3 and 5 a person and amount paid under a new one.
    const again = (row: string, orderId: string) => row.replace(/^paid-\d+/, orderId);
    const lines = [
      PAYROLL_HEADER,
      paid[1]!,
      again(paid[0]!, 'dup-0'),
      ...payrollRows('new', 2),
      again(paid[2]!, 'dup-2'),
    ];
    writeFile(join(home.home, 'inbox'), 'outro.csv', lines.join('\n'));
    const dry = await cli(['run', '--dry-run', '--json']);
    const planned = (
      JSON.parse(dry.stdout) as {
        files: { file: string; wouldSend: number; holds: Checked['holds'] }[];
      }
    ).files.find((file) => file.file === 'outro.csv');
    expect(planned?.holds.map((hold) => [hold.line, hold.rule])).toEqual([
      [2, 'orderId of another file'],
      [3, 'possible duplicate'],
      [6, 'possible duplicate'],
    ]);
    expect(planned?.wouldSend).toBe(2);

    expect((await cli(['run'])).code).toBe(2);
    const real = await store.read(home.home, async (journal) => {
      const [batch] = await journal.batches('outro.csv');
      const held = await journal.linesOfBatch(batch!.id, ['held'], 100);
      const rows = await journal.heldRowsOfBatch(batch!.id);
      return [...held.first.map((line) => line.line), ...rows.map((row) => row.line)];
    });
    expect(real?.sort((a, b) => a - b)).toEqual(planned?.holds.map((hold) => hold.line));
  });

  it('a home no run has journaled yet: nothing to weigh against, exit 0', async () => {
    const file = writeFile(
      folder(),
      'folha.csv',
      [PAYROLL_HEADER, ...payrollRows('a', 2)].join('\n'),
    );
    const validated = await cli(['validate', file, '--json']);
    expect(validated.code, validated.stderr).toBe(0);
    expect((JSON.parse(validated.stdout) as Checked).journal).toBeNull();
    expect(await store.read(home.home, async () => 'there')).toBeUndefined();
  });
});

describe('payouts validate, a PostgreSQL journal it cannot reach', () => {
  const folder = useTempFolder();

  it.each([
    ['en', /Not weighed against the journal: its database .* cannot be reached/],
    ['pt-BR', /Não conferido com o diário: o banco .* não responde/],
  ])(
    'reports the file’s own checks, says what it could not weigh, exit 1 (%s)',
    async (language, said) => {
      const journal = `postgres://payouts@127.0.0.1:${await closedPort()}/payouts`;
      const env = { PAYOUTS_HOME: folder(), PAYOUTS_JOURNAL: journal, PAYOUTS_LANGUAGE: language };
      const file = writeFile(
        folder(),
        'folha.csv',
        [PAYROLL_HEADER, ...payrollRows('a', 2)].join('\n'),
      );
      const validated = await runCli(['validate', file], { env });
      expect(validated.code, validated.stderr).toBe(1);
      expect(validated.stdout).toContain('folha.csv');
      expect(validated.stdout + validated.stderr).toMatch(said);
      expect(validated.stdout + validated.stderr).not.toMatch(/sent|enviad/);
      const json = await runCli(['validate', file, '--json'], { env });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        valid: 2,
        journal: null,
        notWeighed: expect.stringMatching(/cannot be reached/),
      });
    },
  );
});
