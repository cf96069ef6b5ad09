/**
 * The environment file, read by payouts itself (`--settings-file FILE` or `PAYOUTS_SETTINGS_FILE`),
 * as written: cron and systemd name it and read it alike, a phone with spaces and a token
 * with a `$` are kept whole, and a line it cannot take is said with its file and line.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';

/** A token as a gateway may issue it: a `$` that sh would expand. */
const DOLLAR_TOKEN = 'live$PAYOUTS_x$1';

/** A payroll export as accounting has it: no e-mail, no phone; one key is an e-mail. */
const EXPORT =
  'Nome;CPF;Chave Pix;Valor\n' +
  'Ana Souza;529.982.247-25;529.982.247-25;10,00\n' +
  'Bruno Lima;111.444.777-35;bruno@example.com;20,00\n';

describe('the environment file', { timeout: 30_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ token: DOLLAR_TOKEN, settleDelayMs: 10 });
  });
  afterAll(() => sandbox.close());

  const envFile = (lines: string[]) => {
    const home = join(folder(), 'home');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    const file = writeFile(folder(), 'payouts.env', lines.map((line) => `${line}\n`).join(''));
    return { home, file };
  };
  const goLive = () =>
    envFile([
      '# the settings every payouts process of this home reads',
      `PAYOUTS_HOME=${join(folder(), 'home')}`,
      `PAYOUTS_BASE_URL=${sandbox.url}`,
      `PAYOUTS_TOKEN=${DOLLAR_TOKEN}`,
      'PAYOUTS_RECIPIENT_EMAIL=folha@empresa.com.br',
      'PAYOUTS_RECIPIENT_PHONE=(11) 3333-4444',
      '',
      'PAYOUTS_LOG_LEVEL=silent',
      'PAYOUTS_INBOX_SETTLE=1ms',
    ]);

  it('named by --settings-file or PAYOUTS_SETTINGS_FILE: a phone with spaces and a token with a $ are read as written, and an export without contacts pays', async () => {
    const { home, file } = goLive();
    chmodSync(file, 0o644);
    const doctor = await runCli(['--settings-file', file, 'doctor']);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(doctor.stdout).toMatch(/^ok {4}gateway reached, token accepted: balance/m);
    expect(doctor.stdout).toContain(
      'recipient contacts: a row without an e-mail or a phone is sent with folha@empresa.com.br and (11) 3333-4444',
    );
    expect(doctor.stdout).toContain(`  recipientPhone = "(11) 3333-4444"  (${file} line 6)`);
    // A token every user of the machine may read is said, and still works.
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^WARN {2}token: ${file} \\(mode 0644\\) holds the token, and every user of this machine may read it: put the token alone in a file only the service user reads`,
        'm',
      ),
    );
    expect(doctor.stdout + doctor.stderr).not.toContain(DOLLAR_TOKEN);

    writeFile(join(home, 'inbox'), 'folha.csv', EXPORT);
    // As cron's line and the systemd unit have it: the variable names the file.
    const run = await runCli(['run'], { env: { PAYOUTS_SETTINGS_FILE: file } });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const paid = sandbox
      .ledger()
      .filter((entry) => entry.object === 'cashout')
      .map((entry) => [entry.valueCents, entry.status]);
    expect(paid.sort()).toEqual([
      [1000, 'paid'],
      [2000, 'paid'],
    ]);
  });

  it('the environment wins over the file, and says so', async () => {
    const { file } = goLive();
    const { stdout } = await runCli(['--settings-file', file, 'doctor'], {
      env: { PAYOUTS_CONCURRENCY: '4' },
    });
    expect(stdout).toContain('  concurrency = 4  (PAYOUTS_CONCURRENCY)');
    expect(stdout).toContain(`  home = "${join(folder(), 'home')}"  (${file} line 2)`);
  });

  it.each<[string, string[], RegExp]>([
    [
      'a line that is no assignment',
      ['export PAYOUTS_HOME=/srv/payouts'],
      /line 1: expected NAME=value/,
    ],
    [
      'a quoted value',
      ['PAYOUTS_HOME=/tmp', 'PAYOUTS_TOKEN="abc"'],
      /line 2: the value of PAYOUTS_TOKEN is in quotes, which would be read as part of it/,
    ],
    [
      'a name set twice',
      ['PAYOUTS_HOME=/a', 'PAYOUTS_HOME=/b'],
      /line 2: PAYOUTS_HOME is set again \(first on line 1\)/,
    ],
    [
      'a variable that is not a setting',
      ['LANG=pt_BR.UTF-8'],
      /line 1: LANG is not a payouts setting: this file holds PAYOUTS_\* settings only/,
    ],
    [
      'a misspelt setting',
      ['PAYOUTS_RECIPIENT_MAIL=a@b.com.br'],
      /unknown key "PAYOUTS_RECIPIENT_MAIL" in .*payouts\.env line 1; did you mean PAYOUTS_RECIPIENT_EMAIL\?/,
    ],
  ])('%s: exit 1, naming the file and the line; nothing runs', async (_what, lines, said) => {
    const { file } = envFile(lines);
    const result = await runCli(['--settings-file', file, 'run']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(said);
    expect(result.stderr).toContain(file);
  });

  it('a missing file: exit 1, never a run without its settings', async () => {
    const file = join(folder(), 'nope.env');
    const result = await runCli(['run'], { env: { PAYOUTS_SETTINGS_FILE: file } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot open the environment file ${file} (ENOENT)`);
  });

  it('doctor names the lines a shell would read otherwise, for a script that still loads the file with `.`', async () => {
    const { file } = goLive();
    writeFileSync(file, `${'PAYOUTS_LANGUAGE=pt-BR\n'}`, { flag: 'a' });
    const { code, stdout } = await runCli(['--settings-file', file, 'doctor']);
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^ok {4}environment file: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 8 settings read as written; a shell's \`\\.\` would read lines 4 \\(PAYOUTS_TOKEN\\) and 6 \\(PAYOUTS_RECIPIENT_PHONE\\) otherwise`,
        'm',
      ),
    );
  });
});
