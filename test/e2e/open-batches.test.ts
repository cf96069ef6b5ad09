/**
 * Every open batch is in every summary (issue 29, case 5): a batch with a row not final is
 * named by every `run`, with its state and what it waits for, and sets the exit code,
 * wherever its file is; "the inbox is empty" only when nothing is open. As cron runs it:
 * `payouts run` in turn, against a sandbox whose ledger says who was paid.
 */
import { readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN, topUp } from '../support/gateway.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ROWS = [
  'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"',
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"',
  'Caio Reis,390.533.447-05,caio@example.com,(31) 97654-3210,caio@example.com,"1.500,00"',
];
/** How many times the gateway created each payout (the top-up is not one). */
function payoutsSent(sandbox: Sandbox | undefined): number[] {
  const counts = new Map<string, number>();
  for (const entry of sandbox?.ledger() ?? []) {
    if (entry.object === 'cashout')
      counts.set(entry.orderId ?? '', (counts.get(entry.orderId ?? '') ?? 0) + 1);
  }
  return [...counts.values()];
}

const PAYROLL = `${HEADER}\r\n${ROWS.join('\r\n')}\r\n`;

describe('an open batch in every summary', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  /** A home with approval on, over a sandbox holding R$ 100,00. */
  async function approvalHome(settings: Record<string, string> = {}) {
    sandbox = await startSandbox({ token: TOKEN, initialBalanceCents: 100_00 });
    const gatewayUrl = sandbox.url;
    const { home, env } = sandboxHome(folder(), gatewayUrl, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_REQUIRE_APPROVAL: 'true',
      ...settings,
    });
    const run = (...args: string[]) => runCli(['run', ...args], { env });
    const drop = () => writeFileSync(join(home, 'inbox', 'folha.csv'), PAYROLL);
    const topUpBig = () => topUp(gatewayUrl, 100_000_00);
    // Approved, then held for balance: its file in processing/, its batch underfunded.
    drop();
    expect((await run()).code).toBe(2);
    const approved = await runCli(['approve', 'folha.csv'], { env });
    expect(approved.code, approved.stderr).toBe(0);
    const held = await run();
    expect(held.code).toBe(2);
    expect(held.stdout).toContain('folha.csv: held: the balance does not cover it');
    return { home, env, run, drop, topUp: topUpBig };
  }

  it('an approved payroll held for balance, its same-bytes re-export turned down: named by every run until paid, its result rewritten, its pending payouts alerted', async () => {
    const { env, run, drop, topUp } = await approvalHome();
    drop();
    const copy = await run();
    expect(copy.code).toBe(2);
    // Turned down as the summary names it: its name, and its batch beside the other.
    const [, waiting = '', batch = ''] =
      /: waiting for approval.*\n.*payouts approve "([^"]+)"((?: --batch \d+)?)/.exec(
        copy.stdout,
      ) ?? [];
    expect(batch).not.toBe('');
    const turnedDown = await runCli(
      ['reject', waiting, ...batch.split(' ').filter(Boolean), '--reason', 'a re-export'],
      { env },
    );
    expect(turnedDown.code, turnedDown.stderr).toBe(0);

    const unpaid = await run();
    expect(unpaid.stdout).not.toContain('The inbox is empty');
    expect(unpaid.stdout).toMatch(/^folha\.csv: .*3 held \(R\$ 7\.000,00\)/m);
    expect(unpaid.stdout).toContain("the balance leaves R$ 100,00 for this batch's R$ 7.000,00");
    expect(unpaid.code).toBe(2);

    await topUp();
    const paying = await run();
    expect(paying.stdout).toMatch(/^folha\.csv: .*3 pending \(R\$ 7\.000,00\)/m);
    const result = /result: (.*)$/m.exec(paying.stdout)?.[1] ?? '';
    expect(readFileSync(result, 'utf8')).not.toMatch(/;held;/);
    expect(paying.code).toBe(3);

    // Pending longer than pendingAlertAfter: said on stderr, even with --quiet.
    const late = await runCli(['run', '--quiet'], {
      env: { ...env, PAYOUTS_PENDING_ALERT_AFTER: '1ms' },
    });
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(
      /3 payouts pending for up to \S+ since they were sent, in folha\.csv/,
    );

    const settled = await run('--follow-timeout', '10s');
    expect(settled.code).toBe(0);
    expect(settled.stdout).toMatch(/^folha\.csv: .*every row final.*3 paid \(R\$ 7\.000,00\)/m);
    expect(readFileSync(result, 'utf8').match(/;paid;/g)).toHaveLength(3);
    expect((await run()).stdout).toContain('The inbox is empty: nothing to do.');
    expect(payoutsSent(sandbox)).toEqual([1, 1, 1]);
  });

  it('an approved payroll stays in processing/ when a copy of its very bytes arrives: only the copy waits for approval', async () => {
    const { home, run, drop } = await approvalHome();
    drop();
    expect((await run()).code).toBe(2);
    expect(readdirSync(join(home, 'processing'))).toEqual(['folha.csv']);
    expect(readdirSync(join(home, 'awaiting-approval')).sort()).toEqual([
      'folha [2].csv',
      'folha [2].csv.report.txt',
    ]);
  });

  it('a payroll whose file a person moved out of processing/ is still named, paid and written', async () => {
    const { home, run, topUp } = await approvalHome();
    renameSync(join(home, 'processing', 'folha.csv'), join(folder(), 'folha.csv'));
    const unpaid = await run();
    expect(unpaid.stdout).toMatch(/^folha\.csv: .*3 held \(R\$ 7\.000,00\)/m);
    expect(unpaid.code).toBe(2);
    await topUp();
    const paid = await run('--follow-timeout', '10s');
    expect(paid.stdout).toMatch(/^folha\.csv: .*every row final.*3 paid \(R\$ 7\.000,00\)/m);
    expect(paid.code).toBe(0);
    expect(payoutsSent(sandbox)).toEqual([1, 1, 1]);
  });
});
