/**
 * Retry on purpose (issue 17, rule 6), as a person runs it: a payout failed at the
 * gateway is not sent again by dropping its file again; `payouts retry` sends it once,
 * as -r2, recorded with who asked.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
// The sandbox fails every payout to this key.
const FABIO =
  'Fabio Lima,111.444.777-35,fabio@example.com,(21) 99876-5432,fail@example.com,"800,00"';
const EVA = 'Eva Rocha,390.533.447-05,eva@example.com,(31) 97654-3210,fail@example.com,"700,00"';

describe('payouts retry (sandbox over HTTP)', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('sends a failed row again only when asked, once, as -r2; dropping the file again does not', async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '20s',
      PAYOUTS_INBOX_SETTLE: '1ms',
    });
    const drop = () =>
      writeFileSync(join(home, 'inbox', 'folha.csv'), `${HEADER}\r\n${ANA}\r\n${EVA}\r\n`);
    drop();
    expect((await runCli(['run'], { env })).code).toBe(2);
    expect(sandbox.ledger()).toHaveLength(2);

    drop();
    const again = await runCli(['run'], { env });
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(/payouts retry "folha\.csv"/);
    expect(sandbox.ledger()).toHaveLength(2);

    const retry = await runCli(['retry', 'folha.csv', '--by', 'maria'], { env });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/1 payout, R\$ 700,00, to be sent again, asked by maria/);
    const retryId = /-> (\S+-r2)$/m.exec(retry.stdout)?.[1] ?? '';
    expect(retryId).not.toBe('');

    await runCli(['run'], { env });
    await runCli(['run'], { env });
    expect(ledgerCounts(sandbox).get(retryId)).toBe(1);
    expect(sandbox.ledger()).toHaveLength(3);

    const status = await runCli(['status', retryId], { env });
    expect(status.stdout).toMatch(/sent again on purpose by maria/);

    // A paid payout is never sent again: exit 1, nothing changes.
    const paidId = sandbox.ledger().find((entry) => entry.status === 'paid')?.orderId ?? '';
    const refused = await runCli(['retry', paidId], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is paid; only a payout that failed/);
    expect(sandbox.ledger()).toHaveLength(3);
  });

  it('two batches of one name with failed rows: retry FILE picks neither until --batch says which', async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '20s',
      PAYOUTS_INBOX_SETTLE: '1ms',
    });
    const drop = (...rows: string[]) =>
      writeFileSync(join(home, 'inbox', 'folha.csv'), `${HEADER}\r\n${rows.join('\r\n')}\r\n`);
    drop(ANA, EVA);
    expect((await runCli(['run'], { env })).code).toBe(2);
    // Another payroll under the name, repeating nobody: a batch of its own, its row failed too.
    drop(FABIO);
    expect((await runCli(['run'], { env })).code).toBe(2);
    expect(sandbox.ledger().filter((entry) => entry.status === 'failed')).toHaveLength(2);

    const asked = await runCli(['retry', 'folha.csv'], { env });
    expect(asked.code).toBe(1);
    expect(asked.stderr).toMatch(/batch 1\b/);
    expect(asked.stderr).toMatch(/batch 2\b/);
    const printed = /payouts retry "folha\.csv" --batch \d+[^\n]*/.exec(asked.stderr)?.[0] ?? '';
    expect(printed).not.toBe('');
    await runCli(['run'], { env });
    expect(sandbox.ledger()).toHaveLength(3);

    const retry = await runCli(['retry', 'folha.csv', '--batch', '1'], { env });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/1 payout, R\$ 700,00, to be sent again/);
    await runCli(['run'], { env });
    expect(sandbox.ledger()).toHaveLength(4);
    expect(sandbox.ledger().at(-1)?.valueCents).toBe(70_000);
  });
});
