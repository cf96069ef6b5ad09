/**
 * Four eyes with real Unix users (made here with useradd, so only as root): the person
 * who drops a file never releases it, a large one needs two approvers, an approval binds
 * the file's bytes, and a file moved into approved/ by hand releases nothing. The
 * sandbox's ledger is the judge of what was paid. Each runs on SQLite and on PostgreSQL
 * (PAYOUTS_REQUIRE_POSTGRES=1 so the second cannot skip).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import type { FileSummary } from '../../src/app/pass.js';
import { en } from '../../src/messages/en.js';
import { say } from '../../src/messages/say.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { paidByKey } from '../support/gateway.js';
import { IS_ROOT, nobodyReachesCheckout } from '../support/nobody.js';
import { ANA, BRUNO, CARLA, HEADER } from '../support/folha.js';
import { passHomeStores, type PassHome } from '../support/pass-home.js';
import { planOf, recordStatements } from '../support/statements.js';
import { printedCommand } from '../support/printed.js';
import { useUnixUsers } from '../support/unix-users.js';

// A few passes and a child run each: far from what they take, so a busy machine waits.
vi.setConfig({ testTimeout: 60_000 });

describe.runIf(IS_ROOT)('four eyes, with real users', () => {
  const { tag, users: USERS, ids } = useUnixUsers('fe', ['maria', 'ana', 'bruno']);
  type Who = keyof typeof USERS;
  // PostgreSQL's cluster for this file starts only when its tests run (as root).
  describe.each(passHomeStores())('on %s', (store, newHome) => {
    const settings = (more: Partial<Config> = {}): Partial<Config> => ({
      fourEyes: true,
      approvers: [USERS.maria, USERS.ana, USERS.bruno],
      ...more,
    });

    /** A home with folha.csv dropped by maria and waiting, its report written. */
    async function waitingFile(more: Partial<Config> = {}, rows = [ANA, BRUNO]) {
      const home = await newHome();
      home.drop('folha.csv', [HEADER, ...rows]);
      chownSync(join(home.folders.inbox, 'folha.csv'), ids.maria.uid, ids.maria.gid);
      const first = await home.run(settings(more));
      expect(first.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      return home;
    }

    /** carla.csv dropped by maria beside what the home holds, and waiting. */
    async function waitingCarla(home: PassHome, more: Partial<Config>) {
      home.drop('carla.csv', [HEADER, CARLA]);
      chownSync(join(home.folders.inbox, 'carla.csv'), ids.maria.uid, ids.maria.gid);
      expect((await home.run(settings(more))).exit).toBe(2);
    }

    const waiting = (home: PassHome, file = 'folha.csv') => join(home.folders.awaiting, file);
    const codeOf = (home: PassHome, file = 'folha.csv') =>
      /Approval code: ([A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4})/.exec(
        readFileSync(`${waiting(home, file)}.report.txt`, 'utf8'),
      )?.[1] ?? '';

    /** What a person leaves in awaiting-approval/, as their own user. */
    function leaveApproval(home: PassHome, who: Who, code = codeOf(home), file = 'folha.csv') {
      const path = `${waiting(home, file)}.${USERS[who]}.aprovado`;
      writeFileSync(path, `${code}\n`, { mode: 0o640 });
      chownSync(path, ids[who].uid, ids[who].gid);
      return path;
    }

    /** The summary's words for folha.csv, in English. */
    const said = (files: FileSummary[]) =>
      files
        .filter((file) => file.file === 'folha.csv')
        .flatMap((file) => file.problems.map((problem) => say(en, problem)))
        .join('\n');

    const audit = (home: PassHome) =>
      home.withJournal(async (journal) => {
        const [batch] = await journal.batches('folha.csv');
        return (await journal.batchEvents(batch?.id ?? 0)).map((e) => [e.event, e.by]);
      });

    it('the report gives the code; the dropper cannot approve their own file; another approver can', async () => {
      const home = await waitingFile();
      expect(codeOf(home)).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      leaveApproval(home, 'maria');
      const own = await home.run(settings());
      expect(own.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(said(own.files)).toContain(
        `folha.csv.${USERS.maria}.aprovado (of ${USERS.maria}) releases nothing: ${USERS.maria} dropped the file, and may not approve it`,
      );
      expect(readFileSync(`${waiting(home)}.report.txt`, 'utf8')).toContain(
        `${USERS.maria} dropped the file, and may not approve it`,
      );
      leaveApproval(home, 'ana');
      const approved = await home.run(settings());
      expect(approved.exit).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
      expect(existsSync(waiting(home))).toBe(false);
      expect(await audit(home)).toEqual([
        ['dropped', USERS.maria],
        ['approved', USERS.ana],
      ]);
    });

    it('payouts run releases a file in the run that finds its approvals enough', async () => {
      const home = await waitingFile();
      leaveApproval(home, 'ana');
      const env = {
        ...home.env(),
        PAYOUTS_FOUR_EYES: 'true',
        PAYOUTS_APPROVERS: `${USERS.ana},${USERS.bruno}`,
      };
      const run = await runCli(['run'], { env });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
    });

    it('above secondApprovalAbove, one approver releases nothing and two do', async () => {
      const above = { secondApprovalAbove: 5_000_00 };
      const home = await waitingFile(above);
      const code = codeOf(home);
      leaveApproval(home, 'ana');
      const one = await home.run(settings(above));
      expect(one.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(said(one.files)).toContain(
        `approved so far by ${USERS.ana}; two approvers: its total R$ 6.000,00 is above secondApprovalAbove (R$ 5.000,00)`,
      );
      leaveApproval(home, 'bruno');
      const notes: string[] = [];
      const two = await home.run(settings(above), { note: (text) => notes.push(text) });
      expect(notes).toContain(
        `folha.csv: approved by ${USERS.ana} and ${USERS.bruno} (approval code ${code}); it is sent now`,
      );
      expect(two.exit).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
      expect(await audit(home)).toEqual([
        ['dropped', USERS.maria],
        ['approved', USERS.ana],
        ['approved', USERS.bruno],
      ]); // What an auditor reads: the file's own history, and the releases of the day.
      const env = home.env();
      const status = await runCli(['status', 'folha.csv'], { env });
      expect(status.stdout).toContain(`dropped by ${USERS.maria} at `);
      expect(status.stdout).toMatch(
        new RegExp(`approved by ${USERS.ana} at .*: approval code ${code}: 2 payouts`),
      );
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format();
      const releases = await runCli(['status', '--approvals', '--since', today], { env });
      expect(releases.code, releases.stderr).toBe(0);
      expect(releases.stdout).toMatch(
        new RegExp(
          `^batch 1  folha\\.csv  dropped by ${USERS.maria}  approved by ${USERS.ana} at \\S+, ${USERS.bruno} at \\S+  code ${code}  done: 2 paid \\(R\\$ 6\\.000,00\\)$`,
          'm',
        ),
      );
      const tomorrow = await runCli(['status', '--approvals', '--since', '2999-01-01'], { env });
      expect(tomorrow.stdout).toContain('No file was approved since 2999-01-01.');
      // An auditor reads it in their language, as the locale says.
      const pt = { ...env, LC_ALL: 'pt_BR.UTF-8' };
      const lista = await runCli(['status', '--approvals', '--since', today], { env: pt });
      expect(lista.stdout).toMatch(
        new RegExp(
          `^lote 1  folha\\.csv  deixado por ${USERS.maria}  aprovado por ${USERS.ana} em \\S+, ${USERS.bruno} em \\S+  código ${code}  done: pago: 2 \\(R\\$ 6\\.000,00\\)$`,
          'm',
        ),
      );
      const amanha = await runCli(['status', '--approvals', '--since', '2999-01-01'], { env: pt });
      expect(amanha.stdout).toContain('Nenhum arquivo foi aprovado desde 2999-01-01.');
    });

    it('beyond dailyLimit, a small file needs a second approver too', async () => {
      const limit = { dailyLimit: 7_000_00 };
      const home = await waitingFile(limit);
      leaveApproval(home, 'ana');
      expect((await home.run(settings(limit))).exit).toBe(0);
      await waitingCarla(home, limit);
      const code = codeOf(home, 'carla.csv');
      const approve = (who: Who) => leaveApproval(home, who, code, 'carla.csv');
      approve('ana');
      let one: Awaited<ReturnType<PassHome['run']>> | undefined;
      const ran = await recordStatements(async () => {
        one = await home.run(settings(limit));
      });
      if (!one) throw new Error('no pass');
      expect(one.exit).toBe(2);
      expect(paidByKey(home.sandbox).get('carla@example.com 445050')).toBeUndefined();
      if (store === 'SQLite') {
        // The day's approvals are a range of their index, never every batch's events.
        const plans = ran
          .filter(({ sql }) => /\bFROM batch_events\b/.test(sql))
          .map((statement) => planOf(home.folders.journal, statement).join('; '));
        expect(plans.filter((plan) => /\bSCAN batch_events\b/.test(plan))).toEqual([]);
        expect(plans.join('\n')).toContain('USING INDEX batch_events_approved_by_time (at>?)');
      }
      expect(
        one.files.flatMap((file) => file.problems.map((p) => say(en, p))).join('\n'),
      ).toContain(
        'two approvers: with R$ 6.000,00 approved today, it would pass dailyLimit (R$ 7.000,00)',
      );
      approve('bruno');
      const two = await home.run(settings(limit));
      expect(two.exit).toBe(0);
      expect(paidByKey(home.sandbox).get('carla@example.com 445050')).toBe(1);
    });

    it("beyond dailyLimit, only the day's approvals count: yesterday's do not", async () => {
      const limit = { dailyLimit: 7_000_00 };
      const home = await waitingFile(limit);
      leaveApproval(home, 'ana');
      expect((await home.run(settings(limit))).exit).toBe(0);
      home.advance(24 * 3_600_000);
      await waitingCarla(home, limit);
      leaveApproval(home, 'ana', codeOf(home, 'carla.csv'), 'carla.csv');
      expect((await home.run(settings(limit))).exit).toBe(0);
      expect(paidByKey(home.sandbox).get('carla@example.com 445050')).toBe(1);
    });

    it('beyond dailyLimit, files approved together before one run count each other', async () => {
      const limit = { dailyLimit: 7_000_00 };
      const home = await waitingFile(limit);
      await waitingCarla(home, limit);
      leaveApproval(home, 'ana', codeOf(home, 'carla.csv'), 'carla.csv');
      leaveApproval(home, 'ana');
      // R$ 6.000,00 and R$ 4.450,50 pass R$ 7.000,00 together: one approver releases one of them.
      const run = await home.run(settings(limit));
      expect(run.exit).toBe(2);
      const paid = paidByKey(home.sandbox);
      const folhaPaid = paid.get('ana@example.com 350000') === 1;
      const carlaPaid = paid.get('carla@example.com 445050') === 1;
      expect([folhaPaid, carlaPaid].filter(Boolean)).toHaveLength(1);
      expect(
        run.files.flatMap((file) => file.problems.map((p) => say(en, p))).join('\n'),
      ).toContain('would pass dailyLimit (R$ 7.000,00)');
    });

    it('a rejection left by an approver turns the file down; the dropper may withdraw their own', async () => {
      for (const who of ['ana', 'maria'] as const) {
        const home = await waitingFile();
        const path = `${waiting(home)}.${USERS[who]}.rejeitado`;
        writeFileSync(path, `${codeOf(home)}\nmês errado\n`, { mode: 0o640 });
        chownSync(path, ids[who].uid, ids[who].gid);
        const notes: string[] = [];
        const turned = await home.run(settings(), { note: (text) => notes.push(text) });
        expect(turned.exit).toBe(0);
        expect(paidByKey(home.sandbox).size).toBe(0);
        expect(notes).toContain(
          'folha.csv (batch 1): turned down and moved to rejected/; none of its rows will be sent. A corrected file may be dropped in the inbox.',
        );
        expect(readFileSync(join(home.folders.rejected, 'folha.csv.reason.txt'), 'utf8')).toBe(
          `${USERS[who]}: mês errado\n`,
        );
        expect(existsSync(path)).toBe(false);
        expect(await audit(home)).toEqual([
          ['dropped', USERS.maria],
          ['refused', USERS[who]],
        ]);
      }
    });

    it('an approval of a file changed since its report, or of another code, releases nothing', async () => {
      const home = await waitingFile();
      leaveApproval(home, 'ana', 'AAAA-BBBB-CCCC');
      const other = await home.run(settings());
      expect(other.exit).toBe(2);
      expect(said(other.files)).toContain(
        'it does not hold the approval code of the file as it is now',
      );
      leaveApproval(home, 'ana');
      appendFileSync(waiting(home), `${CARLA}\r\n`);
      const changed = await home.run(settings());
      expect(changed.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(said(changed.files)).toContain('the file changed since its report');
    });

    it('a file moved into approved/ by hand releases nothing: back to wait, saying how to approve', async () => {
      const home = await waitingFile();
      renameSync(waiting(home), join(home.folders.approved, 'folha.csv'));
      const notes: string[] = [];
      const moved = await home.run(settings(), { note: (text) => notes.push(text) });
      expect(moved.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(existsSync(waiting(home))).toBe(true);
      expect(notes).toContain(
        'folha.csv: moved into approved/ by hand, which under four eyes cannot say who released it: back in awaiting-approval/; its .report.txt says how to approve it',
      );
      expect(said(moved.files)).toContain(
        `leaves in awaiting-approval/ a file folha.csv.aprovado (or folha.csv.NAME.aprovado) holding its approval code ${codeOf(home)}, or runs under their own login: payouts approve "folha.csv"`,
      );
    });

    it('approvals journaled as enough, then the setting raised: the file waits for a second approver', async () => {
      const home = await waitingFile();
      leaveApproval(home, 'ana');
      const env = {
        ...home.env(),
        PAYOUTS_FOUR_EYES: 'true',
        PAYOUTS_APPROVERS: `${USERS.ana},${USERS.bruno}`,
      };
      // A run that journals ana's approval as enough, moves the file into approved/ and dies there.
      const crashed = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...env, PAYOUTS_FAILPOINT: 'releasing-approved' }),
        stdio: 'ignore',
      });
      const [, signal] = await once(crashed, 'exit');
      expect(signal).toBe('SIGKILL');
      expect(existsSync(join(home.folders.approved, 'folha.csv'))).toBe(true);
      expect(await audit(home)).toEqual([
        ['dropped', USERS.maria],
        ['approved', USERS.ana],
      ]);
      // The file's R$ 6.000,00 is now above the setting: one approver no longer releases it.
      const above = { secondApprovalAbove: 5_000_00 };
      const raised = await home.run(settings(above));
      expect(raised.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(existsSync(waiting(home))).toBe(true);
      expect(said(raised.files)).toContain('nothing of it is sent until two approvers (');
      expect(said(raised.files)).toContain(
        'two approvers: its total R$ 6.000,00 is above secondApprovalAbove (R$ 5.000,00)',
      );
      leaveApproval(home, 'ana');
      const one = await home.run(settings(above));
      expect(one.exit).toBe(2);
      expect(said(one.files)).toContain(`approved so far by ${USERS.ana}; two approvers`);
      leaveApproval(home, 'bruno');
      expect((await home.run(settings(above))).exit).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
    });

    it('an approval others may write releases nothing', async () => {
      const home = await waitingFile();
      chmodSync(leaveApproval(home, 'ana'), 0o666);
      const writable = await home.run(settings());
      expect(writable.exit).toBe(2);
      expect(said(writable.files)).toContain('others than its owner may write it');
      expect(paidByKey(home.sandbox).size).toBe(0);
    });

    it('payouts approve as the service user (here root) is refused; as an approver it leaves their approval', async () => {
      const home = await waitingFile();
      const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.ana };
      const asService = await runCli(['approve', 'folha.csv'], { env });
      expect(asService.code).toBe(1);
      expect(asService.stderr).toContain(
        'payouts approve: approvals are made by people under their own login, never as root',
      );
      expect(paidByKey(home.sandbox).size).toBe(0);
      if (!nobodyReachesCheckout()) return; // ana could not even start payouts here
      for (const folder of [dirname(home.folders.home), home.folders.home])
        chmodSync(folder, 0o755);
      chmodSync(home.folders.awaiting, 0o777);
      const asAna = await runCli(['approve', 'folha.csv'], { env, user: ids.ana });
      expect(asAna.code, asAna.stderr).toBe(0);
      expect(asAna.stdout).toContain(`your approval as ${USERS.ana} is in awaiting-approval/`);
      const released = await home.run(settings());
      expect(released.exit).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
      expect(await audit(home)).toEqual([
        ['dropped', USERS.maria],
        ['approved', USERS.ana],
      ]);
    });
    it.runIf(nobodyReachesCheckout())(
      'payouts reject as an approver leaves their rejection, with the reason',
      async () => {
        const home = await waitingFile();
        const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.bruno };
        for (const folder of [dirname(home.folders.home), home.folders.home])
          chmodSync(folder, 0o755);
        chmodSync(home.folders.awaiting, 0o777);
        const asBruno = await runCli(['reject', 'folha.csv', '--reason', 'valor errado'], {
          env,
          user: ids.bruno,
        });
        expect(asBruno.code, asBruno.stderr).toBe(0);
        expect(asBruno.stdout).toContain(
          `your rejection as ${USERS.bruno} is in awaiting-approval/`,
        );
        expect((await home.run(settings())).exit).toBe(0);
        expect(paidByKey(home.sandbox).size).toBe(0);
        expect(readFileSync(join(home.folders.rejected, 'folha.csv.reason.txt'), 'utf8')).toBe(
          `${USERS.bruno}: valor errado\n`,
        );
      },
    );

    /** folha.csv waiting (batch 1, Ana and Bruno), and another folha.csv waiting beside it (Carla). */
    async function twoWaitingOfOneName() {
      const home = await waitingFile();
      home.drop('folha.csv', [HEADER, CARLA]);
      chownSync(join(home.folders.inbox, 'folha.csv'), ids.maria.uid, ids.maria.gid);
      const both = await home.run(settings());
      expect(both.exit).toBe(2);
      // What the summary tells an approver to run for each batch, as a shell splits it.
      const printed = new Map(
        both.files.map((file) => [
          file.batchId,
          printedCommand(file.problems.map((problem) => say(en, problem)).join('\n'), 'approve'),
        ]),
      );
      const name = (await home.withJournal((journal) => journal.batchesIn('awaiting-approval')))
        .map((batch) => [batch.id, batch.awaitingName])
        .sort(([a], [b]) => Number(a) - Number(b));
      expect(name).toEqual([
        [expect.any(Number), 'folha.csv'],
        [expect.any(Number), 'folha [2].csv'],
      ]);
      for (const folder of [dirname(home.folders.home), home.folders.home])
        chmodSync(folder, 0o755);
      chmodSync(home.folders.awaiting, 0o777);
      const [first, second] = name.map(([id]) => Number(id));
      return { home, first: first ?? 0, second: second ?? 0, printed };
    }

    const decisionsLeft = (home: PassHome) =>
      readdirSync(home.folders.awaiting).filter((file) => /\.(aprovado|rejeitado)$/.test(file));

    it.runIf(nobodyReachesCheckout())(
      'two files of one name wait: approve --batch picks that one; without it, neither, listing both',
      async () => {
        const { home, first, second } = await twoWaitingOfOneName();
        const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.ana };
        const unpicked = await runCli(['approve', 'folha.csv'], { env, user: ids.ana });
        expect(unpicked.code).toBe(1);
        expect(unpicked.stderr).toContain(
          `2 files named folha.csv wait for an answer (batch ${first}, arrived `,
        );
        expect(unpicked.stderr).toContain(`; batch ${second}, arrived `);
        expect(unpicked.stderr).toContain(`payouts approve "folha.csv" --batch ${second}`);
        expect(decisionsLeft(home)).toEqual([]);

        const picked = await runCli(['approve', 'folha.csv', '--batch', String(second)], {
          env,
          user: ids.ana,
        });
        expect(picked.code, picked.stderr).toBe(0);
        expect(decisionsLeft(home)).toEqual([`folha [2].csv.${USERS.ana}.aprovado`]);
        expect((await home.run(settings())).exit).toBe(2);
        // Carla's file alone is paid; Ana's and Bruno's still waits.
        expect([...paidByKey(home.sandbox).entries()]).toEqual([['carla@example.com 445050', 1]]);
        expect(existsSync(waiting(home))).toBe(true);
      },
    );

    it.runIf(nobodyReachesCheckout())(
      "two files of one name wait: each one's command in the summary, run as printed, approves that one",
      async () => {
        const { home, first, second, printed } = await twoWaitingOfOneName();
        const env = { ...home.env(), PAYOUTS_FOUR_EYES: 'true', PAYOUTS_APPROVERS: USERS.ana };
        const firstLine = await runCli(printed.get(first) ?? [], { env, user: ids.ana });
        expect(firstLine.code, firstLine.stderr).toBe(0);
        expect(decisionsLeft(home)).toEqual([`folha.csv.${USERS.ana}.aprovado`]);
        expect((await home.run(settings())).exit).toBe(2);
        expect([...paidByKey(home.sandbox).keys()].sort()).toEqual([
          'ana@example.com 350000',
          'bruno@example.com 250000',
        ]);

        const secondLine = await runCli(printed.get(second) ?? [], { env, user: ids.ana });
        expect(secondLine.code, secondLine.stderr).toBe(0);
        expect(decisionsLeft(home)).toEqual([`folha [2].csv.${USERS.ana}.aprovado`]);
        expect((await home.run(settings())).exit).toBe(0);
        expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1, 1]);
      },
    );

    it.runIf(nobodyReachesCheckout())(
      'two files of one name wait: reject --batch turns that one down; without it, neither, in Portuguese too',
      async () => {
        const { home, first, second } = await twoWaitingOfOneName();
        const env = {
          ...home.env(),
          PAYOUTS_FOUR_EYES: 'true',
          PAYOUTS_APPROVERS: USERS.bruno,
          PAYOUTS_LANGUAGE: 'pt-BR',
        };
        const reason = ['--reason', 'valor errado'];
        const unpicked = await runCli(['reject', 'folha.csv', ...reason], { env, user: ids.bruno });
        expect(unpicked.code).toBe(1);
        expect(unpicked.stderr).toContain(
          `2 arquivos chamados folha.csv esperam uma resposta (lote ${first}, chegou `,
        );
        expect(unpicked.stderr).toContain(`payouts reject "folha.csv" --batch ${second}`);
        expect(decisionsLeft(home)).toEqual([]);

        const picked = await runCli(['reject', 'folha.csv', '--batch', String(second), ...reason], {
          env,
          user: ids.bruno,
        });
        expect(picked.code, picked.stderr).toBe(0);
        expect(decisionsLeft(home)).toEqual([`folha [2].csv.${USERS.bruno}.rejeitado`]);
        expect((await home.run(settings())).exit).toBe(2);
        expect(paidByKey(home.sandbox).size).toBe(0);
        // The first file still waits; the second was turned down.
        expect(existsSync(waiting(home))).toBe(true);
        expect(existsSync(waiting(home, 'folha [2].csv'))).toBe(false);
        const states = await home.withJournal(async (journal) => [
          (await journal.batch(first))?.state,
          (await journal.batch(second))?.state,
        ]);
        expect(states).toEqual(['awaiting-approval', 'refused']);
      },
    );

    /** The home and its journal open to the test's users, as a journal they may answer through. */
    function openToPeople(home: PassHome): void {
      for (const folder of [dirname(home.folders.home), home.folders.home])
        chmodSync(folder, 0o777);
      chmodSync(home.folders.awaiting, 0o777);
      for (const suffix of ['', '-wal', '-shm']) {
        const path = `${home.folders.journal}${suffix}`;
        if (existsSync(path)) chmodSync(path, 0o666);
      }
    }

    const fourEyesEnv = (home: PassHome, more: Record<string, string> = {}) => ({
      ...home.env(),
      PAYOUTS_FOUR_EYES: 'true',
      PAYOUTS_APPROVERS: Object.values(USERS).join(','),
      ...more,
    });

    /** How many times Ana was paid R$ 3.500,00. */
    const anaPaid = (home: PassHome) => paidByKey(home.sandbox).get('ana@example.com 350000') ?? 0;

    /** folha.csv with Ana's row twice, released by ana: her second row is held as identical. */
    async function releasedWithHeldRow(more: Partial<Config> = {}, by: Who[] = ['ana']) {
      const home = await waitingFile(more, [ANA, ANA, BRUNO]);
      for (const who of by) leaveApproval(home, who);
      await home.run(settings(more));
      expect(anaPaid(home)).toBe(1);
      return home;
    }

    it('an answer to held rows of a released file sends nothing: they go out only with approvers', async () => {
      const home = await releasedWithHeldRow();
      const env = fourEyesEnv(home);
      const answer = await runCli(['approve', 'folha.csv', '--identical'], { env });
      expect(answer.code, answer.stdout).toBe(1);
      expect(answer.stderr).toContain(
        `payouts approve: folha.csv (batch 1) was released by its approvers; under four eyes its held rows are sent only once approvers release them, and nobody else's answer frees them (${USERS.maria} dropped it). Answer while a file waits in awaiting-approval/, before its approvers release it, or drop these rows again in a new file, which waits for them. Who may approve: ${USERS.ana}, ${USERS.bruno}. Nothing was freed.`,
      );
      // A host with fourEyes off answers it no better: the file was dropped under four eyes.
      const off = await runCli(['approve', 'folha.csv', '--identical'], { env: home.env() });
      expect(off.code, off.stdout).toBe(1);
      await home.run(settings());
      expect(anaPaid(home)).toBe(1);
      expect(await audit(home)).toEqual([
        ['dropped', USERS.maria],
        ['approved', USERS.ana],
      ]);
    });

    it('an answer while the file waits is released by its approvers, the freed rows counted in its code', async () => {
      const home = await waitingFile({}, [ANA, ANA, BRUNO]);
      const before = codeOf(home);
      const answer = await runCli(['approve', 'folha.csv', '--identical'], {
        env: fourEyesEnv(home),
      });
      expect(answer.code, answer.stderr).toBe(0);
      await home.run(settings());
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(codeOf(home)).not.toBe(before);
      leaveApproval(home, 'ana', before);
      expect((await home.run(settings())).exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      leaveApproval(home, 'ana');
      expect((await home.run(settings())).exit).toBe(0);
      expect(anaPaid(home)).toBe(2);
    });

    it('approvers count by uid: a second name of one user is that user, never a second approver', async () => {
      const alias = `${tag}anna`;
      execFileSync('useradd', [
        ...['--non-unique', '--uid', String(ids.ana.uid), '--gid', String(ids.ana.gid)],
        ...['--no-create-home', '--shell', '/usr/sbin/nologin', alias],
      ]);
      try {
        // Named by her second name, ana is an approver; her two approvals are one person's.
        const above = { secondApprovalAbove: 5_000_00, approvers: [alias, USERS.bruno] };
        const home = await waitingFile(above);
        leaveApproval(home, 'ana');
        const path = `${waiting(home)}.${alias}.aprovado`;
        writeFileSync(path, `${codeOf(home)}\n`, { mode: 0o640 });
        chownSync(path, ids.ana.uid, ids.ana.gid);
        const one = await home.run(settings(above));
        expect(said(one.files)).toContain(`approved so far by ${USERS.ana};`);
        expect(one.exit).toBe(2);
        expect(paidByKey(home.sandbox).size).toBe(0);
        leaveApproval(home, 'bruno');
        expect((await home.run(settings(above))).exit).toBe(0);
        expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
        const uids = await home.withJournal(async (journal) =>
          (await journal.batchEvents(1)).flatMap((e) =>
            e.detail.code === 'eventFourEyesApproved' ? [e.detail.uid] : [],
          ),
        );
        expect(uids).toEqual([ids.ana.uid, ids.bruno.uid]);
      } finally {
        execFileSync('userdel', [alias]);
      }
    });

    it('a file dropped under four eyes is released by its approvals on a host with fourEyes off too', async () => {
      const home = await waitingFile();
      const off = { fourEyes: false, requireApproval: true };
      renameSync(waiting(home), join(home.folders.approved, 'folha.csv'));
      const byHand = await home.run(settings(off));
      expect(byHand.exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      expect(existsSync(waiting(home))).toBe(true);
      const env = { ...home.env(), PAYOUTS_REQUIRE_APPROVAL: 'true' };
      const approve = await runCli(['approve', 'folha.csv'], { env });
      expect(approve.code).toBe(1);
      expect(approve.stderr).toContain('folha.csv was dropped under four eyes');
      expect(paidByKey(home.sandbox).size).toBe(0);
      leaveApproval(home, 'maria');
      expect((await home.run(settings(off))).exit).toBe(2);
      expect(paidByKey(home.sandbox).size).toBe(0);
      leaveApproval(home, 'ana');
      expect((await home.run(settings(off))).exit).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);
    });
  });
});

describe.skipIf(IS_ROOT)('four eyes, with real users', () => {
  it.skip('needs root, to make the users with useradd', () => undefined);
});
