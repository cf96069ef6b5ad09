import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli, startCli, stopChild } from '../support/cli.js';
import { TOKEN, cashOutRequest, clientFor } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';

/** A cash-in's flags, each one replaceable: `{ '--qr-out': path }`. */
function cashInArgs(changes: Record<string, string> = {}): string[] {
  const flags: Record<string, string> = {
    '--value': '1500',
    '--payer-name': 'Ana Souza',
    '--payer-document': '52998224725',
    '--payer-email': 'ana@example.com',
    '--payer-phone': '+5511987654321',
    '--product-name': 'Invoice 42',
    '--product-description': 'November',
    ...changes,
  };
  return ['cashin', ...Object.entries(flags).flat()];
}

describe('payouts sandbox (child process)', () => {
  it('prints its address, answers in the interface shapes, and stops on SIGTERM', async () => {
    const { child, match } = await startCli(
      ['sandbox', '--port', '0'],
      /listening on (http:\/\/127\.0\.0\.1:(\d+))/,
      {
        env: { PAYOUTS_TOKEN: TOKEN },
      },
    );
    try {
      const url = match[1];
      expect(Number(match[2])).toBeGreaterThan(0);
      // What a plain curl would see.
      const response = await request(`${url}/transaction/cashout`, {
        method: 'POST',
        headers: { authorization: TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify(cashOutRequest('curl-1')),
      });
      expect(response.statusCode).toBe(200);
      const body = (await response.body.json()) as Record<string, unknown>;
      expect(body['status']).toBe('0');
      expect(body['tax']).toMatch(/^\d+\.\d+$/);
      expect(body['liquid']).toMatch(/^\d+\.\d+$/);
      expect(body['createdAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    } finally {
      expect(await stopChild(child)).toBe(0);
    }
  });

  it('uses the public default token when none is configured, and says so', async () => {
    const { child, match, output } = await startCli(['sandbox'], /listening on (\S+)/);
    try {
      const response = await request(`${match[1]}/transaction/get/balance`, {
        headers: { authorization: 'sandbox-token' },
      });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
      expect(output()).toContain('Authorization: sandbox-token');
    } finally {
      await stopChild(child, 'SIGINT');
    }
  });

  it('says it moves no real money even with --quiet', async () => {
    const { child, output } = await startCli(['sandbox', '--quiet'], /listening on (\S+)/);
    try {
      await expect.poll(output, { timeout: 5_000 }).toContain('SANDBOX: no real money moves');
    } finally {
      await stopChild(child, 'SIGINT');
    }
  });
});

describe('gateway commands against a sandbox over HTTP', () => {
  let sandbox: Sandbox;
  let env: Record<string, string>;
  let folder: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, initialBalanceCents: 777_000 });
    env = { PAYOUTS_BASE_URL: sandbox.url, PAYOUTS_TOKEN: TOKEN };
    folder = mkdtempSync(join(tmpdir(), 'payouts-cli-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('balance --json prints the balance', async () => {
    const result = await runCli(['balance', '--json'], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      balance: 777_000,
      retention: 0,
      toAnticipate: 0,
      finalBalance: 777_000,
    });
    expect(result.stderr).not.toContain('SANDBOX');
  });

  it('balance prints reais for people', async () => {
    const result = await runCli(['balance'], { env });
    expect(result.stdout).toMatch(/balance\s+R\$ 7\.770,00/);
  });

  it('get --order-id --json prints the transaction', async () => {
    const client = clientFor(sandbox.url);
    const cashOut = await client.createCashOut(cashOutRequest('cli-get-1', { value: 4321 }));
    await client.close();
    const result = await runCli(['get', '--order-id', 'cli-get-1', '--json'], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      transactionId: cashOut.transactionId,
      orderId: 'cli-get-1',
      valueCents: 4321,
    });
    const byId = await runCli(['get', '--id', String(cashOut.transactionId)], { env });
    expect(byId.stdout).toMatch(/orderId\s+cli-get-1/);
  });

  it('a transaction not found exits 1 with one clear line', async () => {
    const result = await runCli(['get', '--order-id', 'nobody'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([
      'payouts get: the gateway has no transaction with orderId "nobody"',
    ]);
  });

  it('an auth failure exits 1 with one clear line and never the token', async () => {
    const wrongToken = 'wrong-secret-9c1d';
    const result = await runCli(['balance'], { env: { ...env, PAYOUTS_TOKEN: wrongToken } });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^payouts: the gateway refused our credentials \(getBalance: Unauthorized \(HTTP 401\)\)\. Check the token/,
    );
    expect(result.stdout + result.stderr).not.toContain(wrongToken);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  it('an unreachable gateway exits 1 with one clear line', async () => {
    const result = await runCli(['balance'], {
      env: { ...env, PAYOUTS_BASE_URL: 'http://127.0.0.1:1' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^payouts: could not reach the gateway \(getBalance: no connection \(ECONNREFUSED.*\)\)\. Check baseUrl/,
    );
  });

  it('get without --id or --order-id says what to do', async () => {
    const result = await runCli(['get'], { env });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('with --id N or --order-id X');
  });

  it('a bad config key exits 1 naming it', async () => {
    const result = await runCli(['balance'], { env: { ...env, PAYOUTS_CONCURRENCY: 'many' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^config: concurrency = "many" \(from PAYOUTS_CONCURRENCY\)/);
  });

  it('cashin prints the payment code and saves the QR image', async () => {
    const qrOut = join(folder, 'invoice.png');
    const result = await runCli([...cashInArgs({ '--qr-out': qrOut }), '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { paymentCode: string; qrImage: string };
    expect(printed.paymentCode).toMatch(/^000201.*6304[0-9A-F]{4}$/);
    expect(printed.qrImage).toBe(qrOut);
    expect(readFileSync(qrOut).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
  });

  it('cashin checks where the QR image goes before it creates anything', async () => {
    const cashIns = () => sandbox.ledger().filter((entry) => entry.object === 'cashin').length;
    const before = cashIns();
    const args = (qrOut: string) =>
      cashInArgs({
        '--payer-document': '529.982.247-25',
        '--product-name': 'Invoice 43',
        '--qr-out': qrOut,
      });
    const missing = await runCli(args(join(folder, 'no-such-folder', 'qr.png')), { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `payouts cashin: --qr-out: the folder ${join(folder, 'no-such-folder')} does not exist. Nothing was created`,
    );
    const aFolder = await runCli(args(folder), { env });
    expect(aFolder.code).toBe(1);
    expect(aFolder.stderr).toContain(`${folder} is a folder: give a file name`);
    expect(cashIns()).toBe(before);
  });

  it('cashin refuses a payer document or e-mail that cannot be right, before sending', async () => {
    const result = await runCli(
      cashInArgs({ '--payer-document': '123', '--product-name': 'Invoice 44' }),
      { env },
    );
    expect(result.code).toBe(64); // a usage error: the command line cannot be taken
    expect(result.stderr).toMatch(/--payer-document <cpfCnpj>' argument '123' is invalid\. "123" /);
    const email = await runCli(
      ['cashin', '--value', '1500', '--payer-document', '52998224725', '--payer-email', 'a@b'],
      { env },
    );
    expect(email.code).toBe(64);
    expect(email.stderr).toContain('"a@b" is not an e-mail address');
  });

  it('cashin refuses an amount that is not whole cents', async () => {
    const result = await runCli(['cashin', '--value', '12.50'], { env });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('Expected a positive whole number of cents');
  });
});

describe('with no baseUrl', () => {
  it('talks to an embedded sandbox and says so', async () => {
    const result = await runCli(['balance', '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^SANDBOX: no real money moves/m);
    expect(JSON.parse(result.stdout)).toHaveProperty('balance');
  });

  it('get and reconcile say that the embedded sandbox forgets everything between commands, instead of suggesting a retry', async () => {
    const get = await runCli(['get', '--order-id', 'payroll-2026-11-0001']);
    expect(get.code).toBe(1);
    expect(get.stderr).toContain(
      'payouts get: no transaction with orderId "payroll-2026-11-0001": the embedded sandbox starts empty for each command and forgets everything when the command ends',
    );
    expect(get.stderr).toContain('run `payouts sandbox` in another terminal');
    const home = mkdtempSync(join(tmpdir(), 'payouts-reconcile-'));
    try {
      // A home that has paid into the sandbox on purpose, then looked back at.
      const env = { PAYOUTS_HOME: home, PAYOUTS_INBOX_SETTLE: '1ms', PAYOUTS_LOG_LEVEL: 'silent' };
      mkdirSync(join(home, 'inbox'));
      writeFileSync(join(home, 'inbox', 'pay.csv'), payrollFile('sbx', 1));
      expect((await runCli(['run', '--sandbox'], { env })).code).not.toBe(1);
      const reconcile = await runCli(['reconcile', '--days', '7', '--sandbox'], { env });
      expect(reconcile.code).toBe(1);
      expect(reconcile.stderr).toMatch(
        /payouts reconcile: nothing to read back: the embedded sandbox starts empty .* Nothing was changed\.$/m,
      );
      expect(reconcile.stderr).not.toMatch(/again once/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('--help works on every command, each with an example', async () => {
    const commands = [...(await runCli(['--help'])).stdout.matchAll(/^ {2}(\w+)\b/gm)]
      .map((match) => match[1] as string)
      .filter((name) => name !== 'help');
    expect(commands).toEqual(
      expect.arrayContaining([
        'validate',
        'template',
        'run',
        'status',
        'watch',
        'approve',
        'reject',
        'retry',
        'reconcile',
        'doctor',
        'sandbox',
        'balance',
        'get',
        'cashin',
        'demo',
      ]),
    );
    for (const command of commands) {
      const result = await runCli([command, '--help']);
      expect(result.code, command).toBe(0);
      // Each command is loaded by its name alone: the help must be that command's own.
      expect(result.stdout, command).toMatch(new RegExp(`^Usage: payouts ${command} `));
      expect(result.stdout, command).toContain('Example');
      expect(result.stdout, command).toMatch(/Global Options:\n(.*\n)*? {2}--config <file>/);
    }
  });
});
