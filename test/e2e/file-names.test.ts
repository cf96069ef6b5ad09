/**
 * Each file's summary names its own file (issue 29, cases 7 and 9): several files held
 * at once for different reasons, a run killed between files and run again, the pending
 * alert: every file's hints and result path are its own, under the name the accountant
 * gave it. As cron runs it, against a sandbox whose ledger says who was paid.
 */
import { spawn } from 'node:child_process';
import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { ledgerCounts, TOKEN } from '../support/gateway.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';

const DAY = 24 * 60 * 60 * 1000;
const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
/** A payee of their own for n, paid `reais`. */
const payee = (n: number, reais: string) =>
  `Pessoa ${n},${withCheckDigits(String(100_000_000 + n * 7_919).slice(0, 9))},p${n}@example.com,(11) 98765-43${String(n).padStart(2, '0')},p${n}@example.com,"${reais}"`;
const csv = (...rows: string[]) => `${[HEADER, ...rows].join('\r\n')}\r\n`;

/** A file's block of a summary: its name, its batch when the summary gives it, and its lines. */
interface Block {
  name: string;
  batchId: number | undefined;
  text: string;
}

function blocksOf(stdout: string): Block[] {
  const blocks: Block[] = [];
  for (const line of stdout.split('\n')) {
    const head = /^(\S.*?\.csv)(?: \(batch (\d+)\))?: /.exec(line);
    const last = blocks.at(-1);
    if (head?.[1] !== undefined) {
      blocks.push({ name: head[1], batchId: head[2] ? Number(head[2]) : undefined, text: line });
    } else if (last && line.startsWith('  ')) last.text += `\n${line}`;
  }
  return blocks;
}

/** The commands a block prints, each as its arguments (`approve`, `folha.csv`, `--batch`, `3`). */
const commandsIn = (text: string): string[][] =>
  [...text.matchAll(/payouts (approve|reject|retry) "([^"]+)"((?: --[a-z-]+(?: \d+)?)*)/g)].map(
    ([, verb = '', file = '', options = '']) => [verb, file, ...options.split(' ').filter(Boolean)],
  );

/**
 * Each block's commands and result name its own file, as the accountant named it, and a
 * block told apart by its batch has its commands pick that batch.
 */
function expectOwnNames(stdout: string, names: readonly string[]): void {
  const blocks = blocksOf(stdout);
  expect(blocks.map((block) => block.name).sort()).toEqual([...names].sort());
  for (const { name, batchId, text } of blocks) {
    for (const [, file, ...options] of commandsIn(text)) {
      expect({ name, file }).toEqual({ name, file: name });
      const picked = options.indexOf('--batch');
      // A batch the block gives is the one its commands pick.
      if (batchId !== undefined)
        expect({ name, batch: options[picked + 1] }).toEqual({ name, batch: `${batchId}` });
    }
    const result = /^ {2}result: (.*)$/m.exec(text)?.[1];
    if (result !== undefined) {
      const stem = name.replace(/\.csv$/, '');
      expect({ name, result: basename(result) }).toMatchObject({
        result: expect.stringMatching(new RegExp(`^${stem}\\.\\d{4}-\\d{2}-\\d{2}`)),
      });
    }
  }
}

