/**
 * Four eyes trusts files by their owners: these tests try to let someone in through the
 * files themselves (a file others may write, a link, an approval's other name, a file
 * changed after its report) with real Unix users (made here with useradd, so only as root).
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import type { FileSummary } from '../../src/app/pass.js';
import { ensureFolders, homeFolders, isPayoutFileName } from '../../src/inbox/folders.js';
import { batchIn, decisionFiles } from '../../src/inbox/four-eyes.js';
import { CATALOGS } from '../../src/messages/catalog.js';
import { en } from '../../src/messages/en.js';
import { say } from '../../src/messages/say.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { paidByKey } from '../support/gateway.js';
import { IS_ROOT, nobodyReachesCheckout } from '../support/nobody.js';
import { ANA, BRUNO, HEADER } from '../support/folha.js';
import { passHome, type PassHome } from '../support/pass-home.js';
import { useUnixUsers } from '../support/unix-users.js';

// A few passes and a child run each: far from what they take, so a busy machine waits.
vi.setConfig({ testTimeout: 60_000 });

describe('approval files beside a waiting file', () => {
  const folder = useTempFolder();

  it('are matched by exact name, .txt from Notepad too, never another waiting file’s', () => {
    const names = [
      'folha.csv',
      'folha.csv.aprovado',
      'folha.csv.ana.aprovado',
      'folha.csv.bruno.aprovado.txt',
      'folha.csv2.aprovado',
      'folha.csv.aprovadox',
      'folha.csv.v2.csv',
      'folha.csv.v2.csv.aprovado',
      'folha.csv.v2.csv.ana.aprovado',
    ];
    for (const name of names) writeFileSync(join(folder(), name), 'K7QD-M2XA-P9RT\n');
    const of = (name: string) =>
      decisionFiles(folder(), name).map((path) => path.slice(folder().length + 1));
    expect(of('folha.csv')).toEqual([
      'folha.csv.ana.aprovado',
      'folha.csv.aprovado',
      'folha.csv.bruno.aprovado.txt',
    ]);
    expect(of('folha.csv.v2.csv')).toEqual([
      'folha.csv.v2.csv.ana.aprovado',
      'folha.csv.v2.csv.aprovado',
    ]);
    expect(isPayoutFileName('folha.csv.aprovado.txt')).toBe(false);
  });

  it("a report's batch is read beside its approval code, in either language, never from another line", () => {
    for (const words of Object.values(CATALOGS)) {
      const code = say(words, {
        code: 'fourEyesCode',
        approvalCode: 'K7QD-M2XA-P9RT',
        batchId: 12,
        count: 3,
        cents: 600_000,
      });
      expect(batchIn(`folha.csv (batch 7): waiting\n${code}\n`)).toBe(12);
    }
    expect(batchIn('folha.csv (batch 7): waiting for approval\n')).toBeUndefined();
  });

  it('under four eyes, the shared folders people leave files in are sticky', () => {
    const group = execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
    const folders = homeFolders(join(folder(), 'home'));
    const modeOf = (path: string) => (statSync(path).mode & 0o7777).toString(8);
    ensureFolders(folders, group, true);
    for (const each of [folders.inbox, folders.awaiting, folders.approved])
      expect(modeOf(each), each).toBe('3770');
    expect(modeOf(folders.results)).toBe('2750');
    ensureFolders(folders, group);
    expect(modeOf(folders.awaiting)).toBe('2770');
  });
});

describe.runIf(IS_ROOT)('four eyes, files nobody lets themselves in through', () => {
  const { users: USERS, ids } = useUnixUsers('ff', ['maria', 'ana', 'bruno']);
  type Who = keyof typeof USERS;

  const settings: Partial<Config> = {
    fourEyes: true,
    approvers: [USERS.maria, USERS.ana, USERS.bruno],
  };

  const own = (path: string, who: Who) => chownSync(path, ids[who].uid, ids[who].gid);
  const inbox = (home: PassHome) => join(home.folders.inbox, 'folha.csv');
  const waiting = (home: PassHome) => join(home.folders.awaiting, 'folha.csv');
  const codeOf = (home: PassHome) =>
    /Approval code: (\S+)/.exec(readFileSync(`${waiting(home)}.report.txt`, 'utf8'))?.[1] ?? '';

  /** The summary's words for folha.csv, in English. */
  const said = (files: FileSummary[]) =>
    files
      .filter((file) => file.file === 'folha.csv')
      .flatMap((file) => file.problems.map((problem) => say(en, problem)))
      .join('\n');

  /** A home with folha.csv dropped by maria and waiting, its report written. */
  async function waitingFile(): Promise<PassHome> {
    const home = await passHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    own(inbox(home), 'maria');
    expect((await home.run(settings)).exit).toBe(2);
    expect(existsSync(waiting(home))).toBe(true);
    return home;
  }

  /** What a person leaves in awaiting-approval/, as their own user. */
  function leaveApproval(home: PassHome, who: Who, name = `folha.csv.${USERS[who]}.aprovado`) {
    const path = join(home.folders.awaiting, name);
    writeFileSync(path, `${codeOf(home)}\n`, { mode: 0o640 });
    own(path, who);
    return path;
  }

  const batches = (home: PassHome) => home.withJournal((journal) => journal.batches());

  it('a dropped file others may change is left in the inbox, saying how to fix it', async () => {
    const home = await passHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    own(inbox(home), 'maria');
    chmodSync(inbox(home), 0o664);
    const run = await home.run(settings);
    expect(run.exit).toBe(2);
    expect(said(run.files)).toContain(
      'folha.csv is not taken: under four eyes the person who dropped a file is its owner, and others than its owner may change it (mode 0664): chmod 640 "folha.csv"',
    );
    expect(existsSync(inbox(home))).toBe(true);
    expect(await batches(home)).toEqual([]);
    chmodSync(inbox(home), 0o640);
    expect((await home.run(settings)).exit).toBe(2);
    expect(existsSync(waiting(home))).toBe(true);
  });

  it('a hard link to another person’s file is not taken as dropped by them', async () => {
    const home = await passHome();
    const elsewhere = join(dirname(home.folders.home), 'ana-folha.csv');
    writeFileSync(elsewhere, [HEADER, ANA, BRUNO].join('\r\n'));
    own(elsewhere, 'ana');
    linkSync(elsewhere, inbox(home));
    home.advance(60_000); // settled
    const run = await home.run(settings);
    expect(said(run.files)).toContain('it has 2 names (hard links)');
    expect(existsSync(inbox(home))).toBe(true);
    expect(await batches(home)).toEqual([]);
  });

  it('a symbolic link is not taken as dropped by its target’s owner', async () => {
    const home = await passHome();
    const elsewhere = join(dirname(home.folders.home), 'ana-folha.csv');
    writeFileSync(elsewhere, [HEADER, ANA, BRUNO].join('\r\n'));
    own(elsewhere, 'ana');
    symlinkSync(elsewhere, inbox(home));
    home.advance(60_000);
    const run = await home.run(settings);
    expect(said(run.files)).toContain('it is a symbolic link');
    expect(await batches(home)).toEqual([]);
    expect(paidByKey(home.sandbox).size).toBe(0);
  });

  it('an approval with another name too (a hard link) releases nothing', async () => {
    const home = await waitingFile();
    const path = leaveApproval(home, 'ana');
    linkSync(path, join(home.folders.awaiting, 'folha.csv.aprovado'));
    const run = await home.run(settings);
    expect(run.exit).toBe(2);
    expect(paidByKey(home.sandbox).size).toBe(0);
    expect(said(run.files)).toContain('it has other names too (hard links)');
  });

  it('an approval saved by Notepad as FILE.aprovado.txt counts', async () => {
    const home = await waitingFile();
    leaveApproval(home, 'ana', 'folha.csv.aprovado.txt');
    expect((await home.run(settings)).exit).toBe(0);
    expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
  });

  it('a waiting file changed after its report says so in the run, its report and status', async () => {
    const home = await waitingFile();
    const code = codeOf(home);
    appendFileSync(
      waiting(home),
      'Carla Dias,390.533.447-05,carla@example.com,,carla@example.com,"1,00"\r\n',
    );
    const run = await home.run(settings);
    expect(run.exit).toBe(2);
    const words = `folha.csv changed since its report: what it holds now was never checked, and no approval releases it (the approval code ${code} is of the file as it was reported). Drop the corrected file in the inbox again`;
    expect(said(run.files)).toContain(words);
    expect(readFileSync(`${waiting(home)}.report.txt`, 'utf8')).toContain(words);
    const status = await runCli(['status', 'folha.csv'], { env: home.env() });
    expect(status.stdout).toContain(words);
    expect(paidByKey(home.sandbox).size).toBe(0);
  });

  // /dev/shm is another file system than the temp folder: the file is copied, not linked.
  it.runIf(existsSync('/dev/shm'))(
    'a file copied in from an inbox on another disk is known by the bytes of its owner’s file',
    async () => {
      const home = await passHome();
      const elsewhere = mkdtempSync('/dev/shm/payouts-inbox-');
      try {
        const file = join(elsewhere, 'folha.csv');
        writeFileSync(file, [HEADER, ANA, BRUNO].join('\r\n'));
        own(file, 'maria');
        const past = new Date(Date.now() - 60_000);
        utimesSync(file, past, past);
        const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.ana };
        const run = await runCli(['run', '--inbox', elsewhere], { env });
        expect(run.code, run.stdout + run.stderr).toBe(2);
        expect(existsSync(file)).toBe(false);
        expect(statSync(waiting(home)).dev).not.toBe(statSync(elsewhere).dev);
        const status = await runCli(['status', 'folha.csv'], { env });
        expect(status.stdout).toContain(`dropped by ${USERS.maria} at `);
      } finally {
        rmSync(elsewhere, { recursive: true, force: true });
      }
    },
  );

  it.runIf(nobodyReachesCheckout())(
    'payouts approve never writes over an approval already there',
    async () => {
      const home = await waitingFile();
      const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.ana };
      for (const folder of [dirname(home.folders.home), home.folders.home])
        chmodSync(folder, 0o755);
      chmodSync(home.folders.awaiting, 0o777);
      const first = await runCli(['approve', 'folha.csv'], { env, user: ids.ana });
      expect(first.code, first.stderr).toBe(0);
      const path = join(home.folders.awaiting, `folha.csv.${USERS.ana}.aprovado`);
      writeFileSync(path, 'AAAA-BBBB-CCCC\n');
      const again = await runCli(['approve', 'folha.csv'], { env, user: ids.ana });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(
        `payouts approve: awaiting-approval/folha.csv.${USERS.ana}.aprovado is there already`,
      );
      expect(readFileSync(path, 'utf8')).toBe('AAAA-BBBB-CCCC\n');
    },
  );
});

