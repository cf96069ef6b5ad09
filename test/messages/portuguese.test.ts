/**
 * Portuguese for accounting, through the real CLI: `language` (or a `pt` locale) turns
 * what accountants read into Portuguese, the excel dialect's result headings and status
 * words included; the rfc4180 dialect, for programs, stays English.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';

const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
const PAYROLL = [
  'Nome;CPF;Chave Pix;Valor;E-mail;Celular',
  'Ana Souza;529.982.247-25;ana@example.com;100,00;ana@example.com;(11) 98765-4321',
  'Bruno Lima;123;bruno@example.com;50,00;bruno@example.com;(11) 98765-4322',
].join('\r\n');

const readCsv = (path: string, delimiter: string) =>
  parse(readFileSync(path), { bom: true, columns: true, delimiter }) as Record<string, string>[];

describe('Portuguese for accounting (the CLI)', { timeout: 60_000 }, () => {
  const folder = useTempFolder();

  it.each([
    ['PAYOUTS_LANGUAGE=pt-BR', { PAYOUTS_LANGUAGE: 'pt-BR' }],
    ['a pt_BR locale', { LANG: 'pt_BR.UTF-8', LC_ALL: '', LC_MESSAGES: '' }],
  ])('validate speaks Portuguese with %s; its report too', async (_how, env) => {
    const report = join(folder(), 'relatorio.csv');
    const result = await runCli(
      ['validate', join(SAMPLES, 'payroll-2026-11.csv'), '--report', report],
      { env },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^payroll-2026-11\.csv: 6 linhas: 6 válidas, 0 inválidas, 0 ignoradas; total das linhas válidas R\$ 27\.111,15$/m,
    );
    const rows = readCsv(report, ';');
    expect(Object.keys(rows[0] ?? {}).slice(0, 4)).toEqual([
      'Linha',
      'Situação',
      'ID do pagamento',
      'Nome',
    ]);
    expect(rows.map((row) => row['Situação'])).toEqual(Array(6).fill('válida'));
  });

  it('validate names each mistake by linha and coluna, under Portuguese titles', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'payroll-with-mistakes.csv')], {
      env: { PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      '\nLinhas inválidas (corrija-as e envie o arquivo de novo; as linhas válidas não esperam por elas):\n',
    );
    expect(result.stdout).toMatch(/^ {2}linha 3, coluna "CPF": /m);
    expect(result.stdout).toContain(
      '  lido como UTF-8, delimitador ";", IDs de pagamento da coluna "ID do pagamento"\n',
    );
  });

  it('English stays English: the setting wins over the locale', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'payroll-2026-11.csv')], {
      env: { PAYOUTS_LANGUAGE: 'en', LANG: 'pt_BR.UTF-8' },
    });
    expect(result.stdout).toMatch(/^payroll-2026-11\.csv: 6 rows: 6 valid, 0 invalid, 0 skipped/m);
  });

  it('run: the summary and the result file (excel) in Portuguese; rfc4180 stays English', async () => {
    const home = join(folder(), 'casa');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFile(join(home, 'inbox'), 'folha.csv', PAYROLL);
    const env = {
      PAYOUTS_HOME: home,
      PAYOUTS_LANGUAGE: 'pt-BR',
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_LOG_LEVEL: 'silent',
    };
    const run = await runCli(['run', '--sandbox'], { env });
    expect(run.code, run.stdout + run.stderr).toBe(2); // the invalid CPF needs a person
    expect(run.stdout).toMatch(
      /^folha\.csv: recebido; pendente: 1 \(R\$ 100,00\), inválida: 1; total das linhas válidas R\$ 100,00$/m,
    );
    expect(run.stdout.split('\n')[0]).toBe(
      'SANDBOX: nenhum dinheiro real foi movido: estes pagamentos foram para o sandbox embutido',
    );
    expect(run.stdout).toMatch(/^ {2}resultado: .*folha\.\d{4}-\d\d-\d\d\.result\.csv$/m);
    const [name] = readdirSync(join(home, 'results'));
    const rows = readCsv(join(home, 'results', name ?? ''), ';');
    expect(rows.map((row) => [row['sandbox'], row['Linha'], row['Nome'], row['Situação']])).toEqual(
      [
        ['SANDBOX: nenhum dinheiro real foi movido', '2', 'Ana Souza', 'pendente'],
        ['SANDBOX: nenhum dinheiro real foi movido', '3', 'Bruno Lima', 'inválida'],
      ],
    );

    const programs = await runCli(['run', '--sandbox'], {
      env: { ...env, PAYOUTS_RESULT_DIALECT: 'rfc4180' },
    });
    expect(programs.code).toBe(2);
    const english = readCsv(join(home, 'results', name ?? ''), ',');
    expect(english.map((row) => [row['line'], row['status']])).toEqual([
      ['2', 'pending'],
      ['3', 'invalid'],
    ]);
  });
});
