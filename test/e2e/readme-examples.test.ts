/**
 * The README's journey, as written, from a fresh copy of the checkout to the daemon:
 * `npm install` and `npm start`; the server install (`npm pack`, the global install of
 * the package, the home folder and the environment file, each command of the README run
 * by /bin/sh); the cron line run as cron runs it, as the service user; the systemd unit's
 * settings as systemd would start `ExecStart=`. The files dropped are exports without an
 * e-mail or a phone column, as accounting's usually are. Nothing is prepared that the README does
 * not tell its reader to prepare: only `/srv/payouts`, `/usr/local` (where node is, as on
 * a machine with Node installed there), `/etc/payouts.env`, the service user `payouts`
 * (here `nobody`) and the group `accounting` (here `nogroup`) are replaced, and the two
 * lines that add a system user and group are not run. Needs root (to switch users);
 * CI runs as root.
 */
import { spawn } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { stopChild } from '../support/cli.js';
import { dated } from '../support/files.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';
import { SOFFICE, readAsBrazilianSpreadsheet } from '../support/spreadsheet.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The README, then the server's guide it sends the operator to: their blocks in order.
const README = ['README.md', 'docs/server.md']
  .map((file) => readFileSync(join(ROOT, file), 'utf8'))
  .join('\n');
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const IS_ROOT = process.getuid?.() === 0;
/** The gateway's token, with a `$` as real ones may have: a shell would expand it. */
const SECRET = `${TOKEN}$HOME`;
const NOBODY = { uid: 65534, gid: 65534 };

/** The bodies of the README's code blocks of this language, in order. */
function blocks(language: string): string[] {
  const found = [...README.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))];
  if (found.length === 0) throw new Error(`the README has no \`\`\`${language} block`);
  return found.map((match) => match[1] as string);
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

/** A command to its end, its output kept; bounded, its whole process group ended on time-out. */
function sh(
  script: string,
  options: { cwd?: string; env: NodeJS.ProcessEnv; user?: typeof NOBODY },
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    // Not spawnSync: the sandbox answers from this process, which must not be blocked.
    const child = spawn('/bin/sh', ['-c', script], {
      cwd: options.cwd,
      env: options.env,
      ...options.user,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output += chunk.toString('utf8'));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    // An install compiles SQLite (about four minutes here, more on a busy machine): under
    // the 600 s its test may take, so a hang is said as one, with what it printed.
    const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 570_000);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output: signal ? `${output}\n(killed: ${signal})` : output });
    });
  });
}

/** The machine's own settings a root shell has (its CA and proxy), none of ours. */
const MACHINE = Object.fromEntries(
  ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']
    .flatMap((name) => [name, name.toLowerCase()])
    .filter((name) => process.env[name] !== undefined)
    .map((name) => [name, process.env[name]]),
);