describe.runIf(IS_ROOT && nobodyReachesCheckout())(
  'four eyes, a home whose settings come only from --settings-file',
  () => {
    const { users: USERS, ids } = useUnixUsers('fs', ['maria', 'ana']);
    const elsewhere = useTempFolder('payouts-elsewhere-');

    /** The words of a shell command line: double-quoted or bare, as sh splits these. */
    const wordsOf = (line: string) =>
      [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');

    /**
     * A home whose settings are only in a settings file, folha.csv dropped by maria and
     * waiting; `run` is the service's run with --settings-file, from no folder of the home.
     */
    async function waitingHome(language: string) {
      const home = await passHome();
      const settings = join(elsewhere(), 'payouts.env');
      const values = {
        ...home.env(),
        PAYOUTS_FOUR_EYES: 'true',
        PAYOUTS_APPROVERS: USERS.ana,
        PAYOUTS_INBOX_SETTLE: '1ms',
        PAYOUTS_LANGUAGE: language,
        PAYOUTS_LOG_LEVEL: 'silent',
      };
      writeFileSync(
        settings,
        Object.entries(values)
          .map(([key, value]) => `${key}=${value}\n`)
          .join(''),
        { mode: 0o644 },
      );
      const run = () => runCli(['--settings-file', settings, 'run']);
      home.drop('folha.csv', [HEADER, ANA, BRUNO]);
      chownSync(join(home.folders.inbox, 'folha.csv'), ids.maria.uid, ids.maria.gid);
      const first = await run();
      expect(first.code, first.stdout + first.stderr).toBe(2);
      return { home, run, report: join(home.folders.awaiting, 'folha.csv.report.txt') };
    }

    /** A command line as printed, run by ana as herself in a folder of her own, no PAYOUTS_* set. */
    async function runAsAna(home: PassHome, printed: string) {
      for (const folder of [dirname(home.folders.home), home.folders.home, elsewhere()])
        chmodSync(folder, 0o755);
      chmodSync(home.folders.awaiting, 0o777);
      const [command, ...args] = wordsOf(printed);
      expect(command).toBe('payouts');
      const result = await runCli(args, { user: ids.ana, cwd: elsewhere() });
      expect(result.code, `${printed}\n${result.stdout}${result.stderr}`).toBe(0);
    }

    const eventsOf = (home: PassHome) =>
      home.withJournal(async (journal) =>
        journal.batchEvents((await journal.batches())[0]?.id ?? 0),
      );

    it.each(['en', 'pt-BR'])(
      'the approve command the waiting file prints reaches the same home, as printed (%s)',
      async (language) => {
        const { home, run, report } = await waitingHome(language);
        const again = await run();
        const printed = /payouts approve "folha\.csv"[^;\n]*/.exec(again.stdout)?.[0] ?? '';
        expect(printed, again.stdout).not.toBe('');
        expect(readFileSync(report, 'utf8')).toContain(printed);
        await runAsAna(home, printed);

        const released = await run();
        expect(released.code, released.stdout + released.stderr).toBe(0);
        expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
        const approvals = (await eventsOf(home)).filter((event) => event.event === 'approved');
        expect(approvals.map((event) => event.by)).toEqual([USERS.ana]);
      },
    );

    it.each(['en', 'pt-BR'])(
      'the reject command a changed waiting file prints turns it down in the same home, as printed (%s)',
      async (language) => {
        const { home, run, report } = await waitingHome(language);
        appendFileSync(
          join(home.folders.awaiting, 'folha.csv'),
          'Carla Dias,390.533.447-05,carla@example.com,,carla@example.com,"1,00"\r\n',
        );
        const changed = await run();
        expect(changed.code, changed.stdout + changed.stderr).toBe(2);
        const printed = /payouts reject "folha\.csv"[^)\n]*/.exec(changed.stdout)?.[0] ?? '';
        expect(printed, changed.stdout).not.toBe('');
        expect(readFileSync(report, 'utf8')).toContain(printed);
        const status = await runCli([
          '--settings-file',
          join(elsewhere(), 'payouts.env'),
          'status',
          'folha.csv',
        ]);
        // status speaks English, with the flags it was given.
        expect(status.stdout).toContain(
          `payouts reject "folha.csv" --reason "why" --settings-file "${join(elsewhere(), 'payouts.env')}"`,
        );
        await runAsAna(home, printed);

        await run();
        expect(readdirSync(home.folders.rejected)).toContain('folha.csv');
        expect(paidByKey(home.sandbox).size).toBe(0);
        const refusals = (await eventsOf(home)).filter((event) => event.event === 'refused');
        expect(refusals.map((event) => event.by)).toEqual([USERS.ana]);
      },
    );
  },
);

describe.skipIf(IS_ROOT)('four eyes, files nobody lets themselves in through', () => {
  it.skip('needs root, to make the users with useradd', () => undefined);
});
