/**
 * `payouts doctor` against a real gateway (the sandbox over HTTP), a real home folder and
 * journal: green only when every check holds, and each failing check says what to do.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenPlaceCheck } from '../../src/cli/commands/doctor.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { TOKEN, closedPort, startLoopbackServer } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';

const PAYROLL =
  'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n' +
  'doc-1,Ana,a@example.com,11987654321,52998224725,EMAIL,a@example.com,"10,00"\n';

interface Doctor {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string }[];
  settings: { key: string; value: string; from: string }[];
}

describe('payouts doctor', { timeout: 30_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN });
  });
  afterAll(() => sandbox.close());

  const doctor = async (env: Record<string, string>, args: string[] = []) => {
    const text = await runCli(['doctor', ...args], { env });
    const json = await runCli(['doctor', '--json', ...args], { env });
    return { ...text, report: JSON.parse(json.stdout) as Doctor, jsonCode: json.code };
  };
  const check = (report: Doctor, name: string) => report.checks.find((c) => c.name === name);

  it('is green for a reachable gateway, an accepted token, a new home; shows each value and its source, never the token', async () => {
    const { env } = sandboxHome(folder(), sandbox.url);
    const { code, stdout, report, jsonCode } = await doctor({ ...env, LC_ALL: 'pt_BR.UTF-8' });
    expect(code, stdout).toBe(0);
    expect(jsonCode).toBe(0);
    expect(report.ok).toBe(true);
    expect(stdout).toMatch(
      /^ok {4}gateway: "http:\/\/127\.0\.0\.1:\d+" \(real: payouts move money\)$/m,
    );
    expect(stdout).toMatch(/^ok {4}gateway reached, token accepted: balance R\$ [\d.]+,\d\d$/m);
    expect(stdout).toMatch(/^ok {4}home: .* is writable; folders owner-only$/m);
    expect(stdout).toMatch(/^ok {4}journal: none yet: the first run makes .*journal\.db/m);
    expect(stdout).toContain('  token = (set, hidden)  (PAYOUTS_TOKEN)');
    expect(stdout).toContain('  concurrency = 16  (config/default.json)');
    // A language left to the locale names the variable that chose it.
    expect(stdout).toContain('  language = "pt-BR"  (the locale (LC_ALL=pt_BR.UTF-8))');
    expect(stdout + JSON.stringify(report)).not.toContain(TOKEN);
  });

  it('warns, with the settings to add, when rows without contacts would have none; exit 0', async () => {
    const { env } = sandboxHome(folder(), sandbox.url);
    const bare = await doctor(env);
    expect(bare.code, bare.stdout).toBe(0);
    expect(check(bare.report, 'recipient contacts')).toMatchObject({ ok: true, level: 'warn' });
    expect(bare.stdout).toMatch(
      /^WARN {2}recipient contacts: recipientEmail and recipientPhone are not set: .*Nome;CPF;Chave Pix;Valor.* is invalid and not paid, unless its Pix key is one: add PAYOUTS_RECIPIENT_EMAIL=.* and PAYOUTS_RECIPIENT_PHONE=.* to the environment file/m,
    );
    expect(bare.stderr).toContain('payouts doctor: every check holds, 1 with a warning');
    const phoneOnly = await doctor({ ...env, PAYOUTS_RECIPIENT_PHONE: '(11) 3333-4444' });
    expect(check(phoneOnly.report, 'recipient contacts')?.detail).toMatch(
      /^recipientEmail is not set: a row with no e-mail in its file .*: add PAYOUTS_RECIPIENT_EMAIL=folha@empresa\.com\.br to/,
    );
    const both = await doctor({
      ...env,
      PAYOUTS_RECIPIENT_EMAIL: 'folha@empresa.com.br',
      PAYOUTS_RECIPIENT_PHONE: '(11) 3333-4444',
    });
    expect(check(both.report, 'recipient contacts')).toMatchObject({ ok: true, level: 'ok' });
    expect(both.stdout).toMatch(
      /^ok {4}recipient contacts: a row without an e-mail or a phone is sent with folha@empresa\.com\.br and \(11\) 3333-4444$/m,
    );
    expect(both.stderr).not.toContain('warning');
  });

  it('after a run: the journal is this home own, its schema current; a lost journal is a failed check', async () => {
    const { home, env } = sandboxHome(folder(), sandbox.url, { PAYOUTS_INBOX_SETTLE: '1ms' });
    writeFile(join(home, 'inbox'), 'payroll.csv', PAYROLL);
    expect((await runCli(['run'], { env })).code).toBe(0);
    const after = await doctor(env);
    expect(after.code, after.stdout).toBe(0);
    expect(check(after.report, 'journal')?.detail).toMatch(
      /journal\.db: SQLite through better-sqlite3 \d+\.\d+\.\d+, schema \d+ \(current\), sends to a real gateway$/,
    );
    rmSync(join(home, 'journal.db'));
    const lost = await doctor(env);
    expect(lost.code).toBe(1);
    expect(check(lost.report, 'journal')).toMatchObject({ ok: false });
    expect(check(lost.report, 'journal')?.detail).toMatch(/journal .*journal\.db is missing/);
    expect(lost.stderr).toContain('payouts doctor: 1 of 5 checks failed; nothing was changed');
    expect(existsSync(join(home, 'journal.db'))).toBe(false);
  });

  it('a journal of a newer payouts is a failed check that says so; the journal is left as it was', async () => {
    const { home, env } = sandboxHome(folder(), sandbox.url, { PAYOUTS_INBOX_SETTLE: '1ms' });
    // An orderId of its own: the sandbox is shared, and one it has would be found at the first send.
    writeFile(join(home, 'inbox'), 'payroll.csv', PAYROLL.replace('doc-1', 'doc-newer-1'));
    const run = await runCli(['run'], { env });
    expect(run.code, run.stderr).toBe(0);
    const newer = new Database(join(home, 'journal.db'));
    newer.pragma('user_version = 999');
    newer.close();
    const files = readdirSync(home);
    const { code, report } = await doctor(env);
    expect(code).toBe(1);
    expect(check(report, 'journal')).toMatchObject({ ok: false });
    expect(check(report, 'journal')?.detail).toMatch(
      /journal\.db is at schema version 999, newer than this program knows \(\d+\)/,
    );
    expect(readdirSync(home)).toEqual(files);
  });

  it.each<[string, Record<string, string> | 'closed', RegExp]>([
    [
      'a refused token',
      { PAYOUTS_TOKEN: 'wrong-token' },
      /the token was refused .*: check PAYOUTS_TOKEN/,
    ],
    [
      'no gateway at the address',
      'closed',
      /no connection .*: check baseUrl, DNS and the firewall/,
    ],
  ])('%s fails the gateway check, exit 1', async (_what, change, said) => {
    const { env } = sandboxHome(folder(), sandbox.url);
    const settings =
      change === 'closed' ? { PAYOUTS_BASE_URL: `http://127.0.0.1:${await closedPort()}` } : change;
    const { code, report } = await doctor({ ...env, ...settings });
    expect(code).toBe(1);
    expect(check(report, 'gateway reached, token accepted')).toMatchObject({ ok: false });
    expect(check(report, 'gateway reached, token accepted')?.detail).toMatch(said);
  });

  it('a gateway that never answers: says first what it waits for and how long, then fails the check', async () => {
    const silent = await startLoopbackServer(() => undefined);
    try {
      const { env } = sandboxHome(folder(), silent.url, {
        PAYOUTS_CONNECT_TIMEOUT: '1s',
        PAYOUTS_REQUEST_TIMEOUT: '1s',
      });
      const { code, stdout, stderr } = await runCli(['doctor'], { env });
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^payouts doctor: reading the balance at "http:\/\/127\.0\.0\.1:\d+", to check the address and the token; waiting up to 2s \(connectTimeout \+ requestTimeout\)\n/,
      );
      expect(stdout).toMatch(/^FAIL {2}gateway reached, token accepted: /m);
    } finally {
      await silent.close();
    }
  });

  it('no gateway, or the sandbox on purpose: not ready to pay', async () => {
    const home = join(folder(), 'home');
    mkdirSync(home);
    const none = await doctor({ PAYOUTS_HOME: home });
    expect(none.code).toBe(1);
    expect(check(none.report, 'gateway')?.detail).toMatch(
      /^none is configured: set PAYOUTS_BASE_URL/,
    );
    const sandboxed = await doctor({ PAYOUTS_HOME: home }, ['--sandbox']);
    expect(sandboxed.code).toBe(1);
    expect(check(sandboxed.report, 'gateway')?.detail).toMatch(
      /^the embedded sandbox, where no real money moves/,
    );
    expect(sandboxed.report.settings).toContainEqual({
      key: 'gateway',
      value: '"sandbox"',
      from: '--sandbox',
    });
  });

  it('a missing home, or one every user may write in, fails the home check with what to do', async () => {
    const { home, env } = sandboxHome(folder(), sandbox.url);
    chmodSync(join(home, 'inbox'), 0o777);
    const open = await doctor(env);
    expect(open.code).toBe(1);
    expect(check(open.report, 'home')?.detail).toMatch(
      /inbox is writable by every user \(mode 0777\): chmod o-w/,
    );
    const missing = await doctor({ ...env, PAYOUTS_HOME: join(folder(), 'nope') });
    expect(check(missing.report, 'home')?.detail).toMatch(
      /nope is not a folder: make it, owned by the user that runs payouts \(mkdir -p/,
    );
    expect(existsSync(join(folder(), 'nope'))).toBe(false);
  });

  // A file an accountant saves with umask 077 (or a strict Samba mask) is theirs alone:
  // only a default ACL on the inbox makes every new file readable by the group.
  it('a shared inbox without a default ACL giving the group read fails, saying the setfacl that fixes it', async () => {
    const { home, env } = sandboxHome(folder(), sandbox.url);
    const group = execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
    const inbox = join(home, 'inbox');
    const shared = { ...env, PAYOUTS_SHARED_GROUP: group };
    const bare = await doctor(shared);
    expect(bare.code, bare.stdout).toBe(1);
    expect(check(bare.report, 'inbox')).toMatchObject({ ok: false });
    expect(bare.stdout).toContain(`FAIL  inbox: `);
    expect(check(bare.report, 'inbox')?.detail).toContain(
      `setfacl -d -m g::r,g:${group}:r ${inbox}`,
    );

    // A default ACL that leaves the group out is no better.
    execFileSync('setfacl', ['-d', '-m', 'u::rw,g::-,o::-', inbox]);
    expect((await doctor(shared)).code).toBe(1);

    execFileSync('setfacl', ['-d', '-m', `g:${group}:rw`, inbox]);
    const fixed = await doctor(shared);
    expect(fixed.code, fixed.stdout).toBe(0);
    expect(fixed.stdout).toMatch(/^ok {4}inbox: .*default ACL/m);
    // Under four eyes, a default ACL that lets the group write every dropped file fails.
    const fourEyes = { ...shared, PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: 'nobody' };
    const writable = await doctor(fourEyes);
    expect(writable.code, writable.stdout).toBe(1);
    expect(check(writable.report, 'inbox')?.detail).toContain(
      `its default ACL lets others than a file's owner change every file dropped in ${inbox}: under fourEyes such a file is not taken; set it read-only: setfacl -d -m g::r,g:${group}:r ${inbox}`,
    );
    execFileSync('setfacl', ['-d', '-m', `g::r,g:${group}:r`, inbox]);
    const readOnly = await doctor(fourEyes);
    expect(readOnly.code, readOnly.stdout).toBe(0);
    // Without a shared group only payouts' own user drops files: nothing to check.
    expect(check((await doctor(env)).report, 'inbox')).toBeUndefined();
  });
  it('under fourEyes: approvers must name users or groups that exist, and never the service user', async () => {
    const { env } = sandboxHome(folder(), sandbox.url);
    const service = userInfo().username;
    const fourEyes = (approvers: string) =>
      doctor({ ...env, PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: approvers });
    const none = await fourEyes('');
    expect(none.code).toBe(1);
    expect(check(none.report, 'four eyes')?.detail).toBe(
      'fourEyes is on and approvers names nobody: no file is ever released. Name who may approve in the settings file: PAYOUTS_APPROVERS=ana,bruno,@financeiro',
    );
    const unknown = await fourEyes('nosuch-ana,@nosuch-group');
    expect(unknown.code).toBe(1);
    expect(check(unknown.report, 'four eyes')?.detail).toBe(
      'approvers names no user or group of this machine: nosuch-ana is no user here; @nosuch-group is no group here. Nobody can approve: name existing users or groups (getent passwd NAME, getent group NAME)',
    );
    const some = await fourEyes('nobody,nosuch-ana');
    expect(some.code, some.stderr).toBe(0);
    expect(some.stdout).toContain(
      'WARN  four eyes: approvers: nobody; nosuch-ana is no user here: take it out of PAYOUTS_APPROVERS, or make that user',
    );
    const withService = await fourEyes(`nobody,${service}`);
    expect(withService.code).toBe(1);
    expect(check(withService.report, 'four eyes')?.detail).toBe(
      `approvers names ${service}, the user payouts runs as (or root): its approvals never count, and it would look like a second person. Take it out of PAYOUTS_APPROVERS`,
    );
    const fine = await fourEyes('nobody,@nogroup');
    expect(fine.stdout).toMatch(/^ok {4}four eyes: approvers: nobody, @nogroup$/m);
    // The server install's group holds the service user too: never counted, not a failure.
    const group = execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
    const throughGroup = await fourEyes(`nobody,@${group}`);
    expect(throughGroup.code, throughGroup.stdout).toBe(0);
    expect(check(throughGroup.report, 'four eyes')?.detail).toBe(
      `approvers: nobody, @${group}; ${service} (the user payouts runs as, or root) is never counted, though in @${group}`,
    );
  });
});

describe('where the token is kept', () => {
  const accounting = { group: 'accounting', gid: 1001 };
  const payouts = 999;
  it.each([
    [
      'a token file only the service reads',
      '/etc/payouts.secret',
      0o640,
      payouts,
      false,
      'ok',
      /^read from \/etc\/payouts\.secret, which the members of accounting may not read$/,
    ],
    [
      'a token file the group reads',
      '/etc/payouts.secret',
      0o640,
      accounting.gid,
      false,
      'warn',
      /every member of accounting may read it: chown root:payouts \/etc\/payouts\.secret; chmod 640/,
    ],
    [
      'a token file every user reads',
      '/etc/payouts.secret',
      0o644,
      payouts,
      false,
      'warn',
      /every user of this machine may read it: chown root:payouts/,
    ],
    [
      'the settings of last month: the token among them, for the service alone',
      '/etc/payouts.env',
      0o640,
      payouts,
      true,
      'ok',
      /^read from \/etc\/payouts\.env, with the other settings, .*replace PAYOUTS_TOKEN with PAYOUTS_TOKEN_FILE=\/etc\/payouts\.secret, and chown root:accounting \/etc\/payouts\.env$/,
    ],
    [
      'the settings, with the token, given to the group',
      '/etc/payouts.env',
      0o640,
      accounting.gid,
      true,
      'warn',
      /every member of accounting may read it: put the token alone in a file only the service user reads/,
    ],
  ] as const)('%s: %s', (_case, file, mode, gid, withSettings, level, detail) => {
    const check = tokenPlaceCheck({ file, mode, gid, shared: accounting, withSettings });
    expect(check.level).toBe(level);
    expect(check.detail).toMatch(detail);
  });
});
