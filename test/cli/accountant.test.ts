/**
 * An accountant checks a file as their own user, against the server's real settings and
 * what the service has paid: the settings but the token are the group's to read, and the
 * journal is weighed through the view the service writes for the group, never opened.
 * Needs root, to make a throwaway accountant and to run the service as `nobody`.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { IS_ROOT, NOBODY, nobodyReachesCheckout } from '../support/nobody.js';

/** The README's kind of export: no e-mail, no phone, Windows-1252, a distinct amount a row. */
const OCTOBER = [
  'Ana Conceição;529.982.247-25;529.982.247-25;1.000,01',
  'Bruno Lima;111.444.777-35;bruno@example.com;1.000,02',
  'Caio Araújo;390.533.447-05;390.533.447-05;1.000,03',
  'Débora Reis;123.456.789-09;123.456.789-09;1.000,04',
  'Edson Gonçalves;987.654.321-00;987.654.321-00;1.000,05',
  'Fábio Melo;246.813.579-28;246.813.579-28;1.000,06',
];
/** Its re-export with two more people: lines 2 to 5 repeat October's payouts. */
const REEXPORT = [...OCTOBER.slice(0, 4), 'Gil Souza;135.792.468-28;135.792.468-28;1.000,07'];
const exported = (rows: readonly string[]) =>
  Buffer.from(['Nome;CPF;Chave Pix;Valor', ...rows].join('\r\n') + '\r\n', 'latin1');

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe.runIf(IS_ROOT && nobodyReachesCheckout())(
  'an accountant checks a file as their own user',
  { timeout: 60_000 },
  () => {
    // A throwaway accountant in a throwaway group, the home's sharedGroup.
    const name = `acct${randomBytes(4).toString('hex')}`;
    const group = `${name}g`;
    let accountant: { uid: number; gid: number };
    let service: { uid: number; gid: number };
    beforeAll(() => {
      execFileSync('groupadd', [group]);
      execFileSync('useradd', [
        '--no-create-home',
        '--gid',
        group,
        '--shell',
        '/usr/sbin/nologin',
        name,
      ]);
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }));
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }));
      accountant = { uid, gid };
      // The service user, in the accounting group as the README makes it.
      service = { uid: NOBODY.uid, gid };
    });
    afterAll(() => {
      execFileSync('userdel', [name]);
      execFileSync('groupdel', [group]);
    });

    const folder = useTempFolder();
    let sandbox: Sandbox;
    beforeEach(async () => {
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    });
    afterEach(() => sandbox.close());

    /** The server as the README sets it up, under the test's folder. */
    const server = () => {
      chmodSync(folder(), 0o755);
      const home = join(folder(), 'srv');
      mkdirSync(home, { mode: 0o750 });
      chownSync(home, service.uid, service.gid);
      chmodSync(home, 0o750);
      const etc = join(folder(), 'etc');
      mkdirSync(etc, { mode: 0o755 });
      const secret = writeFile(etc, 'payouts.secret', `${TOKEN}\n`);
      // root:payouts 0640 on a server; the service's own here, a child has one group only.
      chownSync(secret, service.uid, 0);
      chmodSync(secret, 0o400);
      const settings = writeFile(
        etc,
        'payouts.env',
        [
          `PAYOUTS_HOME=${home}`,
          `PAYOUTS_SHARED_GROUP=${group}`,
          `PAYOUTS_BASE_URL=${sandbox.url}`,
          `PAYOUTS_TOKEN_FILE=${secret}`,
          'PAYOUTS_LANGUAGE=pt-BR',
          'PAYOUTS_RECIPIENT_EMAIL=folha@empresa.com.br',
          'PAYOUTS_RECIPIENT_PHONE=(11) 3333-4444',
          'PAYOUTS_INBOX_SETTLE=1ms',
          '',
        ].join('\n'),
      );
      chownSync(settings, 0, accountant.gid);
      chmodSync(settings, 0o640);
      // The accountant's own folder, as a restrictive umask leaves what they save.
      const desk = join(folder(), 'desk');
      mkdirSync(desk, { mode: 0o700 });
      chownSync(desk, accountant.uid, accountant.gid);
      const save = (file: string, rows: readonly string[]) => {
        const path = writeFile(desk, file, exported(rows));
        chownSync(path, accountant.uid, accountant.gid);
        chmodSync(path, 0o600);
        return path;
      };
      const env = { PAYOUTS_LOG_LEVEL: 'silent' };
      const asService = (args: string[]) =>
        runCli(['--settings-file', settings, ...args], { env, user: service });
      const asAccountant = (args: string[]) =>
        runCli(['--settings-file', settings, ...args], { env, user: accountant });
      /** The service's run of a file the accountant saved, dropped in its inbox. */
      const drop = (path: string, file: string) => {
        const inbox = join(home, 'inbox');
        mkdirSync(inbox, { recursive: true });
        chownSync(inbox, service.uid, service.gid);
        const dropped = join(inbox, file);
        copyFileSync(path, dropped);
        chownSync(dropped, service.uid, service.gid);
      };
      return { home, save, asService, asAccountant, drop };
    };
    const paidCents = () =>
      sandbox
        .ledger()
        .filter((entry) => entry.object === 'cashout' && entry.status === 'paid')
        .map((entry) => entry.valueCents)
        .sort();

    it('weighs it against what the service paid, in the settings language, with the verdicts the run gives; the journal untouched', async () => {
      const { home, save, asService, asAccountant, drop } = server();
      const october = save('folha-outubro.csv', OCTOBER);
      const fresh = await asAccountant(['validate', october]);
      expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
      expect(fresh.stdout).toContain(
        'folha-outubro.csv: 6 linhas: 6 válidas, 0 inválidas, 0 ignoradas',
      );

      drop(october, 'folha-outubro.csv');
      const paid = await asService(['run']);
      expect(paid.code, paid.stdout + paid.stderr).toBe(0);
      expect(paidCents()).toEqual([100001, 100002, 100003, 100004, 100005, 100006]);

      const journal = join(home, 'journal.db');
      // The journal stays the service's alone; its view is the group's to read.
      expect(statSync(journal)).toMatchObject({ uid: service.uid, mode: 0o100600 });
      expect(statSync(join(home, 'journal-view.db'))).toMatchObject({
        uid: service.uid,
        gid: accountant.gid,
        mode: 0o100640,
      });
      const before = { hash: sha256(journal), mtimeMs: statSync(journal).mtimeMs };
      const reexport = save('folha-outubro-final.csv', REEXPORT);
      const checked = await asAccountant(['validate', reexport]);
      expect(checked.code, checked.stdout + checked.stderr).toBe(2);
      expect(checked.stdout).toMatch(/Conferido com o que o serviço viu às \d\d:\d\d/);
      const json = await asAccountant(['--json', 'validate', reexport]);
      const report = JSON.parse(json.stdout) as {
        valid: number;
        held: number;
        holds: { line: number; rule: string }[];
      };
      expect(report.valid).toBe(5);
      expect(report.holds.map(({ line, rule }) => [line, rule])).toEqual([
        [2, 'possible duplicate'],
        [3, 'possible duplicate'],
        [4, 'possible duplicate'],
        [5, 'possible duplicate'],
      ]);
      expect({ hash: sha256(journal), mtimeMs: statSync(journal).mtimeMs }).toEqual(before);

      // The run gives the same verdicts: the four repeats held, the new row paid.
      drop(reexport, 'folha-outubro-final.csv');
      const run = await asService(['run']);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(paidCents()).toEqual([100001, 100002, 100003, 100004, 100005, 100006, 100007]);
    });

    it('with no view written yet (a service not run since the upgrade): says the file was not weighed, and still opens no journal', async () => {
      const { home, save, asService, asAccountant, drop } = server();
      const october = save('folha-outubro.csv', OCTOBER);
      drop(october, 'folha-outubro.csv');
      expect((await asService(['run'])).code).toBe(0);
      rmSync(join(home, 'journal-view.db'));
      const journal = join(home, 'journal.db');
      const before = { hash: sha256(journal), mtimeMs: statSync(journal).mtimeMs };

      const checked = await asAccountant(['validate', october]);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toContain(
        `Não conferido com o diário ${journal}: ele é só do serviço, que ainda não gravou a cópia que o grupo lê`,
      );
      const json = await asAccountant(['--json', 'validate', october]);
      expect(JSON.parse(json.stdout)).toMatchObject({
        journal: null,
        notWeighed: expect.stringMatching(/^Not weighed against the journal /),
      });
      expect({ hash: sha256(journal), mtimeMs: statSync(journal).mtimeMs }).toEqual(before);

      // A home the user may not enter at all (not shared with their group): the same.
      chmodSync(home, 0o700);
      const shut = await asAccountant(['validate', october]);
      expect(shut.code, shut.stdout + shut.stderr).toBe(0);
      expect(shut.stdout).toContain(`Não conferido com o diário ${journal}`);
    });
  },
);
