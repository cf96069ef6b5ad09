/**
 * A result file and a validation report opened as a Brazilian Excel user opens them, by a
 * real spreadsheet program (LibreOffice Calc, pt-BR): documents stay text with their
 * leading zeros, amounts are numbers, accents are intact, every value in its own column.
 * CI installs LibreOffice and sets PAYOUTS_REQUIRE_LIBREOFFICE=1, so there it never
 * skips; a developer machine without it skips, and says so.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { passHome } from '../support/pass-home.js';
import { SOFFICE, readAsBrazilianSpreadsheet, type Cell } from '../support/spreadsheet.js';

const required = process.env['PAYOUTS_REQUIRE_LIBREOFFICE'] === '1';
if (!SOFFICE && !required) {
  console.warn('LibreOffice is not installed: the spreadsheet read-back tests are skipped');
}

// A CPF and a CNPJ starting with 0, a phone key, accents, and an invalid row (its CPF).
const PAYROLL = [
  'Nome;CPF;E-mail;Celular;Tipo;Chave Pix;Valor',
  'João Conceição;012.345.678-90;joao@example.com;(11) 98765-4321;CPF;012.345.678-90;1.234,56',
  'Empresa Ltda;04.252.011/0001-10;fin@example.com;(11) 3333-4444;CNPJ;04.252.011/0001-10;10,00',
  'Ana Souza;123;ana@example.com;(11) 98765-4321;E-mail;ana@example.com;5,00',
  'Padaria Pão de Mel;11.222.333/0001-81;pao@example.com;(85) 98800-1122;Telefone;(85) 98800-1122;980,00',
];

/** An instant as São Paulo's clocks read it, as if that wall time were UTC (to compare with Calc's zone-less date-times). */
function saoPauloWallClock(ms: number): number {
  const wall = new Date(ms).toLocaleString('sv-SE', { timeZone: 'America/Sao_Paulo' });
  return Date.parse(`${wall.replace(' ', 'T')}Z`);
}

/** The sheet's rows as records by heading, each cell with the type Calc gave it. */
function byHeading(rows: Cell[][]): Record<string, Cell>[] {
  const [header = [], ...data] = rows;
  return data.map((row) =>
    Object.fromEntries(
      header.map((heading, index) => [
        String(heading.value),
        row[index] ?? { type: 'empty', value: '' },
      ]),
    ),
  );
}

