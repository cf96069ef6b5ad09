/**
 * Each file's summary names its own file (issue 29, cases 7 and 9): several files held
 * at once for different reasons, a run killed between files and run again, the pending
 * alert: every file's hints and result path are its own, under the name the accountant
 * gave it. As cron runs it, against a sandbox whose ledger says who was paid.
 */
import { spawn } from 'node:child_process';
import { utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/csv/documents.js';
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

/** A summary's blocks: each file's first line and the lines under it, by the name it starts with. */
function blocksOf(stdout: string): [name: string, block: string][] {
  const blocks: [string, string][] = [];
  for (const line of stdout.split('\n')) {
    const head = /^(\S.*?\.csv): /.exec(line)?.[1];
    const last = blocks.at(-1);
    if (head !== undefined) blocks.push([head, line]);
    else if (last && line.startsWith('  ')) last[1] += `\n${line}`;
  }
  return blocks;
}

/** The file names the commands of a block name (`payouts approve "X" ...`). */
const commandFiles = (block: string) =>
  [...block.matchAll(/payouts (?:approve|reject|retry|status) "([^"]+)"/g)].map(
    (match) => match[1],
  );

/** Each block's commands and result name its own file, as the accountant named it. */
function expectOwnNames(stdout: string, names: readonly string[]): void {
  const blocks = blocksOf(stdout);
  expect(blocks.map(([name]) => name).sort()).toEqual([...names].sort());
  for (const [name, block] of blocks) {
    for (const file of commandFiles(block)) expect({ name, file }).toEqual({ name, file: name });
    const result = /^ {2}result: (.*)$/m.exec(block)?.[1];
    if (result !== undefined) {
      const stem = name.replace(/( \[\d+\])?\.csv$/, '');
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
      'folha_a [2].csv',
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
    const blocks = new Map(blocksOf(resumed.stdout));
    expect(blocks.get('folha_b.csv')).toMatch(/2 held \(R\$ 5\.500,00\)/);
    expect(blocks.get('velho.csv')).toContain('it was last changed 517 days ago');

    const alerted = await runCli(['run'], {
      env: { ...env, PAYOUTS_PENDING_ALERT_AFTER: '1ms' },
    });
    expect(alerted.code).toBe(2);
    expectOwnNames(alerted.stdout, names);
    const alerts = [...alerted.stderr.matchAll(/since (?:it was|they were) sent, in (.*?): /g)];
    expect(alerts.map((alert) => alert[1]).sort()).toEqual(['folha_a.csv', 'pago.csv']);
    // The first file's two rows and pago.csv's one, each once.
    expect([...ledgerCounts(sandbox).values()]).toEqual([1, 1, 1]);
  });
});
