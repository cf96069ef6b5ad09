/**
 * The README's cron line and systemd unit, run as written, in an environment as bare as
 * theirs: the cron line through /bin/sh with only what cron gives (HOME, LOGNAME,
 * PATH=/usr/bin:/bin, SHELL) plus the crontab's own variable lines; the unit's
 * Environment= lines, its EnvironmentFile and ExecStart= as a child process with
 * systemd's PATH, stopped with its KillSignal. Only what the README tells the reader to
 * prepare is prepared, at temporary paths: `/srv/payouts`, `payouts` in `/usr/local/bin`
 * (a wrapper around the built binary) and `/etc/payouts.env` (the sandbox's address and
 * token in the README's format). A missing or empty environment file fails loudly.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, stopChild } from '../support/cli.js';
import { useTempFolder, dated } from '../support/files.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** The body of the README's first code block of this language. */
function block(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(README);
  if (!match?.[1]) throw new Error(`the README has no \`\`\`${language} block`);
  return match[1];
}

/** `NAME=value` lines (of a crontab, an environment file) as variables. */
function assignments(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((line) => /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null)
      .map(([, name, value]) => [name as string, value ?? '']),
  );
}

/** What systemd gives a system service's processes before the unit's own settings. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const PAYROLL =
  'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n' +
  'x-1,Ana,a@example.com,11987654321,52998224725,EMAIL,a@example.com,"10,00"\n' +
  'x-2,Bia,b@example.com,11987654321,52998224725,EMAIL,b@example.com,"20,00"\n';

describe('the README examples, as written, in a bare environment', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let srv: string;
  let bin: string;
  let envFile: string;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 100 });
    // 2. The home folder.
    srv = join(folder(), 'srv-payouts');
    mkdirSync(srv);
    // 1. `payouts` in /usr/local/bin, as `npm install -g` would put it.
    bin = join(folder(), 'usr-local-bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'payouts'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'payouts'), 0o755);
    // 3. /etc/payouts.env: the README's variables, with this sandbox's address and token.
    envFile = join(folder(), 'etc-payouts.env');
    const names = Object.keys(assignments(block('dotenv')));
    expect(names.sort()).toEqual(['PAYOUTS_BASE_URL', 'PAYOUTS_TOKEN']);
    writeFileSync(envFile, `PAYOUTS_BASE_URL=${sandbox.url}\nPAYOUTS_TOKEN=${TOKEN}\n`, {
      mode: 0o600,
    });
  });
  afterEach(() => sandbox.close());

  const here = (text: string) =>
    text
      .replaceAll('/srv/payouts', srv)
      .replaceAll('/usr/local/bin', bin)
      .replaceAll('/etc/payouts.env', envFile);

  /** A payroll exported a minute before cron's turn: settled. */
  const dropPayroll = () => {
    mkdirSync(join(srv, 'inbox'), { recursive: true });
    writeFileSync(join(srv, 'inbox', 'payroll.csv'), PAYROLL);
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(join(srv, 'inbox', 'payroll.csv'), minuteAgo, minuteAgo);
  };

  /** The crontab's job line run as cron runs it; its exit code and run.log. */
  const runCronLine = async (): Promise<{ code: number | null; log: string }> => {
    const lines = block('cron')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    // Lines that set a variable (PATH=…) are the crontab's environment; the other is the job.
    const isVariable = (line: string) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line);
    const job = lines.find((line) => !isVariable(line));
    expect(job).toBeDefined();
    // What cron gives a job, then the crontab's own NAME=value lines.
    const env = {
      HOME: folder(),
      LOGNAME: 'payouts',
      PATH: '/usr/bin:/bin',
      SHELL: '/bin/sh',
      ...Object.fromEntries(
        Object.entries(assignments(lines.filter(isVariable).join('\n'))).map(([name, value]) => [
          name,
          here(value),
        ]),
      ),
    };
    const command = here((job as string).trim().split(/\s+/).slice(5).join(' '));
    // Not spawnSync: the sandbox answers from this process, which must not be blocked.
    const shell = spawn('/bin/sh', ['-c', command], { env, stdio: 'ignore' });
    const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    const logFile = join(srv, 'run.log');
    return { code, log: existsSync(logFile) ? readFileSync(logFile, 'utf8') : '' };
  };

  it('the cron line pays a dropped file and logs the run', async () => {
    dropPayroll();
    const { code, log } = await runCronLine();
    expect(code, log).toBe(0);
    expect(existsSync(join(srv, 'archive', dated('payroll.csv')))).toBe(true);
    expect(existsSync(join(srv, 'results', dated('payroll.csv', 'result')))).toBe(true);
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['x-1', 1],
      ['x-2', 1],
    ]);
  });

  it.each([
    ['missing', /cannot open .*etc-payouts\.env/],
    ['empty', /no gateway is configured: baseUrl and token are missing/],
  ])(
    'the cron line with the environment file %s fails loudly and pays nothing, not even into a sandbox',
    async (how, said) => {
      if (how === 'missing') rmSync(envFile);
      else writeFileSync(envFile, '');
      dropPayroll();
      const { code, log } = await runCronLine();
      expect(code).not.toBe(0);
      expect(log).toMatch(said);
      expect(log).not.toContain('SANDBOX');
      expect(existsSync(join(srv, 'journal.db'))).toBe(false);
      expect(existsSync(join(srv, 'inbox', 'payroll.csv'))).toBe(true);
      expect(sandbox.ledger()).toHaveLength(0);
    },
  );

  /** The unit's settings, and the environment systemd would start ExecStart= with. */
  const readUnit = () => {
    const settings = block('ini')
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null);
    const values = (key: string) => settings.filter(([, k]) => k === key).map(([, , v]) => v ?? '');
    const environmentFiles = values('EnvironmentFile');
    // A leading "-" would start the unit without its gateway when the file is missing.
    expect(environmentFiles.length).toBeGreaterThan(0);
    for (const file of environmentFiles) expect(file.startsWith('-'), file).toBe(false);
    const env: Record<string, string> = {
      PATH: here(SYSTEMD_PATH),
      ...Object.fromEntries(
        values('Environment').map((pair) => {
          const [name, ...rest] = pair.split('=');
          return [name as string, here(rest.join('='))];
        }),
      ),
    };
    for (const file of environmentFiles)
      Object.assign(env, assignments(readFileSync(here(file), 'utf8')));
    const [program, ...args] = here(values('ExecStart')[0] ?? '').split(/\s+/);
    expect(program).toBe('/usr/bin/env');
    return {
      env,
      program: program as string,
      args,
      killSignal: values('KillSignal')[0] as NodeJS.Signals,
      stopWithinMs: Number.parseInt(values('TimeoutStopSec')[0] ?? '0', 10) * 1000,
    };
  };

  it('the systemd unit runs the daemon, which pays a dropped file and stops on its KillSignal', async () => {
    const unit = readUnit();
    // The receiver's port is the README's; a free one here, so the test never collides.
    unit.env['PAYOUTS_POSTBACK_LISTEN'] = '127.0.0.1:0';
    const daemon = spawn(unit.program, unit.args, {
      env: unit.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    dropPayroll();
    const until = Date.now() + 30_000;
    while (!existsSync(join(srv, 'archive', dated('payroll.csv')))) {
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
    expect(await stopChild(daemon, unit.killSignal)).toBe(0);
    expect(Date.now() - started).toBeLessThan(unit.stopWithinMs);
    expect([...ledgerCounts(sandbox)].sort()).toEqual([
      ['x-1', 1],
      ['x-2', 1],
    ]);
  });

  it('the systemd unit with an environment file that lacks the gateway: the daemon refuses to start', async () => {
    writeFileSync(envFile, '');
    const unit = readUnit();
    unit.env['PAYOUTS_POSTBACK_LISTEN'] = '127.0.0.1:0';
    dropPayroll();
    const daemon = spawn(unit.program, unit.args, {
      env: unit.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => daemon.once('exit', resolve));
    expect(code).toBe(1);
    expect(log).toContain('no gateway is configured: baseUrl and token are missing');
    expect(existsSync(join(srv, 'journal.db'))).toBe(false);
    expect(sandbox.ledger()).toHaveLength(0);
  });
});