describe.runIf(IS_ROOT)('the README, as written, from a fresh checkout to the daemon', () => {
  let sandbox: Sandbox;
  let top: string;
  let checkout: string;
  let srv: string;
  let usrLocal: string;
  let envFile: string;
  let secretFile: string;
  /** A root shell as a person has it on the server: their HOME, root's PATH. */
  let shell: NodeJS.ProcessEnv;

  const here = (text: string) =>
    text
      .replaceAll('/srv/payouts', srv)
      .replaceAll('/usr/local', usrLocal)
      .replaceAll('/etc/payouts.env', envFile)
      .replaceAll('/etc/payouts.secret', secretFile)
      .replace(/(-[ou]) payouts\b/g, '$1 nobody')
      .replace(/-g payouts\b/g, '-g nogroup')
      .replaceAll('accounting', 'nogroup');

  /** The environment file as the README shows it, with this sandbox's address, and its token file. */
  const writeEnvFile = (content?: string) => {
    const values = assignments(blocks('dotenv')[0] as string);
    values['PAYOUTS_BASE_URL'] = sandbox.url;
    writeFileSync(secretFile, `${SECRET}\n`);
    const text =
      content ??
      Object.entries(values)
        .map(([name, value]) => `${name}=${here(value)}\n`)
        .join('');
    writeFileSync(envFile, text);
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ token: SECRET, settleDelayMs: 100 });
    top = mkdtempSync(join(tmpdir(), 'payouts-readme-'));
    // mkdtemp makes it owner-only; the service user must reach what is inside.
    chmodSync(top, 0o755);
    srv = join(top, 'srv-payouts');
    usrLocal = join(top, 'usr-local');
    envFile = join(top, 'etc-payouts.env');
    secretFile = join(top, 'etc-payouts.secret');
    mkdirSync(join(usrLocal, 'bin'), { recursive: true });
    symlinkSync(process.execPath, join(usrLocal, 'bin', 'node'));
    shell = {
      ...MACHINE,
      HOME: process.env['HOME'],
      // root's PATH on Debian, with /usr/local standing in for the real one
      PATH: `${join(usrLocal, 'sbin')}:${join(usrLocal, 'bin')}:/usr/sbin:/usr/bin:/sbin:/bin`,
      LANG: 'C.UTF-8',
    };
    // A fresh clone: the files git knows (with today's edits), no node_modules, no dist/.
    checkout = join(top, 'checkout');
    const listed = await sh('git ls-files -z --cached --others --exclude-standard', {
      cwd: ROOT,
      env: shell,
    });
    expect(listed.code, listed.output).toBe(0);
    for (const file of listed.output.split('\0').filter((name) => name !== '')) {
      if (!existsSync(join(ROOT, file))) continue; // deleted, not yet committed
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      cpSync(join(ROOT, file), join(checkout, file));
    }
    // "Try it": its first command.
    const tryIt = (blocks('sh')[0] as string).split('\n').filter((line) => line.trim() !== '');
    expect(tryIt).toEqual(['npm install', 'npm start', 'npm test']);
    const installed = await sh('npm install', { cwd: checkout, env: shell });
    expect(installed.code, installed.output).toBe(0);
  }, 600_000);
  /** Accountants made for the test, removed after it. */
  const accountants: string[] = [];
  afterAll(async () => {
    await sandbox?.close();
    for (const name of accountants) await sh(`userdel ${name}`, { env: shell });
    if (top) rmSync(top, { recursive: true, force: true });
  });

  /** A real user whose group is accounting's stand-in, as `usermod -aG accounting` makes one. */
  async function newAccountant(n = 1): Promise<{ uid: number; gid: number }> {
    const name = `acct${n}x${process.pid}`;
    const made = await sh(
      `useradd -M -N -g nogroup -s /usr/sbin/nologin ${name} && id -u ${name}`,
      {
        env: shell,
      },
    );
    expect(made.code, made.output).toBe(0);
    accountants.push(name);
    return { uid: Number(made.output.trim().split('\n').at(-1)), gid: NOBODY.gid };
  }

  it('npm start runs the demo against the embedded sandbox, and leaves package-lock.json as it was', async () => {
    const demo = await sh('npm start', { cwd: checkout, env: shell });
    expect(demo.code, demo.output).toBe(0);
    expect(demo.output).toContain('SANDBOX: no real money moves');
    expect(demo.output).toMatch(/17 payouts reached the gateway, 0 of them twice/);
    expect(readFileSync(join(checkout, 'package-lock.json'), 'utf8')).toBe(
      readFileSync(join(ROOT, 'package-lock.json'), 'utf8'),
    );
  }, 120_000);

  it('installs on a server as written, then the cron line pays a dropped file as the service user, and accounting reads the result', async () => {
    // "Install on a server": every command, as root, in the checkout.
    const lines = (blocks('sh')[1] as string)
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    const systemAccounts = lines.filter((line) => /^(groupadd|useradd) /.test(line));
    expect(systemAccounts).toHaveLength(2);
    const script = lines.filter((line) => !systemAccounts.includes(line)).map(here);
    const install = await sh(['set -e', ...script].join('\n'), { cwd: checkout, env: shell });
    expect(install.code, install.output).toBe(0);
    expect(install.output).toContain(`${VERSION}\n`); // payouts --version, from PATH
    expect(statSync(join(usrLocal, 'bin', 'payouts')).isFile()).toBe(true);
    // Read by the service user's group, changed by root alone.
    expect(statSync(envFile)).toMatchObject({ uid: 0, gid: NOBODY.gid, mode: 0o100640 });
    expect(statSync(secretFile)).toMatchObject({ uid: 0, gid: NOBODY.gid, mode: 0o100640 });
    writeEnvFile();

    // Accounting drops a payroll without contacts, exported a minute before cron's turn.
    const inbox = join(srv, 'inbox');
    const dropped = (name: string) => {
      writeFileSync(join(inbox, name), withoutContacts(payrollFile(name.replace('.csv', ''), 2)));
      const minuteAgo = new Date(Date.now() - 60_000);
      utimesSync(join(inbox, name), minuteAgo, minuteAgo);
    };
    // The go-live checklist's lines, as root, in the checkout: payouts doctor is green.
    const [doctorLine, dryRunLine] = (blocks('sh')[2] as string)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(here);
    const doctor = await sh(doctorLine as string, { cwd: checkout, env: shell });
    expect(doctor.code, doctor.output).toBe(0);
    expect(doctor.output).toMatch(/^ok {4}gateway reached, token accepted/m);
    expect(doctor.output).toMatch(/^ok {4}recipient contacts: .* \(11\) 3333-4444$/m);
    // The stand-in gives the service user's group and accounting one group, nogroup: the
    // token file is then the sharing group's to read, which doctor says, and nothing else.
    expect(doctor.output.match(/^(WARN|FAIL).*$/gm)).toEqual([
      expect.stringMatching(
        /^WARN {2}token: .*etc-payouts\.secret \(mode 0640, group nogroup\) holds the token, and every member of nogroup may read it/,
      ),
    ]);
    expect(doctor.output).not.toContain(TOKEN);
    // payouts makes inbox/ on first use: the first cron turn, with an empty inbox.
    expect((await cronLine()).code).toBe(0);
    // Sticky under four eyes, as the environment file sets it: nobody moves another's file.
    expect(statSync(inbox)).toMatchObject({ gid: NOBODY.gid, mode: 0o43770 });
    dropped('payroll.csv');
    // The first file through --dry-run: weighed, nothing sent.
    const rehearsal = await sh(dryRunLine as string, { cwd: checkout, env: shell });
    expect(rehearsal.code, rehearsal.output).toBe(0);
    expect(rehearsal.output).toContain('payroll.csv');
    expect(sandbox.ledger()).toEqual([]);
    // Four eyes, as the environment file sets it: the file waits for an accountant's approval.
    const waits = await cronLine();
    expect(waits.code, waits.log).toBe(2);
    expect(sandbox.ledger()).toEqual([]);
    const accountant = await newAccountant();
    await approveAs(accountant, 'payroll.csv');
    const { code, log } = await cronLine();
    expect(code, log).toBe(0);
    expect(existsSync(join(srv, 'archive', dated('payroll.csv')))).toBe(true);
    const resultPath = join(srv, 'results', dated('payroll.csv', 'result'));
    expect(statSync(join(srv, 'results'))).toMatchObject({ gid: NOBODY.gid, mode: 0o42750 });
    expect(statSync(resultPath).gid).toBe(NOBODY.gid);
    expect(statSync(join(srv, 'journal.db'))).toMatchObject({ uid: NOBODY.uid, mode: 0o100600 });
    // Read back as a member of accounting would: the excel dialect, a line per row.
    const rows = parse(readFileSync(resultPath), {
      bom: true,
      columns: true,
      delimiter: ';',
    }) as Record<string, string>[];
    // In Portuguese, as the README's environment file sets for accounting.
    expect(rows.map((row) => [row['ID do pagamento'], row['Situação']])).toEqual([
      ['payroll-0', 'pago'],
      ['payroll-1', 'pago'],
    ]);
    expect(paidOnce('payroll')).toEqual([
      ['payroll-0', 1],
      ['payroll-1', 1],
    ]);

    // A member of accounting, as their own user: the README's kind of export (Windows-1252,
    // no contacts) checked with validate against the server's settings, then copied into
    // the inbox with a umask that leaves it readable by its owner alone. The inbox's default
    // ACL lets the service read it; cron's line pays it.
    const own = join(top, 'contabilidade');
    mkdirSync(own);
    chownSync(own, accountant.uid, accountant.gid);
    const exported = join(own, 'folha-2026-11.csv');
    writeFileSync(
      exported,
      Buffer.from(
        'Nome;CPF;Chave Pix;Valor\r\nJosé da Conceição;529.982.247-25;jose@example.com;1.234,56\r\n',
        'latin1',
      ),
    );
    chownSync(exported, accountant.uid, accountant.gid);
    const asAccountant = {
      env: { PATH: `${join(usrLocal, 'bin')}:/usr/bin:/bin`, HOME: own, LANG: 'C.UTF-8' },
      cwd: own,
      user: accountant,
    };
    const checkLine = /^\$ (payouts --settings-file \S+ validate .*)$/m.exec(README)?.[1];
    expect(checkLine).toBeDefined();
    const check = await sh(here(checkLine as string), asAccountant);
    expect(check.code, check.output).toBe(0);
    expect(check.output).toContain('R$ 1.234,56');
    expect(check.output).toContain('Conferido com o que o serviço viu');
    const copied = await sh(`umask 077 && cp folha-2026-11.csv ${inbox}/`, asAccountant);
    expect(copied.code, copied.output).toBe(0);
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(join(inbox, 'folha-2026-11.csv'), minuteAgo, minuteAgo);
    // Dropped by this accountant: another approves it.
    expect((await cronLine()).code).toBe(2);
    await approveAs(await newAccountant(2), 'folha-2026-11.csv');
    const paid = await cronLine();
    expect(paid.code, paid.log).toBe(0);
    expect(
      sandbox
        .ledger()
        .filter((entry) => entry.object === 'cashout' && entry.pixKey === 'jose@example.com'),
    ).toHaveLength(1);
    // Both times of the result, as Calc reads them in pt-BR: date-times, in São Paulo.
    if (SOFFICE || process.env['PAYOUTS_REQUIRE_LIBREOFFICE']) {
      const [heading, line] = await readAsBrazilianSpreadsheet(
        join(srv, 'results', dated('folha-2026-11.csv', 'result')),
      );
      const cellOf = (name: string) =>
        line?.[heading?.findIndex((cell) => cell.value === name) ?? -1];
      for (const name of ['Criado em', 'Processado em']) {
        const cell = cellOf(name);
        expect(cell?.type, name).toBe('date');
        const instant = Date.parse(`${String(cell?.value)}-03:00`);
        expect(Math.abs(instant - Date.now()), name).toBeLessThan(10 * 60_000);
      }
    }

    // The same line with the environment file missing, then empty: loud, and nothing paid.
    const paidBefore = sandbox.ledger().length;
    for (const [how, said] of [
      ['missing', /cannot open the environment file .*etc-payouts\.env/],
      ['empty', /no gateway is configured: baseUrl and token are missing/],
    ] as const) {
      if (how === 'missing') rmSync(envFile);
      else writeEnvFile('');
      dropped(`${how}.csv`);
      const failed = await cronLine();
      expect(failed.code, how).not.toBe(0);
      expect(failed.log).toMatch(said);
      expect(failed.log).not.toContain('SANDBOX');
      expect(existsSync(join(inbox, `${how}.csv`))).toBe(true);
    }
    expect(sandbox.ledger()).toHaveLength(paidBefore);
    rmSync(join(inbox, 'missing.csv'));
    rmSync(join(inbox, 'empty.csv'));
    writeEnvFile();

    // The systemd unit, as systemd would start it: the daemon pays, then stops on its signal.
    const unit = readUnit();
    const daemon = spawn(unit.program, unit.args, {
      env: unit.env,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...NOBODY,
    });
    let daemonLog = '';
    daemon.stderr.on('data', (chunk: Buffer) => (daemonLog += chunk.toString('utf8')));
    try {
      dropped('bonus.csv');
      const report = join(srv, 'awaiting-approval', 'bonus.csv.report.txt');
      const reported = Date.now() + 30_000;
      while (!existsSync(report)) {
        if (Date.now() > reported) throw new Error(`no report; daemon log:\n${daemonLog}`);
        await delay(100);
      }
      await approveAs(accountant, 'bonus.csv');
      const until = Date.now() + 30_000;
      while (!existsSync(join(srv, 'archive', dated('bonus.csv')))) {
        if (Date.now() > until) throw new Error(`not archived; daemon log:\n${daemonLog}`);
        await delay(100);
      }
      daemon.kill('SIGUSR2');
      const asked = Date.now();
      while (!daemonLog.includes('"msg":"health"') && Date.now() - asked < 5_000) await delay(50);
      expect(daemonLog).toContain('"msg":"health"');
    } finally {
      const started = Date.now();
      expect(await stopChild(daemon, unit.killSignal)).toBe(0);
      expect(Date.now() - started).toBeLessThan(unit.stopWithinMs);
    }
    expect(paidOnce('bonus')).toEqual([
      ['bonus-0', 1],
      ['bonus-1', 1],
    ]);

    // The unit with an environment file that lacks the gateway: the daemon refuses to start.
    writeEnvFile('');
    const refused = readUnit();
    const lacking = spawn(refused.program, refused.args, {
      env: refused.env,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...NOBODY,
    });
    let lackingLog = '';
    lacking.stderr.on('data', (chunk: Buffer) => (lackingLog += chunk.toString('utf8')));
    const lackingCode = await new Promise<number | null>((resolve) =>
      lacking.once('exit', resolve),
    );
    expect(lackingCode).toBe(1);
    expect(lackingLog).toContain('no gateway is configured: baseUrl and token are missing');
  }, 600_000);

  /** The guide's approval, run by an accountant as their own user in their own folder. */
  async function approveAs(accountant: { uid: number; gid: number }, file: string) {
    const line = /^\$ (payouts --settings-file \S+ approve) /m.exec(README)?.[1];
    expect(line).toBeDefined();
    const approved = await sh(here(`${line as string} ${file}`), {
      env: { PATH: `${join(usrLocal, 'bin')}:/usr/bin:/bin`, HOME: top, LANG: 'C.UTF-8' },
      cwd: top,
      user: accountant,
    });
    expect(approved.code, approved.output).toBe(0);
    expect(approved.output).toContain('awaiting-approval/');
  }

  /** A payroll as exported without contacts: its e-mail and phone columns dropped. */
  const withoutContacts = (text: string) =>
    text
      .split('\n')
      .map((line) =>
        line
          .split(',')
          .filter((_, column) => column !== 2 && column !== 3)
          .join(','),
      )
      .join('\n');

  /** How many times the gateway has each payout of this file. */
  const paidOnce = (prefix: string) =>
    [...ledgerCounts(sandbox)].filter(([id]) => id.startsWith(`${prefix}-`)).sort();

  /** The crontab's job line run as cron runs it, as the service user; exit code and run.log. */
  async function cronLine(): Promise<{ code: number; log: string }> {
    const lines = (blocks('cron')[0] as string)
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    const isVariable = (line: string) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line);
    const job = lines.find((line) => !isVariable(line));
    expect(job).toBeDefined();
    // What cron gives a job, then the crontab's own NAME=value lines.
    const env = {
      HOME: srv,
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
    const { code } = await sh(command, { env, user: NOBODY });
    const logFile = join(srv, 'run.log');
    return { code, log: existsSync(logFile) ? readFileSync(logFile, 'utf8') : '' };
  }

  /** The unit's settings, and the environment systemd would start ExecStart= with. */
  function readUnit() {
    const unitFile = blocks('ini').find((block) => block.includes('[Service]'));
    expect(unitFile, 'the README has no systemd unit').toBeDefined();
    const settings = (unitFile as string)
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null);
    const values = (key: string) => settings.filter(([, k]) => k === key).map(([, , v]) => v ?? '');
    expect(values('User')).toEqual(['payouts']);
    expect(values('Wants')).toEqual(['network-online.target']);
    // systemd would read the file by rules of its own; payouts reads it, as from cron.
    expect(values('EnvironmentFile')).toEqual([]);
    expect(values('ExecStart')[0]).toContain('--settings-file /etc/payouts.env');
    const env: Record<string, string> = {
      PATH: here(SYSTEMD_PATH),
      ...Object.fromEntries(
        values('Environment').map((pair) => {
          const [name, ...rest] = pair.split('=');
          return [name as string, here(rest.join('='))];
        }),
      ),
    };
    const [program, ...args] = here(values('ExecStart')[0] ?? '').split(/\s+/);
    return {
      env,
      program: program as string,
      args,
      killSignal: values('KillSignal')[0] as NodeJS.Signals,
      stopWithinMs: Number.parseInt(values('TimeoutStopSec')[0] ?? '0', 10) * 1000,
    };
  }
});
