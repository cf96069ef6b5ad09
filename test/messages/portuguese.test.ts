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

/** A home's environment for a run in Portuguese against the embedded sandbox, quiet. */
const portugueseHome = (home: string, settings: Record<string, string> = {}) => ({
  PAYOUTS_HOME: home,
  PAYOUTS_LANGUAGE: 'pt-BR',
  PAYOUTS_INBOX_SETTLE: '1ms',
  PAYOUTS_LOG_LEVEL: 'silent',
  ...settings,
});

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
    // Each row's own message too, and every mistake it holds (the CPF's, then the key's).
    expect(result.stdout).toContain(
      '  linha 3, coluna "CPF": 321.654.987-90 não é um CPF válido (os dígitos verificadores não conferem): confira com o CPF da pessoa | Chave Pix: é uma chave CPF, mas 321.654.987-90 não é um CPF válido (os dígitos verificadores não conferem): confira com o CPF da pessoa\n',
    );
    expect(result.stdout).toContain(
      '  linha 12, coluna "Valor": 1.234 pode ser milhar ou decimais: escreva 1234 para reais inteiros, ou use duas casas decimais (1.234,00)\n',
    );
    expect(result.stdout).toContain(
      '  linha 4, coluna "CPF": zeros à esquerda recolocados: 1234567890 lido como 01234567890\n',
    );
    expect(result.stdout).toContain(
      '  lido como UTF-8, delimitador ";", IDs de pagamento da coluna "ID do pagamento"\n',
    );
  });

  it('validate --report says each row message in Portuguese; --json keeps English and codes', async () => {
    const report = join(folder(), 'relatorio.csv');
    const file = join(SAMPLES, 'payroll-with-mistakes.csv');
    const env = { PAYOUTS_LANGUAGE: 'pt-BR' };
    expect((await runCli(['validate', file, '--report', report], { env })).code).toBe(2);
    const rows = readCsv(report, ';');
    expect(rows.find((row) => row['Linha'] === '6')?.['Mensagem']).toBe(
      'está vazio: o nome do favorecido é obrigatório',
    );
    const json = JSON.parse((await runCli(['validate', file, '--json'], { env })).stdout);
    expect(json.errors[2]).toEqual({
      line: 6,
      column: 'Nome',
      code: 'nameEmpty',
      message: "is empty: the recipient's name is required",
      mistakes: [
        {
          column: 'Nome',
          code: 'nameEmpty',
          message: "is empty: the recipient's name is required",
        },
      ],
    });
  });

  it("validate names a missing contact in the reader's words, not by a column the file lacks", async () => {
    const file = writeFile(
      folder(),
      'folha.csv',
      'Nome;CPF;Chave Pix;Valor\r\nAna Souza;529.982.247-25;529.982.247-25;100,00\r\n',
    );
    const pt = await runCli(['validate', file], { env: { PAYOUTS_LANGUAGE: 'pt-BR' } });
    expect(pt.stdout).toContain(
      '  linha 2: o arquivo não tem e-mail (o gateway exige um, e a chave Pix não é um e-mail); a empresa pode definir um e-mail padrão: recipientEmail | o arquivo não tem telefone (o gateway exige um, e a chave Pix não é um telefone); a empresa pode definir um telefone padrão: recipientPhone\n',
    );
    const en = await runCli(['validate', file], { env: { PAYOUTS_LANGUAGE: 'en' } });
    expect(en.stdout).toContain(
      '  line 2: the file has no e-mail column (the gateway requires one, and the Pix key is not an e-mail); the company can set a default e-mail: recipientEmail | the file has no phone column',
    );
    for (const text of [pt.stdout, en.stdout]) expect(text).not.toMatch(/"(email|phone)"/);
    const json = JSON.parse((await runCli(['validate', file, '--json'])).stdout);
    expect(json.errors[0]).toMatchObject({
      line: 2,
      column: null,
      code: 'noContact',
      mistakes: [
        { column: null, code: 'noContact' },
        { column: null, code: 'noContact' },
      ],
    });
  });

  it('validate of a file that cannot be used says why in Portuguese', async () => {
    const empty = writeFile(folder(), 'vazio.csv', '');
    const result = await runCli(['validate', empty], { env: { PAYOUTS_LANGUAGE: 'pt-BR' } });
    expect(result.code).toBe(1);
    expect(result.stdout.trim()).toBe(
      'vazio.csv está vazio (0 bytes)\nNada nele pode ser pago: corrija o arquivo e confira-o de novo.',
    );
  });

  it('English stays English: the setting wins over the locale', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'payroll-2026-11.csv')], {
      env: { PAYOUTS_LANGUAGE: 'en', LANG: 'pt_BR.UTF-8' },
    });
    expect(result.stdout).toMatch(/^payroll-2026-11\.csv: 6 rows: 6 valid, 0 invalid, 0 skipped/m);
  });

  it.each([
    [
      'excel',
      ';',
      {
        'CPF/CNPJ': '529.982.247-26',
        'Tipo de chave': 'EMAIL',
        'Chave Pix': 'bruno@example.com',
        Situação: 'inválida',
        Mensagem: expect.stringMatching(
          /^CPF: 52998224726 não é um CPF válido .* \| Valor: "9 99" tem um espaço que não separa milhares/,
        ),
      },
    ],
    [
      'rfc4180',
      ',',
      {
        cpfCnpj: '52998224726',
        pixKeyType: 'EMAIL',
        pixKey: 'bruno@example.com',
        status: 'invalid',
        message: expect.stringMatching(
          /^CPF: 52998224726 is not a valid CPF .* \| Valor: "9 99" has a space that does not separate thousands/,
        ),
      },
    ],
  ] as const)(
    "run (%s): an invalid row's result line says every mistake, with its CPF and key as written",
    async (dialect, delimiter, expected) => {
      const home = join(folder(), 'erros');
      mkdirSync(join(home, 'inbox'), { recursive: true });
      writeFile(
        join(home, 'inbox'),
        'folha.csv',
        [
          'Nome;CPF;Tipo de chave;Chave Pix;Valor;E-mail;Celular',
          'Bruno Lima;52998224726;EMAIL;bruno@example.com;9 99;bruno@example.com;(11) 98765-4322',
        ].join('\r\n'),
      );
      const env = portugueseHome(home, { PAYOUTS_RESULT_DIALECT: dialect });
      expect((await runCli(['run', '--sandbox'], { env })).code).toBe(2);
      const [name] = readdirSync(join(home, 'results'));
      expect(readCsv(join(home, 'results', name ?? ''), delimiter)).toEqual([
        expect.objectContaining(expected),
      ]);
    },
  );

  it('the approval report speaks Portuguese: what is sent once approved, and every payee', async () => {
    const home = join(folder(), 'aprovacao');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFile(join(home, 'inbox'), 'folha.csv', PAYROLL);
    const run = await runCli(['run', '--sandbox'], {
      env: portugueseHome(home, { PAYOUTS_REQUIRE_APPROVAL: 'true' }),
    });
    expect(run.stdout).toContain('folha.csv: aguardando aprovação em awaiting-approval/');
    const report = readFileSync(join(home, 'awaiting-approval', 'folha.csv.report.txt'), 'utf8');
    expect(report.split('\n').slice(0, 4)).toEqual([
      'SANDBOX: nenhum dinheiro real se move: este arquivo passou pelo sandbox embutido',
      expect.stringMatching(
        /^folha\.csv \(lote \d+\): aguardando aprovação; nada dele é enviado até lá$/,
      ),
      'Depois de aprovado, é enviado 1 pagamento, R$ 100,00 ao todo.',
      'Não enviadas: 1 linha inválida, 0 linhas retidas pelas regras de quem é pago, 0 já cobertas por pagamentos já feitos.',
    ]);
    expect(report).toContain(
      'Para aprovar: mova folha.csv para approved/, ou execute: payouts approve "folha.csv"',
    );
    expect(report).toContain(
      '\n  linha 3, CPF: 123 não é um CPF válido com os zeros à esquerda recolocados (00000000123): confira-o\n',
    );
    expect(report).toMatch(
      /^ {2}linha 2: Ana Souza, documento \*+25, chave Pix a\*+@example\.com, R\$ 100,00: a enviar$/m,
    );
  });

  it('run says why a file waits in Portuguese, and the reason file of a rejected one; --json stays English', async () => {
    const home = join(folder(), 'motivos');
    const inbox = join(home, 'inbox');
    mkdirSync(inbox, { recursive: true });
    writeFile(inbox, 'folha.csv', PAYROLL);
    writeFile(inbox, 'folha.csv.total', 'linhas: 3\n');
    writeFile(inbox, 'vazio.csv', '');
    const env = portugueseHome(home);
    const run = await runCli(['run', '--sandbox'], { env });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stdout).toContain(
      '\n  o total de controle não confere: o arquivo tem 2 linhas, mas folha.csv.total diz 3 linhas;',
    );
    expect(run.stdout).toMatch(/^vazio\.csv: não pode ser usado; .*\n {2}está vazio \(0 bytes\)$/m);
    expect(readFileSync(join(home, 'rejected', 'vazio.csv.reason.txt'), 'utf8')).toBe(
      'está vazio (0 bytes)\n',
    );
    // Told again on the next run, from the journal, still in Portuguese.
    const again = await runCli(['run', '--sandbox'], { env });
    expect(again.stdout).toContain('o total de controle não confere');
    const json = JSON.parse((await runCli(['run', '--sandbox', '--json'], { env })).stdout);
    expect(json.files[0].problems[0]).toMatch(/^control total mismatch: the file has 2 rows/);
  });

  it('run: the summary and the result file (excel) in Portuguese; rfc4180 stays English', async () => {
    const home = join(folder(), 'casa');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFile(join(home, 'inbox'), 'folha.csv', PAYROLL);
    const env = portugueseHome(home, { PAYOUTS_FOLLOW_TIMEOUT: '0' });
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
    // An invalid row's message as validate says it, in Portuguese.
    expect(rows[1]?.['Mensagem']).toBe(
      'CPF: 123 não é um CPF válido com os zeros à esquerda recolocados (00000000123): confira-o',
    );
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
    expect(english.map((row) => [row['line'], row['status'], row['message']])).toEqual([
      ['2', 'pending', ''],
      [
        '3',
        'invalid',
        expect.stringMatching(/^CPF: 123 is not a valid CPF with its leading zeros restored/),
      ],
    ]);
  });
  const HEADER = 'ID do pagamento;Nome;CPF;Chave Pix;Valor;E-mail;Celular';
  const ANA = 'Ana Souza;529.982.247-25;ana@example.com;100,00;ana@example.com;(11) 98765-4321';
  /** A home where folha.csv paid Ana (pending), and adiantamento.csv repeats her payout. */
  const paidThenRepeated = async (name: string, settings: Record<string, string> = {}) => {
    const home = join(folder(), name);
    const inbox = join(home, 'inbox');
    mkdirSync(inbox, { recursive: true });
    writeFile(inbox, 'folha.csv', [HEADER, `folha-1;${ANA}`].join('\r\n'));
    const env = portugueseHome(home, { PAYOUTS_FOLLOW_TIMEOUT: '0' });
    expect((await runCli(['run', '--sandbox'], { env })).stdout).toContain('folha.csv: recebido');
    // Ana's document and amount again, in a file of another name: held for a person.
    writeFile(inbox, 'adiantamento.csv', [HEADER, `adiant-1;${ANA}`].join('\r\n'));
    const run = await runCli(['run', '--sandbox'], { env: { ...env, ...settings } });
    const today = new Date().toISOString().slice(0, 10).split('-').reverse().join('/');
    const why = `possível duplicata: o mesmo documento e valor de folha.csv, linha 2, registrado no diário em ${today} (agora pendente, transação `;
    return { home, env, run, why };
  };

  it('run says why a row is held in Portuguese: a possible duplicate of another file', async () => {
    const { home, env, run, why } = await paidThenRepeated('duplicata');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stdout).toMatch(
      /^adiantamento\.csv: recebido; retida: 1 \(R\$ 100,00\); total das linhas válidas R\$ 100,00$/m,
    );
    const summary = run.stdout.slice(run.stdout.indexOf('adiantamento.csv:'));
    expect(summary).toContain(
      '  1 linha repete um pagamento de outro arquivo, pelo documento e valor ou pela referência (R$ 100,00): não é enviada até uma pessoa responder; cada resposta paga:',
    );
    expect(summary).toContain(
      '  pagamentos novos mesmo assim: payouts approve "adiantamento.csv" --new-batch --sandbox lista a linha que repete um pagamento já feito ou em andamento (R$ 100,00: Ana Souza R$ 100,00); ela é paga de novo só quando você der também a opção --repeats com o número 1, depois de conferir que ela é devida duas vezes',
    );
    expect(summary).not.toMatch(/possible duplicate|not sent|journaled|run:/);
    const result = readdirSync(join(home, 'results')).find((name) =>
      name.startsWith('adiantamento.'),
    );
    const rows = readCsv(join(home, 'results', result ?? ''), ';');
    expect(rows.map((row) => [row['Linha'], row['Situação']])).toEqual([['2', 'retida']]);
    expect(rows[0]?.['Mensagem']).toMatch(
      new RegExp(
        `^${why.replace(/[.()$]/g, '\\$&')}\\d+\\); não enviado\\. Se for mesmo um pagamento novo: payouts approve "adiantamento\\.csv" --new-batch --sandbox o lista`,
      ),
    );

    // For programs, the result (rfc4180) and --json keep the journal's English.
    const programs = await runCli(['run', '--sandbox'], {
      env: { ...env, PAYOUTS_RESULT_DIALECT: 'rfc4180' },
    });
    expect(programs.code).toBe(2);
    const english = readCsv(join(home, 'results', result ?? ''), ',');
    expect(english[0]?.['message']).toMatch(
      /^possible duplicate: the same document and amount as folha\.csv, line 2, journaled on \d{4}-\d\d-\d\d \(now pending, transaction \d+\); not sent\./,
    );
  });

  it('validate says in Portuguese which rows a run would hold, and why', async () => {
    const { home, env } = await paidThenRepeated('validar-duplicata');
    const file = writeFile(home, 'bonus.csv', [HEADER, `bonus-1;${ANA}`].join('\r\n'));
    const checked = await runCli(['validate', file], { env });
    expect(checked.stdout).toMatch(
      /\n {2}linha 2 \(possível duplicata\): possível duplicata: o mesmo documento e valor de adiantamento\.csv, linha 2, registrado no diário em .*; não enviado\. Se for mesmo um pagamento novo: payouts approve "bonus\.csv" --new-batch o lista, e só o paga de novo quando receber também a opção --repeats e a contagem dessas linhas que ele lista\n/,
    );
    expect(checked.stdout).not.toMatch(/possible duplicate|not sent|journaled/);
    // --json keeps the English, with the message's code for programs.
    const json = await runCli(['validate', file, '--json'], { env });
    const { holds } = JSON.parse(json.stdout) as {
      holds: { line: number; rule: string; message: string; code: string }[];
    };
    expect(holds).toEqual([
      {
        line: 2,
        rule: 'possible duplicate',
        code: 'heldDuplicate',
        message: expect.stringMatching(
          /^possible duplicate: the same document and amount as adiantamento\.csv, line 2/,
        ),
      },
    ]);
  });

  it('the approval report says why a row is held in Portuguese', async () => {
    const { home, run, why } = await paidThenRepeated('aprovar-duplicata', {
      PAYOUTS_REQUIRE_APPROVAL: 'true',
    });
    expect(run.stdout).toContain('adiantamento.csv: aguardando aprovação em awaiting-approval/');
    const report = readFileSync(
      join(home, 'awaiting-approval', 'adiantamento.csv.report.txt'),
      'utf8',
    );
    expect(report).toContain(`\n  1 retida (R$ 100,00)\n    linha 2: Ana Souza, R$ 100,00: ${why}`);
    expect(report).not.toMatch(/possible duplicate|not sent|journaled/);
  });
});
