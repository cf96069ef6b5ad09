import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { markersIn } from '../../src/journal/marker.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { QUICK_TIMEOUTS } from '../support/home.js';
import { JOURNAL_STORES, countsOf } from '../support/journal-stores.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { payrollFile } from '../support/payroll.js';
import { waitForStopped } from '../support/wait.js';

describe.each(JOURNAL_STORES)(
  'a missing, emptied, replaced or older journal in %s never pays anyone again',
  { timeout: 120_000 },
  (_, store) => {
    const folder = useTempFolder();
    let sandbox: Sandbox;
    let home: string;
    let env: Record<string, string>;

    beforeEach(async () => {
      // The ledger outlives every run of a test: it is the gateway's memory, not ours.
      sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 100, faults: { latencyMs: 5 } });
      ({ home, env } = store.home(folder(), sandbox.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
        ...QUICK_TIMEOUTS,
      }));
    });
    afterEach(() => sandbox.close());

    const drop = (name: string, content: string) =>
      writeFileSync(join(home, 'inbox', name), content);

    const duplicates = () => [...ledgerCounts(sandbox).entries()].filter(([, n]) => n > 1);

    /** Rows the journal has not finished sending. */
    const unfinished = async () => {
      const counts = (await store.read(home, countsOf)) ?? {};
      return (counts.queued ?? 0) + (counts.sending ?? 0) + (counts.unknown ?? 0);
    };

    /** Reruns until nothing is left to send (bounded), waiting out leases and grace periods. */
    const runToCompletion = async (args: readonly string[] = ['run']) => {
      for (let attempt = 0; attempt < 12; attempt++) {
        const result = await runCli(args, { env });
        expect([0, 2, 3], result.stderr).toContain(result.code);
        if ((await unfinished()) === 0) return;
        await delay(2500);
      }
      throw new Error(`rows still unfinished: ${await unfinished()}`);
    };

    /** A run that must refuse: exit 1, nothing new at the gateway, and what to do. */
    const expectRefused = async (what: RegExp) => {
      const before = sandbox.ledger().length;
      const result = await runCli(['run'], { env });
      expect(result.code, result.stderr + result.stdout).toBe(1);
      expect(result.stderr).toMatch(what);
      expect(result.stderr).toContain('nothing was sent');
      expect(result.stderr).toContain(store.backupSaid);
      expect(result.stderr).toContain('payouts run --recover');
      expect(sandbox.ledger()).toHaveLength(before);
      return result;
    };

    /** `run --recover` adopts what the gateway has: `paid` payouts there, each once. */
    const expectRecovered = async (paid: number) => {
      const recovered = await runCli(['run', '--recover', '--follow-timeout', '20s'], { env });
      expect(recovered.code, recovered.stderr).toBe(0);
      expect(recovered.stderr).toContain('recovery');
      expect(duplicates()).toEqual([]);
      expect(sandbox.ledger()).toHaveLength(paid);
      // From then on the recovered journal runs as usual.
      const after = await runCli(['run'], { env });
      expect(after.code, after.stderr).toBe(0);
    };

    /** Runs until the failpoint kills it; fails the test if the run ends any other way. */
    const crashAt = async (failpoint: string) => {
      const child = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...env, PAYOUTS_FAILPOINT: failpoint }),
        stdio: 'ignore',
      });
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        child.once('exit', (...end) => resolve(end)),
      );
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
    };

    /** `remake`: what the refusal asks before recovering (the store made again, for a lost one). */
    const lostAfterAFinishedRun = async (
      lose: (home: string) => void,
      what: RegExp,
      remake: (home: string) => void = () => undefined,
    ) => {
      drop('payroll.csv', payrollFile('f', 20));
      const first = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(first.code, first.stderr).toBe(0);
      expect(readdirSync(join(home, 'archive'))).toHaveLength(1);
      lose(home);
      drop('payroll.csv', payrollFile('f', 20));
      await expectRefused(what);
      // Refused again: the choice is a person's, never made by a rerun.
      await expectRefused(what);
      // A dry run says the same, rather than promising to pay everything again.
      const dry = await runCli(['run', '--dry-run'], { env });
      expect(dry.code, dry.stdout).toBe(1);
      expect(dry.stderr).toMatch(what);
      const status = await runCli(['status'], { env });
      expect(status.stderr).toMatch(what);

      remake(home);
      await expectRecovered(20);
    };
    it('journal deleted after a finished run, the same file dropped again: refused; --recover adopts every row', () =>
      lostAfterAFinishedRun(store.lose, store.lostSaid, store.remake));
    it('journal emptied after a finished run, the same file dropped again: refused; --recover adopts every row', () =>
      lostAfterAFinishedRun(store.empty, /is empty/));

    it('journal and marker both deleted, the home has archived files: refused', async () => {
      drop('payroll.csv', payrollFile('m', 5));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      store.lose(home);
      for (const marker of markersIn(home)) rmSync(marker, { force: true });
      drop('payroll.csv', payrollFile('m', 5));
      await expectRefused(store.lostSaid);
      expect(sandbox.ledger()).toHaveLength(5);
    });

    it('journal and marker lost, a journal with nothing in it left in its place (a SQLite file of no tables, a database of no journal schema): refused', async () => {
      drop('payroll.csv', payrollFile('n', 5));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      store.lose(home);
      for (const marker of markersIn(home)) rmSync(marker, { force: true });
      store.blank(home);
      drop('payroll.csv', payrollFile('n', 5));
      await expectRefused(store.blankSaid);
      expect(sandbox.ledger()).toHaveLength(5);
    });

    it('a journal with no marker beside it (a home from before markers) is adopted as it is', async () => {
      drop('a.csv', payrollFile('u', 5));
      expect((await runCli(['run'], { env })).code).toBe(3);
      // A home's own marker on SQLite; each host's beside it on PostgreSQL.
      const markers = markersIn(home).filter((marker) => existsSync(marker));
      expect(markers).toHaveLength(1);
      for (const marker of markers) rmSync(marker);
      drop('b.csv', payrollFile('v', 5));
      expect((await runCli(['run'], { env })).code).toBe(3);
      expect(markersIn(home).filter((marker) => existsSync(marker))).toEqual(markers);
      expect(sandbox.ledger()).toHaveLength(10);
    });

    const lostMidBatch = async (
      lose: (home: string) => void,
      what: RegExp,
      failpoint: string,
      remake: (home: string) => void = () => undefined,
    ) => {
      const rows = 300;
      drop('payroll.csv', payrollFile('k', rows));
      await crashAt(failpoint);
      const paidBefore = sandbox.ledger().length;
      expect(paidBefore).toBeGreaterThan(0);
      expect(paidBefore).toBeLessThan(rows);
      lose(home);
      await expectRefused(what);
      remake(home);
      await runToCompletion(['run', '--recover']);
      await runToCompletion();
      expect(duplicates()).toEqual([]);
      expect(sandbox.ledger()).toHaveLength(rows);
    };
    it('journal deleted after a run killed mid-batch: refused; --recover pays exactly the rows never paid', () =>
      lostMidBatch(store.lose, store.lostSaid, 'after-sending-commit:3', store.remake));
    it('journal emptied after a run killed mid-batch: refused; --recover pays exactly the rows never paid', () =>
      lostMidBatch(store.empty, /is empty/, 'before-answer-commit:2'));

    it("replaced by another home's journal: refused", async () => {
      drop('payroll.csv', payrollFile('r', 10));
      expect((await runCli(['run'], { env })).code).toBe(3);
      const other = store.home(join(folder(), 'other'), sandbox.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
      });
      writeFileSync(join(other.home, 'inbox', 'x.csv'), payrollFile('x', 2));
      expect((await runCli(['run'], { env: other.env })).code).toBe(3);
      const copy = join(folder(), 'other-journal-backup');
      await store.backup(other.home, copy);
      store.lose(home);
      await store.restore(copy, home);
      await expectRefused(/another journal/);
      expect(sandbox.ledger()).toHaveLength(12);
    });

    it('an older copy restored by online backup: refused; --recover adopts what was sent since, and pays new files once', async () => {
      drop('a.csv', payrollFile('a', 20));
      expect((await runCli(['run'], { env })).code).toBe(3);
      const copy = join(folder(), 'journal-backup');
      await store.backup(home, copy);
      drop('b.csv', payrollFile('b', 20));
      expect((await runCli(['run'], { env })).code).toBe(3);
      expect(sandbox.ledger()).toHaveLength(40);
      // The restore itself done right (online backup), of the wrong (older) copy.
      await store.restore(copy, home);
      await expectRefused(/older/);
      const dry = await runCli(['run', '--dry-run'], { env });
      expect(dry.code, dry.stdout).toBe(1);
      expect(dry.stderr).toMatch(/older/);

      await runToCompletion(['run', '--recover']);
      expect(duplicates()).toEqual([]);
      expect(sandbox.ledger()).toHaveLength(40);
      drop('c.csv', payrollFile('c', 20));
      await runToCompletion();
      expect(duplicates()).toEqual([]);
      expect(sandbox.ledger()).toHaveLength(60);
    });

    it("the whole home restored from last night's backup (journal and marker): the day's file dropped again is refused; --recover adopts it", async () => {
      drop('payroll.csv', payrollFile('w', 20));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      // A backup of the home folder takes the journal and its marker together.
      const backup = join(folder(), 'home-backup');
      store.backupHome(home, backup);
      drop('fornecedores.csv', payrollFile('s', 30));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      expect(sandbox.ledger()).toHaveLength(50);
      store.restoreHome(backup, home);

      drop('fornecedores.csv', payrollFile('s', 30));
      const before = sandbox.ledger().length;
      const refused = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(refused.code, refused.stderr + refused.stdout).toBe(1);
      expect(refused.stderr).toMatch(/the gateway already has payout s-\d+/);
      expect(refused.stderr).toContain('nothing was sent');
      expect(refused.stderr).toContain('payouts run --recover');
      expect(sandbox.ledger()).toHaveLength(before);

      await expectRecovered(50);
    });

    it('the whole home restored, then a file it forgot dropped again under a lower batch number: refused; --recover pays Bia once', async () => {
      // A file without orderIds: its derived orderIds carry the batch number of its name.
      const folha = (row: string) => `Nome,CPF,E-mail,Celular,Chave Pix,Valor\n${row}\n`;
      const ana =
        'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"1.000,00"';
      // Another person the same day: a new row of the name, not a change of Ana's.
      const bia =
        'Bia Lima,111.444.777-35,bia@example.com,(11) 98765-4322,bia@example.com,"4.450,50"';
      drop('folha.csv', folha(ana));
      expect((await runCli(['run', '--follow-timeout', '20s'], { env })).code).toBe(0);
      const backup = join(folder(), 'home-backup');
      store.backupHome(home, backup);
      drop('folha.csv', folha(ana));
      await runCli(['run', '--follow-timeout', '20s'], { env });
      drop('folha.csv', folha(bia));
      const lost = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(lost.code, lost.stderr + lost.stdout).toBe(0);
      expect(sandbox.ledger().map((entry) => entry.orderId)).toEqual([
        expect.stringMatching(/^folha-[0-9a-f]{8}-/),
        expect.stringMatching(/^folha-b3-/),
      ]);
      store.restoreHome(backup, home);

      drop('folha.csv', folha(bia));
      const refused = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(refused.code, refused.stderr + refused.stdout).toBe(1);
      expect(refused.stderr).toMatch(/the gateway already has payout folha-b3-/);
      expect(refused.stderr).toContain('nothing was sent');
      expect(refused.stderr).toContain('payouts run --recover');
      expect(sandbox.ledger()).toHaveLength(2);

      await expectRecovered(2);
    });

    it('the whole home backed up mid-batch and restored: the rows it had queued, which the gateway has since, are not sent again', async () => {
      drop('fornecedores.csv', payrollFile('m', 24));
      // Two places: a claim takes a few rows, so the second claim leaves most of them queued.
      const child = spawn(process.execPath, [BIN, 'run', '--follow-timeout', '20s'], {
        env: cleanEnv({
          ...env,
          PAYOUTS_CONCURRENCY: '2',
          PAYOUTS_FAILPOINT: 'after-sending-commit:2:stop',
        }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      for (let i = 0; i < 2000 && !stderr.includes('stopped (SIGSTOP)'); i++) await delay(10);
      expect(stderr).toContain('stopped (SIGSTOP)');
      await waitForStopped(child.pid!);
      // The nightly backup of the home folder, taken while the run is paused mid-batch.
      const backup = join(folder(), 'home-backup');
      store.backupHome(home, backup);
      child.kill('SIGCONT');
      expect(await exited).toBe(0);
      expect(sandbox.ledger()).toHaveLength(24);
      store.restoreHome(backup, home);

      const refused = await runCli(['run', '--follow-timeout', '20s'], { env });
      expect(duplicates()).toEqual([]);
      expect(refused.code, refused.stderr + refused.stdout).toBe(1);
      expect(refused.stderr).toMatch(/the gateway already has payout m-\d+/);
      await expectRecovered(24);
    });

    it('a new home starts with no extra step, and is not in recovery', async () => {
      drop('payroll.csv', payrollFile('n', 5));
      const result = await runCli(['run'], { env });
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).not.toContain('recover');
      expect(sandbox.ledger()).toHaveLength(5);
    });

    it.each(store.damages)('a journal %s ends the run with what to do', async (_, damage) => {
      drop('payroll.csv', payrollFile('d', 5));
      expect((await runCli(['run'], { env })).code).toBe(3);
      damage(home);
      drop('more.csv', payrollFile('e', 5));
      const result = await runCli(['run'], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/damaged/);
      // Found at open (nothing sent), or by the first read of a damaged page (nothing more).
      expect(result.stderr).toMatch(/nothing was sent|nothing more is sent/);
      expect(result.stderr).toContain(store.backupSaid);
      expect(result.stderr).toContain('payouts run --recover');
      expect(sandbox.ledger()).toHaveLength(5);
    });
  },
);
