/**
 * A payout that ends in conflict while a corrected copy's row was covered by it (rule 8 of
 * docs/who-is-paid.md), as cron and a person run it: its create never answered, a cash-in
 * took its orderId at the gateway; the copy's row is held as a possible duplicate, never
 * sent by itself nor counted paid or covered, and the lines the run prints, run as printed,
 * pay it once, and only with `--repeats`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { dated, useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';
import { approveCommands, printedCommand } from '../support/printed.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
const BRUNO = (cpf: string) =>
  `Bruno Lima,${cpf},bruno@example.com,(21) 99876-5432,bruno@example.com,"800,00"`;
const csv = (...rows: string[]) => `${[HEADER, ...rows].join('\r\n')}\r\n`;

/** The orderId and status of `name`'s row in a result file. */
function resultRow(path: string, name: string): { orderId: string; status: string } {
  const row = readFileSync(path, 'utf8')
    .split('\r\n')
    .map((line) => line.split(';'))
    .find((cells) => cells[2] === name);
  return { orderId: row?.[1] ?? '', status: row?.[7] ?? '' };
}

describe('a copy covered by a payout that ends in conflict (sandbox over HTTP)', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it(
    'is held, never sent by itself, and paid exactly once by the printed approve with --repeats',
    { timeout: 120_000 },
    async () => {
      // Every create goes unanswered and creates nothing: the payouts stay unknown.
      sandbox = await startSandbox({
        token: TOKEN,
        settleDelayMs: 20,
        faults: { hangRate: 1, operations: ['createCashOut'] },
      });
      const base = folder();
      const { home, env } = sandboxHome(base, sandbox.url, {
        ...QUICK_TIMEOUTS,
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
      });
      // As cron and a person run them: each command a process of its own.
      const payouts = (args: readonly string[]) => runCli(args, { env, cwd: base });
      const ledger = () => sandbox?.ledger() ?? [];
      const paidToAna = () =>
        ledger().filter(
          (entry) => entry.object === 'cashout' && entry.pixKey === 'ana@example.com',
        );
      const drop = (content: string) => writeFileSync(join(home, 'inbox', 'folha.csv'), content);

      drop(csv(ANA, BRUNO('111.444.777-00')));
      expect((await payouts(['run'])).code).toBe(2);
      const first = resultRow(join(home, 'results', dated('folha.csv', 'result')), 'Ana Souza');
      expect(first.status).toBe('unknown');

      // The corrected copy, Bruno's CPF fixed: Ana's row is covered by the unknown payout.
      drop(csv(ANA, BRUNO('111.444.777-35')));
      await payouts(['run']);
      const copyResult = join(home, 'results', dated('folha.csv', 'result', 2));
      expect(resultRow(copyResult, 'Ana Souza').status).toBe('covered');
      expect(ledger()).toEqual([]);

      // Another transaction takes the orderId at the gateway: its lookup finds a cash-in.
      sandbox.setFaults({ hangRate: 0 });
      const cashIn = await payouts([
        'cashin',
        '--order-id',
        first.orderId,
        '--value',
        '300000',
        '--payer-name',
        'Loja Exemplo',
        '--payer-document',
        '11.222.333/0001-81',
        '--payer-email',
        'loja@example.com',
        '--payer-phone',
        '(11) 3333-4444',
        '--product-name',
        'pedido',
        '--product-description',
        'pedido 1',
        '--qr-out',
        join(base, 'cashin.png'),
      ]);
      expect(cashIn.code, cashIn.stderr).toBe(0);

      const held = await payouts(['run']);
      expect(held.code, held.stderr).toBe(2);
      expect(held.stdout).toContain(
        `(orderId ${first.orderId}), but the gateway holds another transaction`,
      );
      const copyBlock = /^folha\.csv \(batch 2\): .*$/m.exec(held.stdout)?.[0] ?? '';
      expect(copyBlock).toMatch(/1 held \(R\$ 3\.000,00\)/);
      expect(copyBlock).not.toMatch(/covered|paid \(R\$ 3\.000,00\)/);
      expect(resultRow(copyResult, 'Ana Souza').status).toBe('held');
      expect(paidToAna()).toEqual([]);

      const get = printedCommand(held.stdout, 'get --order-id');
      expect(get).toEqual(['get', '--order-id', first.orderId]);
      const looked = await payouts(get);
      expect(looked.code, looked.stderr).toBe(0);
      expect(looked.stdout).toMatch(/cashin/);
      expect(ledger()).toHaveLength(1);

      const approve = approveCommands(held.stdout);
      expect(approve).toEqual([['approve', 'folha.csv', '--new-batch', '--batch', '2']]);
      const printed = approve[0] ?? [];
      const listed = await payouts(printed);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/line 2: Ana Souza, R\$ 3\.000,00: repeats folha\.csv, line 2/);
      await payouts(['run']);
      expect(paidToAna()).toEqual([]);

      const count = /--repeats and their count, (\d+)/.exec(listed.stdout)?.[1] ?? '';
      expect(count).toBe('1');
      const confirmed = await payouts([...printed, '--repeats', count]);
      expect(confirmed.code, confirmed.stderr).toBe(0);
      await payouts(['run']);
      expect(paidToAna()).toHaveLength(1);

      const again = await payouts([...printed, '--repeats', count]);
      expect(again.code).toBe(1);
      await payouts(['run']);
      expect(paidToAna()).toHaveLength(1);
      // Bruno's fixed row went as its own payout, never twice.
      const toBruno = ledger().filter((entry) => entry.pixKey === 'bruno@example.com');
      expect(toBruno.length).toBeLessThanOrEqual(1);
    },
  );
});
