/**
 * Nothing waits unseen (issue 17, rule 10), as cron runs it: `payouts run --quiet` with
 * a payout pending longer than pendingAlertAfter exits 2 and says so on stderr too, where
 * cron's log keeps it, and `status` shows it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN } from '../support/gateway.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';

describe('a payout pending too long, under --quiet', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('exits 2 and prints its age on stderr even with --quiet', async () => {
    // The gateway never settles it while the test runs.
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
      // Any age counts: the second run is later than the first's send, whatever the machine.
      PAYOUTS_PENDING_ALERT_AFTER: '1ms',
    });
    writeFileSync(join(home, 'inbox', 'folha.csv'), `${HEADER}\r\n${ANA}\r\n`);
    await runCli(['run', '--quiet'], { env });
    expect(sandbox.ledger()).toHaveLength(1);

    const again = await runCli(['run', '--quiet'], { env });
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(/1 pending for \S+ since it was sent: look it up at the gateway/);
    // stderr: what cron's mail or log keeps even when stdout goes elsewhere.
    expect(again.stderr).toMatch(
      /payouts run: 1 payout pending for \S+ since it was sent, in folha\.csv: a person must look it up at the gateway \(payouts get --order-id /,
    );
    const json = await runCli(['run', '--quiet', '--json'], { env });
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/1 payout pending for/);
    const status = await runCli(['status'], { env });
    expect(status.stdout).toMatch(/folha\.csv.*\n\s+1 pending for \S+ since it was sent/);
    expect(sandbox.ledger()).toHaveLength(1);
  });
});
