/**
 * The README's cron line and systemd unit, run as written: the cron command through a
 * shell, the unit's Environment= lines and ExecStart= as a child process stopped with its
 * KillSignal. Only `/srv/payouts` is replaced by a temporary folder, and `payouts` is the
 * built binary on PATH; the gateway is the sandbox, given as /etc/payouts.env would.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, stopChild } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** The body of the README's first code block of this language. */
function block(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(README);
  if (!match?.[1]) throw new Error(`the README has no \`\`\`${language} block`);
  return match[1];
}

const PAYROLL =
  'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n' +
  'x-1,Ana,a@example.com,11987654321,52998224725,EMAIL,a@example.com,"10,00"\n' +
  'x-2,Bia,b@example.com,11987654321,52998224725,EMAIL,b@example.com,"20,00"\n';

describe('the README examples, as written', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let srv: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 100 });
    srv = join(folder(), 'srv-payouts');
    mkdirSync(join(srv, 'inbox'), { recursive: true });
    // `payouts` on PATH, as `npm install -g` would put it.
    const bin = join(folder(), 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'payouts'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'payouts'), 0o755);
    env = cleanEnv({
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      // What /etc/payouts.env holds.
      PAYOUTS_BASE_URL: sandbox.url,
      PAYOUTS_TOKEN: TOKEN,
      PAYOUTS_LOG_LEVEL: 'info',
    });
  });
  afterEach(() => sandbox.close());

  const here = (text: string) => text.replaceAll('/srv/payouts', srv);

  it('the cron line pays a dropped file and logs the run', async () => {
    const line = block('cron')
      .split('\n')
      .find((candidate) => candidate.trim() !== '' && !candidate.startsWith('#'));
    expect(line).toBeDefined();
    // Cron runs what follows the five schedule fields with /bin/sh.
    const command = here((line as string).trim().split(/\s+/).slice(5).join(' '));
    writeFileSync(join(srv, 'inbox', 'payroll.csv'), PAYROLL);
    // Exported a minute before cron's turn: settled.
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(join(srv, 'inbox', 'payroll.csv'), minuteAgo, minuteAgo);
    // Not spawnSync: the sandbox answers from this process, which must not be blocked.
    const shell = spawn('/bin/sh', ['-c', command], { env, stdio: 'ignore' });
    const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    expect(code, readFileSync(join(srv, 'run.log'), 'utf8')).toBe(0);
    expect(existsSync(join(srv, 'archive', 'payroll.csv'))).toBe(true);
    expect(existsSync(join(srv, 'results', 'payroll.result.csv'))).toBe(true);
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['x-1', 1],
      ['x-2', 1],
    ]);
  });

  it('the systemd unit runs the daemon, which pays a dropped file and stops on its KillSignal', async () => {
    const unit = block('ini');
    const settings = unit
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null);
    const values = (key: string) => settings.filter(([, k]) => k === key).map(([, , v]) => v ?? '');
    const unitEnv = Object.fromEntries(
      values('Environment').map((pair) => {
        const [name, ...rest] = pair.split('=');
        return [name as string, here(rest.join('='))];
      }),
    );
    // The receiver's port is the README's; a free one here, so the test never collides.
    unitEnv['PAYOUTS_POSTBACK_LISTEN'] = '127.0.0.1:0';
    const [program, ...args] = here(values('ExecStart')[0] ?? '').split(/\s+/);
    const killSignal = values('KillSignal')[0] as NodeJS.Signals;
    const stopWithin = Number.parseInt(values('TimeoutStopSec')[0] ?? '0', 10) * 1000;
    expect(program).toBe('/usr/bin/env');

    const daemon = spawn(program as string, args, {
      env: { ...env, ...unitEnv },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    writeFileSync(join(srv, 'inbox', 'payroll.csv'), PAYROLL);
    const until = Date.now() + 30_000;
    while (!existsSync(join(srv, 'archive', 'payroll.csv'))) {
      if (Date.now() > until) throw new Error(`not archived; daemon log:\n${log}`);
      await delay(100);
    }
    // Health: on GET /healthz of the receiver, and as a log line on SIGUSR2.
    const address = /postback receiver listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1];
    expect(address, log).toBeDefined();
    const health = (await (await fetch(`${address}/healthz`)).json()) as {
      rows: Record<string, number>;
    };
    expect(health.rows).toEqual({ paid: 2 });
    daemon.kill('SIGUSR2');
    const asked = Date.now();
    while (!log.includes('"msg":"health"') && Date.now() - asked < 5_000) await delay(50);
    expect(log).toContain('"msg":"health"');
    const started = Date.now();
    expect(await stopChild(daemon, killSignal)).toBe(0);
    expect(Date.now() - started).toBeLessThan(stopWithin);
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['x-1', 1],
      ['x-2', 1],
    ]);
  });
});
