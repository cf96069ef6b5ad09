import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';

const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));

describe('payouts validate', () => {
  const folder = useTempFolder();

  it('passes the clean sample: exit 0, no network', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'payroll-2026-11.csv')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^payroll-2026-11\.csv: 6 rows: 6 valid, 0 invalid, 0 skipped; valid rows total R\$ 27\.111,15$/m,
    );
    expect(result.stderr).not.toContain('SANDBOX');
  });

  it('reads the Brazilian Excel sample, skipping its total line', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'fornecedores-2026-11.csv'), '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      rows: 5,
      valid: 5,
      invalid: 0,
      skipped: 1,
      total: 2_609_865,
      encoding: 'windows-1252',
      delimiter: ';',
      orderIdsDerived: true,
      errors: [],
      fileErrors: [],
      skippedLines: [{ line: 7, reason: 'a total line, not a payout' }],
    });
  });

  it('a payroll export without e-mail and phone: filled from each key or the configured contacts, and said so', async () => {
    const file = writeFile(
      folder(),
      'folha.csv',
      [
        'Nome;CPF;Chave Pix;Valor',
        'Ana Souza;529.982.247-25;ana@example.com;3.000,00',
        'Bruno Lima;111.444.777-35;+55 21 99876-5432;2.500,00',
        'Caio Dias;390.533.447-05;390.533.447-05;1.000,00',
      ].join('\r\n') + '\r\n',
    );
    // Without the configured contacts, only the row whose key gives both is refused whole.
    const bare = await runCli(['validate', file, '--json']);
    expect(bare.code).toBe(2);
    const bareReport = JSON.parse(bare.stdout) as {
      valid: number;
      errors: { line: number; column: string | null; message: string }[];
    };
    expect(bareReport.valid).toBe(0);
    // No column of the file is to blame: the message names what is missing.
    expect(bareReport.errors.map((error) => [error.line, error.column])).toEqual([
      [2, null],
      [3, null],
      [4, null],
    ]);
    expect(bareReport.errors[0]?.message).toMatch(/^the file has no phone column/);
    expect(bareReport.errors[2]?.message).toBe(
      'the file has no e-mail column (the gateway requires one, and the Pix key is not an e-mail); the company can set a default e-mail: recipientEmail | the file has no phone column (the gateway requires one, and the Pix key is not a phone); the company can set a default phone: recipientPhone',
    );

    const env = {
      PAYOUTS_RECIPIENT_EMAIL: 'folha@empresa.com.br',
      PAYOUTS_RECIPIENT_PHONE: '(11) 3333-4444',
    };
    const filled = await runCli(['validate', file, '--json'], { env });
    expect(filled.code, filled.stdout).toBe(0);
    expect(JSON.parse(filled.stdout)).toMatchObject({
      valid: 3,
      filled: { email: { key: 1, default: 2 }, phone: { key: 1, default: 2 } },
    });
    const said = await runCli(['validate', file], { env });
    expect(said.stdout).toContain(
      'e-mail: not in the file for 3 rows: 1 from its Pix key, 2 from recipientEmail (folha@empresa.com.br)',
    );
    expect(said.stdout).toContain(
      'phone: not in the file for 3 rows: 1 from its Pix key, 2 from recipientPhone ((11) 3333-4444)',
    );
  });

  it("reads the accountant's own headings through the headings setting, from a --config file or the environment", async () => {
    const file = writeFile(
      folder(),
      'fornecedores.csv',
      [
        'Favorecido;CPF/CNPJ;Chave Pix;Valor Líquido;E-mail;Celular',
        'Ana Souza;529.982.247-25;ana@example.com;3.000,00;ana@example.com;(11) 98765-4321',
      ].join('\r\n') + '\r\n',
    );
    const without = await runCli(['validate', file]);
    expect(without.code).toBe(1);
    expect(without.stdout + without.stderr).toMatch(/missing columns: the amount/);
    const config = writeFile(
      folder(),
      'payouts.json',
      JSON.stringify({ headings: { 'Valor Líquido': 'amount' } }),
    );
    const viaFile = await runCli(['validate', file, '--config', config]);
    expect(viaFile.code, viaFile.stdout + viaFile.stderr).toBe(0);
    expect(viaFile.stdout).toContain('valid rows total R$ 3.000,00');
    expect(viaFile.stdout).toContain('  read by the headings setting: "Valor Líquido" as amount');
    const viaEnv = await runCli(['validate', file], {
      env: { PAYOUTS_HEADINGS: '{"Valor Líquido":"amount"}' },
    });
    expect(viaEnv.code).toBe(0);
    const mistaken = await runCli(['validate', file], {
      env: { PAYOUTS_HEADINGS: '{"Valor Líquido":"amout"}' },
    });
    expect(mistaken.code).toBe(1);
    expect(mistaken.stderr).toContain(
      'config: headings = {"Valor Líquido":"amout"} (from PAYOUTS_HEADINGS): "Valor Líquido": "amout" is not one of our columns; did you mean amount?',
    );
  });

  it('says which column it reads as the reference, one mapped by headings too, and which rows have none', async () => {
    const file = writeFile(
      folder(),
      'aluguel.csv',
      [
        'Fornecedor;CNPJ;Chave Pix;E-mail;Telefone;NF;Valor',
        'Imobiliária Sol;11.222.333/0001-81;sol@example.com;sol@example.com;(11) 3333-4444;1001;4.000,00',
        'Imobiliária Sol;11.222.333/0001-81;sol@example.com;sol@example.com;(11) 3333-4444;;350,00',
      ].join('\r\n') + '\r\n',
    );
    const result = await runCli(['validate', file]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `  each row's reference from column "NF": a payment with the same document and reference as an earlier one is held, whatever its age`,
    );
    expect(result.stdout).toMatch(
      /line 3, column "NF": is empty: this row is weighed as in a file without a reference/,
    );
    const pt = await runCli(['validate', file], { env: { PAYOUTS_LANGUAGE: 'pt-BR' } });
    expect(pt.stdout).toContain(`  referência de cada linha da coluna "NF"`);

    const own = writeFile(
      folder(),
      'reembolsos.csv',
      [
        'Nome;CPF;Chave Pix;E-mail;Celular;Protocolo;Valor',
        'Ana Souza;529.982.247-25;ana@example.com;ana@example.com;(11) 98765-4321;R-88;59,90',
      ].join('\r\n') + '\r\n',
    );
    const mapped = await runCli(['validate', own], {
      env: { PAYOUTS_HEADINGS: '{"Protocolo":"reference"}' },
    });
    expect(mapped.code, mapped.stdout + mapped.stderr).toBe(0);
    expect(mapped.stdout).toContain('  read by the headings setting: "Protocolo" as reference');
    expect(mapped.stdout).toContain(`  each row's reference from column "Protocolo"`);
  });

  it('explains every mistake by line and column, exit 2', async () => {
    const result = await runCli(['validate', join(SAMPLES, 'payroll-with-mistakes.csv')]);
    expect(result.code).toBe(2);
    for (const expected of [
      'line 3, column "CPF": 321.654.987-90 is not a valid CPF',
      'line 5, column "Valor": "1,5E+03" was turned into scientific notation',
      'line 6, column "Nome": is empty',
      'line 8, column "ID do pagamento": "ref-006" is already used on line 7',
      'line 10, column "Chave Pix": 11999999975 could be a CPF or a phone number',
      'line 12, column "Valor": 1.234 could mean thousands or decimals',
      'line 4, column "CPF": leading zeros restored: 1234567890 read as 01234567890',
    ]) {
      expect(result.stdout).toContain(expected);
    }
  });

  it('--json gives the figures and the errors; --report writes every row, formula-safe', async () => {
    const reportPath = join(folder(), 'report.csv');
    const result = await runCli([
      'validate',
      join(SAMPLES, 'payroll-with-mistakes.csv'),
      '--json',
      '--report',
      reportPath,
    ]);
    expect(result.code).toBe(2);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      rows: 12,
      valid: 3,
      invalid: 9,
      skipped: 0,
      total: 422_540,
      fileErrors: [],
    });
    expect(json.errors).toHaveLength(9);
    expect(json.errors[0]).toEqual({
      line: 3,
      column: 'CPF',
      code: 'cpfCheckDigits',
      message: expect.stringContaining('not a valid CPF'),
      mistakes: [
        { column: 'CPF', code: 'cpfCheckDigits', message: expect.stringContaining('not a valid') },
        { column: 'Chave Pix', code: 'keyDocument', message: expect.stringContaining('CPF key') },
      ],
    });

    // In the results' dialect (excel by default): a Brazilian Excel opens it in columns,
    // accents intact.
    const bytes = readFileSync(reportPath);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.toString('utf8')).toMatch(/^\uFEFFline;status;orderId;name;/);
    const records = parse(bytes, { columns: true, bom: true, delimiter: ';' }) as Record<
      string,
      string
    >[];
    expect(records.map((r) => r['line'])).toEqual([
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
      '11',
      '12',
      '13',
    ]);
    expect(records.filter((r) => r['status'] === 'valid')).toHaveLength(3);
    const formula = records.find((r) => r['line'] === '9');
    expect(formula?.['name']).toBe('\'=HYPERLINK("http://example.com","Clique")');
    for (const record of records) {
      for (const cell of Object.values(record)) expect(cell).not.toMatch(/^[=+\-@]/);
    }
  });

  it.each([
    // dialect, first bytes, the line of ref-003 (CPF with its zero restored), of ref-002 (invalid)
    [
      'excel',
      '\ufeffline;status;orderId;name;cpfCnpj;pixKeyType;pixKey;value;amountAsWritten;column;message\r\n',
      'ref-003;Isabela Rocha;012.345.678-90;EMAIL;isabela.rocha@example.com;2100,00;2.100,00;',
      '3;invalid;ref-002;Heitor Batista;321.654.987-90;CPF;321.654.987-90;980,00;980,00;CPF, Chave Pix;',
    ],
    [
      'rfc4180',
      'line,status,orderId,name,cpfCnpj,pixKeyType,pixKey,value,amountAsWritten,column,message\r\n',
      'ref-003,Isabela Rocha,01234567890,EMAIL,isabela.rocha@example.com,2100.00,"2.100,00",',
      '3,invalid,ref-002,Heitor Batista,321.654.987-90,CPF,321.654.987-90,980.00,"980,00","CPF, Chave Pix",',
    ],
  ])(
    '--report in the %s dialect: amounts in reais with its decimal mark, documents as it writes them',
    async (dialect, head, valid, invalid) => {
      const reportPath = join(folder(), `report.${dialect}.csv`);
      const result = await runCli(
        ['validate', join(SAMPLES, 'payroll-with-mistakes.csv'), '--report', reportPath],
        { env: { PAYOUTS_RESULT_DIALECT: dialect } },
      );
      expect(result.code).toBe(2);
      const text = readFileSync(reportPath, 'utf8');
      expect(text.startsWith(head)).toBe(true);
      expect(text).toContain(valid);
      expect(text).toContain(invalid);
    },
  );

  it('--json carries the strict readings of amounts, documents and keys by line and column, good rows kept', async () => {
    const path = writeFile(
      folder(),
      'fornecedores.csv',
      [
        'Nome,E-mail,Telefone,CPF/CNPJ,Tipo de chave,Chave Pix,Valor,Parcela',
        'Ana,ana@example.com,11987654321,529.982.247-25,CPF,529.982.247-25,10.00,12',
        'Bia,bia@example.com,11987654321,111.444.777-35,EMAIL,bia@example.com,"9 99",1',
        'Caio,caio@example.com,11987654321,111.444.777-35,EMAIL,caio@example.com,"R$ (1.234,56)",1',
        'Loja,loja@example.com,11987654321,505.596.314-60,EMAIL,loja@example.com,"10,00",1',
        'João,joao@example.com,11987654321,111.444.777-35,EMAIL,joão@example.com,"10,00",1',
        'Duda,duda@example.com,11987654321,111.444.777-35,EMAIL,duda@example.com,"1 234,56",2',
      ].join('\n') + '\n',
    );
    const result = await runCli(['validate', path, '--json']);
    expect(result.code).toBe(2);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      file: path,
      rows: 6,
      valid: 2,
      invalid: 4,
      total: 1000 + 123_456,
    });
    // Each of these rows has one mistake, its whole message.
    const one = ({
      line,
      ...mistake
    }: {
      line: number;
      column: string;
      code: string;
      message: string;
    }) => ({
      line,
      ...mistake,
      mistakes: [mistake],
    });
    expect(json.errors).toEqual([
      one({
        line: 3,
        column: 'Valor',
        code: 'misplacedSpace',
        message: expect.stringMatching(/^"9 99" has a space that does not separate thousands/),
      }),
      one({
        line: 4,
        column: 'Valor',
        code: 'amountNegative',
        message: expect.stringMatching(/^R\$ \(1\.234,56\) is negative \(R\$ -1\.234,56\)/),
      }),
      one({
        line: 5,
        column: 'CPF/CNPJ',
        code: 'cpfCheckDigits',
        message: expect.stringMatching(/^505\.596\.314-60 is not a valid CPF/),
      }),
      one({
        line: 6,
        column: 'Chave Pix',
        code: 'keyEmail',
        message: expect.stringMatching(/^is an EMAIL key, but "joão@example\.com" has "ã"/),
      }),
    ]);
  });

  it('says every mistake of a row, in the summary, --json and --report, one line a row, in both languages', async () => {
    const path = writeFile(
      folder(),
      'folha.csv',
      [
        'Nome;E-mail;Celular;CPF;Chave Pix;Valor',
        'Bia;bia@example.com;98765;111.444.777-35;bia@example.com;9 99',
      ].join('\n') + '\n',
    );
    const reportPath = join(folder(), 'report.csv');
    const text = await runCli(['validate', path, '--report', reportPath]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain(
      'line 2, column "Celular": "98765" is not a phone number with area code (like (11) 98765-4321 or +55 11 98765-4321) | Valor: "9 99" has a space that does not separate thousands',
    );
    const report = parse(readFileSync(reportPath), { columns: true, bom: true, delimiter: ';' });
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({
      column: 'Celular, Valor',
      message: expect.stringMatching(/^"98765" is not a phone .* \| Valor: "9 99" has a space/),
    });

    const json = JSON.parse((await runCli(['validate', path, '--json'])).stdout);
    expect(json.errors).toEqual([
      {
        line: 2,
        column: 'Celular',
        code: 'phoneInvalid',
        message: expect.stringMatching(/^"98765" is not a phone .* \| Valor: "9 99" has a space/),
        mistakes: [
          {
            column: 'Celular',
            code: 'phoneInvalid',
            message: expect.stringMatching(/^"98765" is not a phone number/),
          },
          {
            column: 'Valor',
            code: 'misplacedSpace',
            message: expect.stringMatching(/^"9 99" has a space/),
          },
        ],
      },
    ]);

    const pt = await runCli(['validate', path, '--report', reportPath], {
      env: { PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(pt.stdout).toMatch(
      /linha 2, coluna "Celular": "98765" não é um telefone.* \| Valor: "9 99" tem um espaço/,
    );
    const relatorio = parse(readFileSync(reportPath), { columns: true, bom: true, delimiter: ';' });
    expect(relatorio).toHaveLength(1);
    expect(Object.values(relatorio[0] as object)).toContainEqual(
      expect.stringMatching(/^"98765" não é um telefone.* \| Valor: "9 99" tem um espaço/),
    );
  });

  it('exit 1 with the reason when the file cannot be used', async () => {
    const empty = writeFile(folder(), 'empty.csv', '');
    const result = await runCli(['validate', empty]);
    expect(result.code).toBe(1);
    expect(result.stdout.trim()).toBe(
      'empty.csv is empty (0 bytes)\nNothing in it can be paid: fix the file and check it again.',
    );
    const missing = await runCli(['validate', join(folder(), 'nope.csv')]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('nope.csv does not exist: check its name and folder');
    const json = await runCli(['validate', empty, '--json']);
    expect(JSON.parse(json.stdout).fileErrors).toEqual([
      { kind: 'unusable', code: 'fileEmpty', message: 'is empty (0 bytes)' },
    ]);
  });

  it('flags a row identical to an earlier one (same person, key and amount): held by a run, exit 2', async () => {
    const ana = 'Ana,ana@example.com,11987654321,52998224725,52998224725,"10,00"';
    const path = writeFile(
      folder(),
      'bonus.csv',
      `name,email,phone,cpfCnpj,pixKey,amount\n${ana}\nBia,bia@example.com,11987654322,11144477735,bia@example.com,"10,00"\n${ana}\n`,
    );
    const result = await runCli(['validate', path]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      'line 4, column "name": identical to line 2 (the same name, document, Pix key and amount): held until a person confirms both are due; the run that takes the file prints the command that does',
    );
    // No command with a placeholder for the file: one that cannot be run as printed.
    expect(result.stdout).not.toMatch(/payouts approve FILE/);
    const json = JSON.parse((await runCli(['validate', path, '--json'])).stdout);
    expect(json).toMatchObject({ valid: 3, identical: 1 });
  });

  it('exit 2 and "held" when a control total does not match', async () => {
    const path = writeFile(
      folder(),
      'payroll.csv',
      'name,email,phone,cpfCnpj,pixKey,amount\nAna,ana@example.com,11987654321,52998224725,52998224725,"10,00"\n',
    );
    writeFile(folder(), 'payroll.csv.total', 'rows: 2\n');
    const result = await runCli(['validate', path]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      'Held, nothing in this file will be paid: control total mismatch: the file has 1 row, but payroll.csv.total says 2 rows',
    );
  });

  it('says so when the report cannot be written, exit 1', async () => {
    const result = await runCli([
      'validate',
      join(SAMPLES, 'payroll-2026-11.csv'),
      '--report',
      join(folder(), 'no', 'such', 'r.csv'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      /^payouts validate: cannot write the report to .*r\.csv \(ENOENT\)$/,
    );
    // A folder for a report: refused before anything is written, nothing left behind.
    const into = join(folder(), 'reports');
    mkdirSync(into);
    const before = readdirSync(folder());
    const toFolder = await runCli([
      'validate',
      join(SAMPLES, 'payroll-2026-11.csv'),
      '--report',
      into,
    ]);
    expect(toFolder.code).toBe(1);
    expect(toFolder.stderr.trim()).toBe(
      `payouts validate: --report ${into} is a folder: give a file name, like ${join(into, 'report.csv')}`,
    );
    expect(readdirSync(folder())).toEqual(before);
    expect(readdirSync(into)).toEqual([]);
  });
  it("a reader that stops early (| head) ends nothing badly: the exit code is the check's, no stack trace", async () => {
    const rows = Array.from(
      { length: 3000 },
      (_, i) => `Ana ${i},ana${i}@example,11987654321,52998224725,52998224725,"10,00"`,
    );
    const path = writeFile(
      folder(),
      'many.csv',
      ['name,email,phone,cpfCnpj,pixKey,amount', ...rows, ''].join('\n'),
    );
    const child = spawn(process.execPath, [BIN, 'validate', path, '--json'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit');
    child.stdout.destroy(); // the reader goes away before the first line

    const [code] = (await exited) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(2);
  });
});
