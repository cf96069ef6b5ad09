import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder, dated } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';

const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount';
const row = (orderId: string, name: string, key: string, amount: string) =>
  `${orderId},${name},${key},11987654321,52998224725,EMAIL,${key},"${amount}"`;

describe('payouts run follows payouts to the end and writes results (sandbox over HTTP)', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  const setUp = async (settleDelayMs: number) => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '30s',
      // Files are written just before each run: taken at once.
      PAYOUTS_INBOX_SETTLE: '1ms',
    });
    return { home, env, sandbox };
  };

  /** The result file, parsed as a spreadsheet would read it. */
  const readResult = (path: string, delimiter = ';') =>
    parse(readFileSync(path), { bom: true, columns: true, delimiter }) as Record<string, string>[];

  it('settles to paid and failed, writes one result line per input row in order, formula-safe, and archives the file', async () => {
    const { home, env, sandbox } = await setUp(300);
    const lines = [
      HEADER,
      row('r-1', 'Ana', 'ana@example.com', '10,00'),
      row('r-2', `=cmd|' /C calc'!A0`, 'b@example.com', '11,00'),
      row('r-3', 'Bia', 'fail@example.com', '20,00'),
      row('r-4', '+1', 'c@example.com', '12,00'),
      row('r-5', '@SUM(1)', 'd@example.com', '13,00'),
      row('fornecedores-2026-11-caio-000006', 'Caio', 'caio@example.com', '30,00'),
    ];
    writeFileSync(join(home, 'inbox', 'pay.csv'), `${lines.join('\r\n')}\r\n`);

    const result = await runCli(['run'], { env });
    expect(result.code, result.stdout + result.stderr).toBe(2); // invalid and failed rows
    expect(result.stdout).toContain('every row final: archived');
    expect(result.stdout).toMatch(/2 paid \(R\$ 40,00\)/);
    expect(result.stdout).toContain('result:');
    expect(existsSync(join(home, 'archive', dated('pay.csv')))).toBe(true);
    expect(existsSync(join(home, 'processing', 'pay.csv'))).toBe(false);

    const path = join(home, 'results', dated('pay.csv', 'result'));
    expect(readFileSync(path).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const rows = readResult(path);
    expect(rows.map((r) => [r['line'], r['orderId'], r['status']])).toEqual([
      ['2', 'r-1', 'paid'],
      ['3', 'r-2', 'invalid'],
      ['4', 'r-3', 'failed'],
      ['5', 'r-4', 'invalid'],
      ['6', 'r-5', 'invalid'],
      ['7', 'fornecedores-2026-11-caio-000006', 'paid'],
    ]);
    // The excel dialect: every amount, the gateway's fee and net too, with a decimal comma.
    expect(rows[0]).toMatchObject({
      value: '10,00',
      fee: '0,50',
      net: '9,50',
      pixKeyType: 'EMAIL',
    });
    expect(rows[0]?.['transactionId']).toMatch(/^\d+$/);
    expect(rows[0]?.['endToEndId']).toMatch(/^E/);
    for (const cells of rows) {
      for (const cell of Object.values(cells)) expect(cell).not.toMatch(/^[=+\-@]/);
    }
    expect(rows[1]?.['message']).toContain('does not look like a name');
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['fornecedores-2026-11-caio-000006', 1],
      ['r-1', 1],
      ['r-3', 1],
    ]);

    // payouts status: every file, one file row by row, one payout with its history.
    const files = await runCli(['status'], { env });
    expect(files.code).toBe(0);
    expect(files.stdout).toMatch(/^batch 1 {2}pay\.csv .* done: /m);
    expect(files.stdout).toContain('1 failed (R$ 20,00), 2 paid (R$ 40,00), 3 invalid');
    const byLine = await runCli(['status', 'pay.csv'], { env });
    expect(byLine.stdout).toMatch(/^ {4}3 {2}r-2 +invalid +R\$ 11,00 {2}- +name: "=cmd/m);
    expect(byLine.stdout).toMatch(/^ {4}4 {2}r-3 +failed +R\$ 20,00 {2}\d+/m);
    expect(byLine.stdout).toMatch(/^ line {2}orderId +status +value {2}transactionId {2}message$/m);
    // A long orderId widens its column: every status starts where the heading's does.
    const table = byLine.stdout.split('\n').filter((text) => /^ {1,4}(line|\d+) /.test(text));
    expect(table).toHaveLength(7);
    const statusAt = (table[0] ?? '').indexOf('status');
    for (const text of table.slice(1))
      expect(text.slice(statusAt), text).toMatch(/^(paid|failed|invalid) /);
    expect(byLine.stdout).toContain('fornecedores-2026-11-caio-000006  paid');
    // --json: numbers as numbers.
    const byLineJson = await runCli(['status', 'pay.csv', '--json'], { env });
    const [batch] = JSON.parse(byLineJson.stdout) as { rows: Record<string, unknown>[] }[];
    expect(batch?.rows.map((r) => [r['line'], r['status'], r['valueCents']])).toEqual([
      [2, 'paid', 1000],
      // An invalid row still says the amount it had, as its result line does.
      [3, 'invalid', 1100],
      [4, 'failed', 2000],
      [5, 'invalid', 1200],
      [6, 'invalid', 1300],
      [7, 'paid', 3000],
    ]);
    expect(batch?.rows[0]?.['transactionId']).toEqual(expect.any(Number));
    // The gateway's fee and net, numeric text, as numbers with the same digits.
    expect([batch?.rows[0]?.['fee'], batch?.rows[0]?.['net']]).toEqual([
      expect.any(Number),
      expect.any(Number),
    ]);
    expect(batch?.rows[1]?.['fee']).toBeNull();
    const one = await runCli(['status', 'r-1', '--json'], { env });
    const payout = JSON.parse(one.stdout) as {
      state: string;
      fee: unknown;
      history: { to: string }[];
    };
    expect(payout.state).toBe('paid');
    expect(payout.fee).toEqual(expect.any(Number));
    expect(payout.history.map((entry) => entry.to)).toEqual([
      'queued',
      'sending',
      'pending',
      'paid',
    ]);
    const unknown = await runCli(['status', 'nope'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no file and no orderId named "nope"');
  });

  it('a run that ends while following leaves rows pending (exit 3); the next run follows them to the end (exit 0)', async () => {
    const { home, env, sandbox } = await setUp(2_500);
    const lines = [
      HEADER,
      row('s-1', 'Ana', 'ana@example.com', '10,00'),
      row('s-2', 'Bia', 'bia@example.com', '20,00'),
    ];
    writeFileSync(join(home, 'inbox', 'pay.csv'), `${lines.join('\n')}\n`);

    const first = await runCli(['run', '--follow-timeout', '1s'], { env });
    expect(first.code, first.stdout + first.stderr).toBe(3);
    expect(existsSync(join(home, 'processing', 'pay.csv'))).toBe(true);
    const path = join(home, 'results', dated('pay.csv', 'result'));
    expect(readResult(path).map((r) => r['status'])).toEqual(['pending', 'pending']);

    const second = await runCli(['run', '--json'], { env });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const summary = JSON.parse(second.stdout) as {
      files: { file: string; rows: Record<string, number>; cents: Record<string, number> }[];
    };
    expect(summary.files).toMatchObject([
      { file: 'pay.csv', rows: { paid: 2 }, cents: { paid: 3000 } },
    ]);
    expect(readResult(path).map((r) => r['status'])).toEqual(['paid', 'paid']);
    expect(existsSync(join(home, 'archive', dated('pay.csv')))).toBe(true);
    expect(sandbox.ledger()).toHaveLength(2);

    const third = await runCli(['run'], { env });
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('The inbox is empty');
  });

  it('the rfc4180 dialect: commas, no byte-order mark, decimal point', async () => {
    const { home, env } = await setUp(100);
    writeFileSync(
      join(home, 'inbox', 'pay.csv'),
      `${[HEADER, row('t-1', 'Ana', 'ana@example.com', '1234,56')].join('\n')}\n`,
    );
    const result = await runCli(['run'], { env: { ...env, PAYOUTS_RESULT_DIALECT: 'rfc4180' } });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const path = join(home, 'results', dated('pay.csv', 'result'));
    expect(readFileSync(path, 'utf8').startsWith('line,orderId,')).toBe(true);
    expect(readResult(path, ',')[0]).toMatchObject({ value: '1234.56', status: 'paid' });
  });

  it("next month's file of the same name gets its own result and archive name; the first is kept", async () => {
    const { home, env, sandbox } = await setUp(100);
    writeFileSync(
      join(home, 'inbox', 'payroll.csv'),
      `${[HEADER, row('m1-1', 'Ana', 'a@example.com', '10,00')].join('\n')}\n`,
    );
    expect((await runCli(['run'], { env })).code).toBe(0);
    writeFileSync(
      join(home, 'inbox', 'payroll.csv'),
      // Another person: the same one paid another amount the same day under the name is held.
      `${[HEADER, row('m2-1', 'Bia', 'b@example.com', '20,00').replace('52998224725', '11144477735')].join('\n')}\n`,
    );
    const second = await runCli(['run'], { env });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toContain(`archived as ${dated('payroll.csv', 'archive', 2)}`);
    expect(
      readResult(join(home, 'results', dated('payroll.csv', 'result'))).map((r) => r['orderId']),
    ).toEqual(['m1-1']);
    expect(
      readResult(join(home, 'results', dated('payroll.csv', 'result', 2))).map((r) => r['orderId']),
    ).toEqual(['m2-1']);
    expect(existsSync(join(home, 'archive', dated('payroll.csv')))).toBe(true);
    expect(existsSync(join(home, 'archive', dated('payroll.csv', 'archive', 2)))).toBe(true);
    expect(sandbox.ledger()).toHaveLength(2);
  });

  it('a held file whose rows its corrected copy takes over is archived with every line, each marked superseded', async () => {
    const { home, env, sandbox } = await setUp(100);
    const rows = [
      row('h-1', 'Ana', 'a@example.com', '10,00'),
      row('h-2', 'Bia', 'b@example.com', '20,00'),
    ];
    // The total line says 99,00: the whole file is held, nothing sent.
    writeFileSync(
      join(home, 'inbox', 'pay.csv'),
      `${[HEADER, ...rows, 'Total,,,,,,,"99,00"'].join('\n')}\n`,
    );
    const held = await runCli(['run'], { env });
    expect(held.code).toBe(2);
    expect(sandbox.ledger()).toHaveLength(0);
    // Held whole, with both totals in its result.
    expect(readResult(join(home, 'results', dated('pay.csv', 'result')))[0]).toMatchObject({
      status: 'held',
      message: expect.stringContaining(
        'the file has R$ 30,00, but the total line (line 4) says R$ 99,00',
      ),
    });
    writeFileSync(
      join(home, 'inbox', 'pay (corrigida).csv'),
      `${[HEADER, ...rows, 'Total,,,,,,,"30,00"'].join('\n')}\n`,
    );
    const fixed = await runCli(['run'], { env });
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(existsSync(join(home, 'archive', dated('pay.csv')))).toBe(true);
    expect(existsSync(join(home, 'archive', dated('pay (corrigida).csv')))).toBe(true);
    const old = readResult(join(home, 'results', dated('pay.csv', 'result')));
    // Each superseded line keeps the name and value its row had; a total line has none.
    expect(old.map((r) => [r['line'], r['orderId'], r['status'], r['name'], r['value']])).toEqual([
      ['2', 'h-1', 'superseded', 'Ana', '10,00'],
      ['3', 'h-2', 'superseded', 'Bia', '20,00'],
      ['4', '', 'skipped', '', ''],
    ]);
    expect(old[0]?.['message']).toContain('taken over by line 2 of pay (corrigida).csv');
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['h-1', 1],
      ['h-2', 1],
    ]);
  });

  it('a result that cannot be written is said, the file waits in processing/, and the next run writes it', async () => {
    const { home, env, sandbox } = await setUp(100);
    writeFileSync(
      join(home, 'inbox', 'pay.csv'),
      `${[HEADER, row('e-1', 'Ana', 'a@example.com', '10,00')].join('\n')}\n`,
    );
    // A folder where the result file should go: the rename into place fails.
    mkdirSync(join(home, 'results', dated('pay.csv', 'result')), { recursive: true });
    const blocked = await runCli(['run'], { env });
    expect(blocked.code, blocked.stdout + blocked.stderr).toBe(2);
    expect(blocked.stdout).toContain('could not be written (EISDIR)');
    expect(existsSync(join(home, 'processing', 'pay.csv'))).toBe(true);
    expect(sandbox.ledger()).toHaveLength(1);

    rmSync(join(home, 'results', dated('pay.csv', 'result')), { recursive: true });
    const next = await runCli(['run'], { env });
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(
      readResult(join(home, 'results', dated('pay.csv', 'result'))).map((r) => r['status']),
    ).toEqual(['paid']);
    expect(existsSync(join(home, 'archive', dated('pay.csv')))).toBe(true);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('reconcile records a paid payout that came back, and rewrites its result', async () => {
    const { home, env, sandbox } = await setUp(100);
    writeFileSync(
      join(home, 'inbox', 'pay.csv'),
      `${[HEADER, row('c-1', 'Ana', 'a@example.com', '10,00'), row('c-2', 'Bia', 'b@example.com', '20,00')].join('\n')}\n`,
    );
    const paid = await runCli(['run'], { env });
    expect(paid.code, paid.stdout + paid.stderr).toBe(0);
    expect(sandbox.refund('c-1')).toBe(true); // a Pix return, days later
    const reconciled = await runCli(['reconcile', '--days', '1'], { env });
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(2);
    expect(reconciled.stdout).toContain(
      'Checked 2 paid payouts sent in the last 1 day: 1 came back',
    );
    expect(reconciled.stdout).toContain('refunded: c-1');
    const rows = readResult(join(home, 'results', dated('pay.csv', 'result')));
    expect(rows.map((r) => [r['orderId'], r['status']])).toEqual([
      ['c-1', 'refunded'],
      ['c-2', 'paid'],
    ]);
    const again = await runCli(['reconcile', '--days', '1'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Checked 1 paid payout sent');
    // No answer is not "nothing came back": exit 1, and the row is checked next time.
    sandbox.setFaults({ serverErrorRate: 1, operations: ['getTransactionById'] });
    const unanswered = await runCli(['reconcile', '--days', '1'], { env });
    expect(unanswered.code).toBe(1);
    expect(unanswered.stdout).toMatch(
      /1 could not be read from the gateway \(.+\): run reconcile again/,
    );
    expect(unanswered.stderr).toContain('payouts reconcile: 1 paid payout not checked (');
    // A refused token: said as such, with what to check, not as "no answer".
    sandbox.setFaults({});
    const refused = await runCli(['reconcile', '--days', '1'], {
      env: { ...env, PAYOUTS_TOKEN: 'not-the-token' },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /payouts reconcile: stopped: the gateway refused our credentials \(.*401.*\): check the token \(PAYOUTS_TOKEN\)/,
    );
  });
});