describe.skipIf(!SOFFICE && !required)(
  'read by LibreOffice Calc in Portuguese (Brazil)',
  { timeout: 180_000 },
  () => {
    const folder = useTempFolder();

    it('a result file: documents as text with their zeros, amounts as numbers, accents intact, our time', async () => {
      const home = await passHome();
      home.drop('folha.csv', PAYROLL);
      expect((await home.run()).exit).toBe(2); // the invalid row needs a person
      const [result] = readdirSync(home.folders.results).filter((name) => name.endsWith('.csv'));
      const rows = byHeading(
        await readAsBrazilianSpreadsheet(join(home.folders.results, result ?? '')),
      );
      expect(rows.map((row) => [row['line']?.value, row['status']?.value])).toEqual([
        [2, 'paid'],
        [3, 'paid'],
        [4, 'invalid'],
        [5, 'paid'],
      ]);
      const [joao, empresa, ana, padaria] = rows;
      expect(joao?.['name']).toEqual({ type: 'string', value: 'João Conceição' });
      expect(joao?.['cpfCnpj']).toEqual({ type: 'string', value: '012.345.678-90' });
      expect(joao?.['pixKey']).toEqual({ type: 'string', value: '012.345.678-90' });
      expect(joao?.['value']).toEqual({ type: 'float', value: 1234.56 });
      expect(joao?.['fee']).toEqual({ type: 'float', value: 0.5 });
      expect(joao?.['net']?.type).toBe('float');
      // Both times are date-times to Calc, in São Paulo's time (timeZone), a moment apart.
      const created = joao?.['createdAt'];
      const processed = joao?.['processedAt'];
      expect([created?.type, processed?.type]).toEqual(['date', 'date']);
      const createdMs = Date.parse(`${String(created?.value)}Z`);
      const processedMs = Date.parse(`${String(processed?.value)}Z`);
      expect(processedMs - createdMs).toBeGreaterThanOrEqual(0);
      expect(processedMs - createdMs).toBeLessThan(5 * 60_000);
      expect(Math.abs(createdMs - saoPauloWallClock(Date.now()))).toBeLessThan(5 * 60_000);
      expect(empresa?.['cpfCnpj']).toEqual({ type: 'string', value: '04.252.011/0001-10' });
      expect(empresa?.['pixKey']).toEqual({ type: 'string', value: '04.252.011/0001-10' });
      expect(empresa?.['value']).toEqual({ type: 'float', value: 10 });
      // An invalid line still has its row's name and value.
      expect(ana?.['name']).toEqual({ type: 'string', value: 'Ana Souza' });
      expect(ana?.['value']).toEqual({ type: 'float', value: 5 });
      // A phone key stays text, never a number and never with a visible apostrophe.
      expect(padaria?.['pixKey']).toEqual({ type: 'string', value: '(85) 98800-1122' });
      expect(padaria?.['name']).toEqual({ type: 'string', value: 'Padaria Pão de Mel' });
      expect(padaria?.['value']).toEqual({ type: 'float', value: 980 });
    });

    it("a result file in Portuguese: headings, states and an invalid line's message as accounting reads them", async () => {
      const home = await passHome();
      home.drop('folha.csv', PAYROLL);
      expect((await home.run({ language: 'pt-BR' })).exit).toBe(2);
      const [result] = readdirSync(home.folders.results).filter((name) => name.endsWith('.csv'));
      const rows = byHeading(
        await readAsBrazilianSpreadsheet(join(home.folders.results, result ?? '')),
      );
      expect(
        rows.map((row) => [row['Linha']?.value, row['Nome']?.value, row['Situação']?.value]),
      ).toEqual([
        [2, 'João Conceição', 'pago'],
        [3, 'Empresa Ltda', 'pago'],
        [4, 'Ana Souza', 'inválida'],
        [5, 'Padaria Pão de Mel', 'pago'],
      ]);
      const [joao, , ana] = rows;
      expect(joao?.['CPF/CNPJ']).toEqual({ type: 'string', value: '012.345.678-90' });
      expect(joao?.['Valor']).toEqual({ type: 'float', value: 1234.56 });
      expect(joao?.['Tarifa']).toEqual({ type: 'float', value: 0.5 });
      expect(ana?.['Valor']).toEqual({ type: 'float', value: 5 });
      expect(ana?.['Mensagem']?.value).toMatch(/^CPF: 123 não é um CPF válido/);
    });

    // The reading is strict enough to fail: the bare digits rfc4180 writes for programs
    // lose a CPF's leading zero in a spreadsheet.
    it('an rfc4180 result is for programs: Calc reads its bare CPF as a number, zero lost', async () => {
      const home = await passHome();
      home.drop('folha.csv', PAYROLL);
      expect((await home.run({ resultDialect: 'rfc4180' })).exit).toBe(2);
      const [result] = readdirSync(home.folders.results).filter((name) => name.endsWith('.csv'));
      const [joao] = byHeading(
        await readAsBrazilianSpreadsheet(join(home.folders.results, result ?? ''), ','),
      );
      expect(joao?.['cpfCnpj']).toEqual({ type: 'float', value: 1234567890 });
    });

    it('a validation report: every value in its own column, accents intact', async () => {
      const input = writeFile(folder(), 'folha.csv', PAYROLL.join('\r\n') + '\r\n');
      const report = join(folder(), 'folha.report.csv');
      expect((await runCli(['validate', input, '--report', report])).code).toBe(2);
      const rows = byHeading(await readAsBrazilianSpreadsheet(report));
      expect(
        rows.map((row) => [row['line']?.value, row['status']?.value, row['name']?.value]),
      ).toEqual([
        [2, 'valid', 'João Conceição'],
        [3, 'valid', 'Empresa Ltda'],
        [4, 'invalid', 'Ana Souza'],
        [5, 'valid', 'Padaria Pão de Mel'],
      ]);
      const [joao, empresa, ana, padaria] = rows;
      expect(joao?.['cpfCnpj']).toEqual({ type: 'string', value: '012.345.678-90' });
      expect(joao?.['pixKey']).toEqual({ type: 'string', value: '012.345.678-90' });
      expect(joao?.['value']).toEqual({ type: 'float', value: 1234.56 });
      expect(empresa?.['cpfCnpj']).toEqual({ type: 'string', value: '04.252.011/0001-10' });
      expect(ana?.['value']).toEqual({ type: 'float', value: 5 });
      expect(padaria?.['pixKey']).toEqual({ type: 'string', value: '(85) 98800-1122' });
      expect(padaria?.['value']).toEqual({ type: 'float', value: 980 });
    });
  },
);