describe('each file is named as its own', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('files held for the balance, a same-name copy, a re-export and an old age, a run killed between files and run again: every hint and result is its own file', async () => {
    // Payouts stay pending: the first file stays in processing/, and the alert speaks.
    sandbox = await startSandbox({
      token: TOKEN,
      initialBalanceCents: 10_000_00,
      settleDelayMs: 3_600_000,
    });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
      ...QUICK_TIMEOUTS,
    });
    const drop = (name: string, content: string, mtimeMs = Date.now()) => {
      const path = join(home, 'inbox', name);
      writeFileSync(path, content);
      utimesSync(path, new Date(mtimeMs), new Date(mtimeMs));
    };
    drop('folha_a.csv', csv(payee(1, '3.000,00'), payee(2, '2.500,00')));
    const first = await runCli(['run'], { env });
    expect(first.code, first.stderr).toBe(3);

    drop('folha_a.csv', csv(payee(1, '3.000,00'), payee(2, '2.500,00'), payee(3, '900,00')));
    drop('folha_b.csv', csv(payee(1, '3.000,00'), payee(2, '2.500,00')));
    drop('grande.csv', csv(payee(4, '50.000,00')));
    drop('pago.csv', csv(payee(5, '100,00')));
    drop('velho.csv', csv(payee(6, '200,00')), Date.now() - 517 * DAY);
    // Killed once two files of processing/ are journaled, the others not yet read.
    const child = spawn(process.execPath, [BIN, 'run'], {
      env: cleanEnv({ ...env, PAYOUTS_FAILPOINT: 'between-files:2' }),
      stdio: 'ignore',
    });
    const ended = await new Promise<string | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    expect(ended).toBe('SIGKILL');

    const names = [
      'folha_a.csv',
      'folha_a.csv',
      'folha_b.csv',
      'grande.csv',
      'pago.csv',
      'velho.csv',
    ];
    const resumed = await runCli(['run'], { env });
    expect(resumed.code, resumed.stderr).toBe(2);
    expectOwnNames(resumed.stdout, names);
    // Moved in by the killed run, read by this one: still weighed as files first seen.
    const blocks = blocksOf(resumed.stdout);
    const textOf = (name: string) => blocks.find((block) => block.name === name)?.text;
    expect(textOf('folha_b.csv')).toMatch(/2 held \(R\$ 5\.500,00\)/);
    expect(textOf('velho.csv')).toContain('it was last changed 517 days ago');

    const alerted = await runCli(['run'], {
      env: { ...env, PAYOUTS_PENDING_ALERT_AFTER: '1ms' },
    });
    expect(alerted.code).toBe(2);
    expectOwnNames(alerted.stdout, names);
    const alerts = [...alerted.stderr.matchAll(/since (?:it was|they were) sent, in (.*?): /g)];
    expect(alerts.map((alert) => alert[1]).sort()).toEqual(['folha_a.csv', 'pago.csv']);
    // The first file's two rows and pago.csv's one, each once.
    expect([...ledgerCounts(sandbox).values()]).toEqual([1, 1, 1]);

    // The copy's answer, as its block prints it, pays its added row once.
    const copy = blocksOf(alerted.stdout).find((block) => block.batchId !== undefined);
    const corrects = commandsIn(copy?.text ?? '').find((args) => args.includes('--corrects'));
    expect(corrects).toEqual([
      'approve',
      'folha_a.csv',
      '--corrects',
      '1',
      '--batch',
      `${copy?.batchId}`,
    ]);
    const answered = await runCli(corrects ?? [], { env });
    expect(answered.code, answered.stderr).toBe(0);
    expect((await runCli(['run'], { env })).code).toBe(2);
    expect([...ledgerCounts(sandbox).values()]).toEqual([1, 1, 1, 1]);
  });

  it("a file waiting for approval and its corrected copy: both blocks give the copy's command, the replaced file releases nothing and says so, and the printed command pays the rows once", async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_REQUIRE_APPROVAL: 'true',
      ...QUICK_TIMEOUTS,
    });
    const drop = (content: string) => writeFileSync(join(home, 'inbox', 'folha.csv'), content);
    drop(csv(payee(1, '3.000,00'), payee(2, '2.500,00')));
    expect((await runCli(['run'], { env })).code).toBe(2);
    // The corrected payroll, while the first still waits.
    drop(csv(payee(1, '3.000,00'), payee(2, '2.500,00'), payee(3, '900,00')));
    const waiting = await runCli(['run'], { env });
    expect(waiting.code).toBe(2);
    expectOwnNames(waiting.stdout, ['folha.csv', 'folha.csv']);
    const commands = blocksOf(waiting.stdout).map((block) => commandsIn(block.text));
    // The copy took over every row of the first: only the copy is left to approve.
    expect(commands).toEqual([
      [['approve', 'folha.csv', '--batch', '2']],
      [['approve', 'folha.csv', '--batch', '2']],
    ]);

    const replaced = await runCli(['approve', 'folha.csv', '--batch', '1'], { env });
    expect(replaced.code).toBe(1);
    expect(replaced.stderr).toMatch(
      /folha\.csv \(batch 1\) was replaced by its corrected copy folha\.csv \(batch 2\), which arrived .*: nothing of it is sent, and nothing is left to approve/,
    );
    expect(readdirSync(join(home, 'approved'))).toEqual([]);

    const approved = await runCli(commands[1]?.[0] ?? [], { env });
    expect(approved.code, approved.stderr).toBe(0);
    const paid = await runCli(['run'], { env });
    // Nothing waits for a person now, only the copy's payouts still pending.
    expect(paid.code).toBe(3);
    expect([...ledgerCounts(sandbox).values()]).toEqual([1, 1, 1]);
    // Both named as the accountant named them: the first archived, the copy being paid.
    expect(blocksOf(paid.stdout).map((block) => block.name)).toEqual(['folha.csv', 'folha.csv']);
    const status = await runCli(['status'], { env });
    expect([...status.stdout.matchAll(/^batch \d+ {2}(.*?) {2}/gm)].map((line) => line[1])).toEqual(
      ['folha.csv', 'folha.csv'],
    );
  });
});
