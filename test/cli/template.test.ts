/**
 * `payouts template`: an empty payout file with every column we read, as a Brazilian
 * Excel saves "CSV UTF-8", that LibreOffice Calc (pt-BR) splits into its columns, and that
 * `payouts validate` accepts once filled.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapHeader, TEMPLATE_HEADINGS } from '../../src/csv/header.js';
import { runCli } from '../support/cli.js';
import { englishWordsIn } from '../support/english-words.js';
import { useTempFolder } from '../support/files.js';
import { SOFFICE, readAsBrazilianSpreadsheet } from '../support/spreadsheet.js';

const required = process.env['PAYOUTS_REQUIRE_LIBREOFFICE'] === '1';

describe('payouts template', { timeout: 120_000 }, () => {
  const folder = useTempFolder();

  it('each heading is one we read, for the column it names, and the amount is in reais', () => {
    const headings = Object.values(TEMPLATE_HEADINGS);
    const reading = mapHeader(headings);
    expect(reading.ok).toBe(true);
    if (!reading.ok) return;
    for (const [field, heading] of Object.entries(TEMPLATE_HEADINGS))
      expect(reading.columns[field as keyof typeof reading.columns]?.heading).toBe(heading);
    expect(reading.ignored).toEqual([]);
  });

  it('writes to stdout: a byte-order mark, the headings split by ;, CRLF, no rows', async () => {
    const { code, stdout } = await runCli(['template']);
    expect(code).toBe(0);
    expect(stdout).toBe(
      '\uFEFFID do pagamento;Nome;CPF/CNPJ;Tipo de chave;Chave Pix;Valor;E-mail;Telefone\r\n',
    );
  });

  it('writes FILE, never over an existing one, and says how to save it from Excel; filled, it validates', async () => {
    const path = join(folder(), 'pagamentos.csv');
    const first = await runCli(['template', path]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`Written: ${path}\n`);
    expect(first.stderr).toContain(
      'save it from Excel with Arquivo > Salvar como > "CSV UTF-8 (delimitado por vírgulas)"',
    );
    writeFileSync(join(folder(), 'other.csv'), 'keep me');
    const again = await runCli(['template', join(folder(), 'other.csv')]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists: nothing was written');
    expect(readFileSync(join(folder(), 'other.csv'), 'utf8')).toBe('keep me');
    // Filled as an accountant would: the optional columns left empty.
    appendFileSync(
      path,
      ';Ana Souza;529.982.247-25;;ana@example.com;1.234,56;ana@example.com;(11) 98765-4321\r\n',
    );
    const check = await runCli(['validate', path]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('1 valid, 0 invalid');
    expect(check.stdout).toContain('valid rows total R$ 1.234,56');
  });

  it('speaks Portuguese with language pt-BR: what it wrote, how to fill and save it, and why not', async () => {
    const env = { PAYOUTS_LANGUAGE: 'pt-BR' };
    const path = join(folder(), 'pagamentos.csv');
    const first = await runCli(['template', path], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`Escrito: ${path}\n`);
    expect(first.stderr).toBe(
      `Preencha uma linha por pagamento (Valor como 1.234,56; CPF/CNPJ com ou sem os pontos; Tipo de chave e ID do pagamento podem ficar vazios), depois salve-o no Excel em Arquivo > Salvar como > "CSV UTF-8 (delimitado por vírgulas)" (ou "CSV (separado por vírgulas)"), e confira-o com: payouts validate "${path}"\n`,
    );
    const again = await runCli(['template', path], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `payouts template: ${path} já existe: nada foi escrito (dê outro nome, ou apague-o antes)`,
    );
    for (const said of [first.stdout, first.stderr, again.stderr])
      expect(englishWordsIn(said, [path])).toEqual([]);
  });

  it.skipIf(!SOFFICE && !required)(
    'opens in LibreOffice Calc (pt-BR) as one heading a column, accents intact',
    async () => {
      const path = join(folder(), 'modelo.csv');
      expect((await runCli(['template', path])).code).toBe(0);
      const [header] = await readAsBrazilianSpreadsheet(path);
      expect(header?.map((cell) => cell.value)).toEqual(Object.values(TEMPLATE_HEADINGS));
    },
  );
});
