/**
 * Portuguese all the way: with `language` pt-BR, every line `run`, `approve`, `reject` and
 * `retry` print, and every result, reason and approval report file they write, holds no
 * English sentence, in the situations that print the most; nor does `--help` of the program
 * and of each command, nor a command line that cannot be taken. The sandbox over HTTP is the
 * gateway; the detector (test/support/english-words.ts) is tested first, so that it cannot
 * pass by finding nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli, stopChild, type CliResult } from '../support/cli.js';
import { englishWordsIn } from '../support/english-words.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, ledgerCounts, topUp } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';

describe('the English detector', () => {
  it.each([
    ['released by root as new payments; the next run sends them.', true],
    ['The inbox is empty: nothing to do.', true],
    ['held: the balance leaves R$ 10,00 for this batch', true],
    ['never sent; taken over by folha (2).csv', true],
    ['not paid: the payout that covered it (p-1, folha.csv, line 2) failed', true],
    ['folha.csv (lote 3): 2 pagamentos, R$ 1.234,56, liberados por maria', false],
    ['Para aprovar: mova folha.csv para approved/, ou execute: payouts approve "folha.csv"', false],
    ['reenvie: payouts retry folha-1-3f9a2c71 --by maria; veja `payouts status`', false],
    ['o telefone padrão é recipientPhone; o ID pedido-7 está no diário', false],
    ['SANDBOX: nenhum dinheiro real foi movido', false],
  ])('%s: English %s', (line, english) => {
    expect(englishWordsIn(line).length > 0).toBe(english);
  });

  it('leaves out the data it is given: the names of files and people', () => {
    expect(englishWordsIn('Paid Over: linha 2', ['Paid Over'])).toEqual([]);
    expect(englishWordsIn('Paid Over: line 2')).toEqual(['paid', 'over', 'line']);
  });
});

const HEADER = 'ID do pagamento;Nome;CPF;Chave Pix;Valor;E-mail;Celular';
const PEOPLE = ['Ana Souza', 'Bruno Lima', 'Eva Rocha'];
const ANA = 'Ana Souza;529.982.247-25;ana@example.com;100,00;ana@example.com;(11) 98765-4321';
const BRUNO = 'Bruno Lima;390.533.447-05;bruno@example.com;50,00;bruno@example.com;(11) 98765-4322';
// The sandbox fails every payout to this key.
const EVA = 'Eva Rocha;111.444.777-35;fail@example.com;70,00;eva@example.com;(31) 97654-3210';

describe('Portuguese all the way (pt-BR against the sandbox)', { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  /** A home in Portuguese against a sandbox of its own; what it printed and wrote, read. */
  const portugueseHome = async (
    settings: Record<string, string> = {},
    balanceCents?: number,
    settleDelayMs = 20,
  ) => {
    sandbox = await startSandbox({
      token: TOKEN,
      settleDelayMs,
      ...(balanceCents === undefined ? {} : { initialBalanceCents: balanceCents }),
    });
    const { home, env } = sandboxHome(folder(), sandbox.url, {
      PAYOUTS_LANGUAGE: 'pt-BR',
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_FOLLOW_TIMEOUT: '20s',
      ...settings,
    });
    const said: string[] = [];
    const files = new Set<string>();
    const drop = (name: string, lines: string[]) => {
      files.add(name);
      writeFileSync(join(home, 'inbox', name), `${lines.join('\r\n')}\r\n`);
    };
    /** Every line of every result, reason and approval report file there is now. */
    const written = () =>
      ['results', 'rejected', 'awaiting-approval']
        .map((name) => join(home, name))
        .filter((path) => existsSync(path))
        .flatMap((path) =>
          readdirSync(path)
            .filter((name) => /\.(result\.csv|reason\.txt|report\.txt)$/.test(name))
            .flatMap((name) => {
              const text = readFileSync(join(path, name), 'utf8');
              // A result's cells one by one: a quoted cell is a sentence, not quoted data.
              return name.endsWith('.csv')
                ? (parse(text, { bom: true, delimiter: ';' }) as string[][]).flat()
                : text.split('\n');
            }),
        );
    // What a command printed, and what the files said after it (a later run rewrites them).
    const cli = async (args: string[], extra: Record<string, string> = {}) => {
      const result: CliResult = await runCli(args, { env: { ...env, ...extra } });
      said.push(...result.stdout.split('\n'), ...result.stderr.split('\n'), ...written());
      return result;
    };
    /** Every line said so far that holds English words, with them. */
    const english = () => {
      const data = [...PEOPLE, ...files, 'maria'];
      return [...new Set(said)]
        .map((line) => ({ line, words: englishWordsIn(line, data) }))
        .filter(({ words }) => words.length > 0);
    };
    return { home, env, drop, cli, english, said };
  };

  it('a paid file, a pending one and an empty inbox', async () => {
    const h = await portugueseHome();
    expect((await h.cli(['run'])).stdout).toMatch(/\S/);
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
    expect((await h.cli(['run'])).code).toBe(0);
    h.drop('adiantamento.csv', [HEADER, `adiant-1;${BRUNO}`]);
    expect((await h.cli(['run'], { PAYOUTS_FOLLOW_TIMEOUT: '0' })).code).toBe(3);
    expect(h.english()).toEqual([]);
  });

  it('a payout pending too long, said on stderr too', async () => {
    // The gateway never settles it while the test runs; any age is too long.
    const h = await portugueseHome(
      { PAYOUTS_FOLLOW_TIMEOUT: '0', PAYOUTS_PENDING_ALERT_AFTER: '1ms' },
      undefined,
      3_600_000,
    );
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
    await h.cli(['run']);
    expect(sandbox?.ledger()).toHaveLength(1);
    const again = await h.cli(['run', '--quiet']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('payouts get --order-id folha-1');
    expect(h.english()).toEqual([]);
  });

  it('a file held for the balance, then paid after a top-up', async () => {
    const h = await portugueseHome({}, 60_00);
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
    expect((await h.cli(['run'])).code).toBe(2);
    await topUp(sandbox?.url ?? '', 100_00);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(ledgerCounts(sandbox as Sandbox).get('folha-1')).toBe(1);
    expect(h.english()).toEqual([]);
  });

  /** folha.csv paid Ana; a copy of the same name repeats her and adds Bruno: held whole. */
  const heldCopy = async () => {
    const h = await portugueseHome();
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
    expect((await h.cli(['run'])).code).toBe(0);
    h.drop('folha.csv', [HEADER, `folha-2;${ANA}`, `folha-3;${BRUNO}`]);
    expect((await h.cli(['run'])).code).toBe(2);
    return h;
  };

  it('a same-name copy held, then approved --new-batch --rows, then --repeats', async () => {
    const h = await heldCopy();
    expect((await h.cli(['approve', 'folha.csv', '--new-batch', '--rows', '3'])).code).toBe(0);
    expect((await h.cli(['approve', 'folha.csv', '--new-batch', '--repeats', '1'])).code).toBe(0);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(ledgerCounts(sandbox as Sandbox).get('folha-2')).toBe(1);
    expect(h.english()).toEqual([]);
  });

  it('a same-name copy approved --corrects, and identical rows approved --identical', async () => {
    const h = await heldCopy();
    expect((await h.cli(['approve', 'folha.csv', '--corrects', '1'])).code).toBe(0);
    expect((await h.cli(['run'])).code).toBe(0);
    const bonus = BRUNO.replace('50,00', '55,00');
    h.drop('bonus.csv', [HEADER, `bonus-1;${bonus}`, `bonus-2;${bonus}`]);
    expect((await h.cli(['run'])).code).toBe(2);
    expect((await h.cli(['approve', 'bonus.csv', '--identical'])).code).toBe(0);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(h.english()).toEqual([]);
  });

  it('approve and reject of files awaiting approval', async () => {
    const h = await portugueseHome({ PAYOUTS_REQUIRE_APPROVAL: 'true' });
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
    h.drop('errada.csv', [HEADER, `errada-1;${BRUNO}`]);
    expect((await h.cli(['run'])).code).toBe(2);
    expect((await h.cli(['approve', 'folha.csv', '--by', 'maria'])).code).toBe(0);
    expect((await h.cli(['reject', 'errada.csv', '--reason', 'mês errado'])).code).toBe(0);
    expect((await h.cli(['approve', 'nenhum.csv'])).code).toBe(1);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(ledgerCounts(sandbox as Sandbox).get('errada-1')).toBeUndefined();
    expect(h.english()).toEqual([]);
  });

  it('a failed payout retried, and a covered row whose cover was returned', async () => {
    const h = await portugueseHome();
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`, `folha-2;${EVA}`]);
    expect((await h.cli(['run'])).code).toBe(2);
    expect((await h.cli(['retry', 'folha.csv', '--by', 'maria'])).code).toBe(0);
    expect((await h.cli(['retry', 'folha-1'])).code).toBe(1);
    expect((await h.cli(['run'])).code).toBe(2);
    // folha.csv corrected: Ana's row is covered by the payout folha.csv made, which then
    // comes back; reconcile rewrites the result (its own lines are not this case's).
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`, `folha-3;${BRUNO}`]);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(sandbox?.refund('folha-1')).toBe(true);
    expect((await runCli(['reconcile', '--days', '9999'], { env: h.env })).code).toBe(2);
    await h.cli(['run']);
    expect(h.english()).toEqual([]);
  });

  it('a held file whose rows a corrected copy takes over', async () => {
    const h = await portugueseHome();
    h.drop('folha.csv', [HEADER, `folha-1;${ANA}`, `folha-2;${BRUNO}`]);
    writeFileSync(join(h.home, 'inbox', 'folha.csv.total'), 'linhas: 3\n');
    expect((await h.cli(['run'])).code).toBe(2);
    h.drop('folha (corrigida).csv', [HEADER, `folha-1;${ANA}`, `folha-2;${BRUNO}`]);
    expect((await h.cli(['run'])).code).toBe(0);
    expect(h.english()).toEqual([]);
  });

  it('watch: its lines on each file, and what it writes, approved files included', async () => {
    const h = await portugueseHome({
      PAYOUTS_REQUIRE_APPROVAL: 'true',
      PAYOUTS_LOG_LEVEL: 'info',
      PAYOUTS_INBOX_RESCAN: '300ms',
    });
    const daemon = spawn(process.execPath, [BIN, 'watch'], {
      env: cleanEnv(h.env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    daemon.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    const waitFor = async (what: string, condition: () => boolean) => {
      for (const until = Date.now() + 30_000; !condition(); await delay(100)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; log: ${log}`);
      }
    };
    try {
      h.drop('folha.csv', [HEADER, `folha-1;${ANA}`]);
      const report = join(h.home, 'awaiting-approval', 'folha.csv.report.txt');
      await waitFor('the approval report', () => existsSync(report));
      expect((await h.cli(['approve', 'folha.csv'])).code).toBe(0);
      await waitFor('folha.csv archived', () => readdirSync(join(h.home, 'archive')).length > 0);
      expect(ledgerCounts(sandbox as Sandbox).get('folha-1')).toBe(1);
    } finally {
      expect(await stopChild(daemon)).toBe(0);
    }
    // The operator's lines (listening, health, stopped) stay English; those on a file do not.
    const onFiles = log
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg)
      .filter((msg) => msg.includes('folha.csv'));
    expect(onFiles.length).toBeGreaterThan(1);
    h.said.push(...onFiles);
    expect(h.english()).toEqual([]);
  });
});

describe('--help and usage errors in Portuguese', () => {
  const folder = useTempFolder();
  const PT = { PAYOUTS_LANGUAGE: 'pt-BR' };

  /**
   * The lines of a help that still speak English, with their words; [] when none. What is
   * data there: a list's terms (commands, flags, arguments) and the example command lines.
   */
  const englishIn = (help: string) =>
    help
      .split('\n')
      .map((line) => line.replace(/^(Uso: .*|  \S+(?: \S+)*(?=\s{2})|  [^ ].*)/, ''))
      .map((line) => ({ line, words: englishWordsIn(line) }))
      .filter(({ words }) => words.length > 0);

  it('--help of the program and of every command: Portuguese headings, descriptions, options and examples', async () => {
    const program = await runCli(['--help'], { env: PT });
    // Every command the program lists (gateway-commands.test.ts holds the list to all of them).
    const commands = [...program.stdout.matchAll(/^ {2}(\w+)\b/gm)].map(([, name]) => `${name}`);
    expect(commands.length).toBeGreaterThan(10);
    const helps = commands.map((name) => [name, '--help']);
    for (const args of [['--help'], ['help'], ['help', 'run'], ...helps]) {
      const { code, stdout } = await runCli(args, { env: PT });
      const what = args.join(' ');
      expect(code, what).toBe(0);
      expect(stdout, what).toMatch(/^Uso: payouts/);
      expect(stdout, what).not.toMatch(
        /Usage:|Options:|Commands:|Arguments:|\[options\]|\[command\]|help for|\(default/,
      );
      expect(englishIn(stdout), what).toEqual([]);
    }
  });

  it('takes its language from the settings file, else the locale', async () => {
    const settings = join(folder(), 'payouts.env');
    writeFileSync(settings, 'PAYOUTS_LANGUAGE=pt-BR\n');
    const fromFile = await runCli(['--settings-file', settings, 'run', '--help'], {
      env: { LANG: 'en_US.UTF-8', LC_ALL: '', LC_MESSAGES: '' },
    });
    expect(fromFile.stdout).toMatch(/^Uso: payouts run/);
    const fromLocale = await runCli(['run', '--help'], {
      env: { LANG: 'pt_BR.UTF-8', LC_ALL: '', LC_MESSAGES: '' },
    });
    expect(fromLocale.stdout).toMatch(/^Uso: payouts run/);
    const english = await runCli(['run', '--help'], {
      env: { LANG: 'C', LC_ALL: '', LC_MESSAGES: '' },
    });
    expect(english.stdout).toMatch(/^Usage: payouts run/);
  });

  it.each([
    [
      ['rn'],
      /^payouts: comando desconhecido 'rn'; você quis dizer run\? \(veja payouts --help\)\n$/,
    ],
    [
      ['run', '--dry-rn'],
      /^payouts run: opção desconhecida '--dry-rn'; você quis dizer --dry-run\? \(veja payouts run --help\)\n$/,
    ],
    [
      ['validate'],
      /^payouts validate: falta o argumento 'arquivo' \(veja payouts validate --help\)\n$/,
    ],
    [
      ['approve', 'folha.csv', '--by'],
      /^payouts approve: falta o valor da opção '--by <name>' \(veja payouts approve --help\)\n$/,
    ],
    [
      ['run', '--wait', 'banana'],
      /^payouts run: --wait "banana" não é uma duração \(por exemplo 0, 30s, 5m\) \(veja payouts run --help\)\n$/,
    ],
    [
      ['get'],
      /^payouts get: diga qual transação, com --id N ou --order-id X \(veja payouts get --help\)\n$/,
    ],
    [
      ['approve', 'folha.csv', '--batch', 'x'],
      /^payouts approve: o valor 'x' da opção '--batch <batch>' não serve\. Esperava um número de lote, por exemplo 12\. \(veja payouts approve --help\)\n$/,
    ],
    [
      [],
      /^payouts: diga qual comando, por exemplo payouts validate ARQUIVO ou payouts run \(veja payouts --help\)\n$/,
    ],
  ])('%j: one line in Portuguese, exit 64', async (args, said) => {
    const result = await runCli(args, { env: PT });
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(said);
  });
});
