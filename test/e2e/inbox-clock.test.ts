/**
 * A settled file is one whose size and time stopped changing on our clock (issue 17,
 * rule 12): `payouts run` takes a file whose modification time is ahead of ours, as a
 * file share's clock may be, once it has not changed between two looks.
 */
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import { TOKEN } from '../support/gateway.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';

describe('payouts run and a file share whose clock runs ahead', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('takes a file whose time is an hour ahead of ours once it is unchanged on our clock', async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '300ms',
    });
    const path = join(home, 'inbox', 'folha.csv');
    writeFileSync(path, `${HEADER}\r\n${ANA}\r\n`);
    const ahead = new Date(Date.now() + 60 * 60 * 1000);
    utimesSync(path, ahead, ahead);
    const run = await runCli(['run'], { env });
    expect(run.stdout).not.toContain('left in the inbox');
    expect(run.code, run.stdout + run.stderr).toBe(3); // sent, left pending
    expect(sandbox.ledger()).toHaveLength(1);
  });
});
