/**
 * A CSV file read by a real spreadsheet program, the way a Brazilian Excel user opens it:
 * LibreOffice Calc, headless, importing `;`-separated UTF-8 with the pt-BR locale (1046),
 * then saved as flat OpenDocument XML, whose cells carry the type and value Calc read.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where LibreOffice is, or undefined: Debian's libreoffice-calc-nogui puts it here. */
export const SOFFICE = ['/usr/bin/soffice', '/usr/bin/libreoffice'].find((path) =>
  existsSync(path),
);

export interface Cell {
  type: string;
  /** The number Calc read, for a float; its date-time (`2026-11-23T17:41:07`), for a date; the text, for a string. */
  value: number | string;
}

/** The cells of `csvPath` as Calc reads it in pt-BR, split on `separator`. */
export async function readAsBrazilianSpreadsheet(
  csvPath: string,
  separator = ';',
): Promise<Cell[][]> {
  if (!SOFFICE)
    throw new Error('LibreOffice is not installed (apt-get install libreoffice-calc-nogui)');
  const work = mkdtempSync(join(tmpdir(), 'payouts-calc-'));
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        SOFFICE as string,
        [
          '--headless',
          '--norestore',
          // A profile of its own: two conversions at once never share one.
          `-env:UserInstallation=${pathToFileURL(join(work, 'profile')).href}`,
          // Separator, quote " (34), UTF-8 (76), from line 1, Portuguese (Brazil), quoted
          // cells not forced to text, special numbers (dates, 1E5) detected: every cell
          // read as if typed, as Excel reads a CSV.
          `--infilter=CSV:${separator.charCodeAt(0)},34,76,1,,1046,false,true`,
          '--convert-to',
          'fods',
          '--outdir',
          work,
          csvPath,
        ],
        { timeout: 120_000 },
        (error, _stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
      );
    });
    const xml = readFileSync(join(work, basename(csvPath).replace(/\.csv$/, '.fods')), 'utf8');
    return rowsOf(xml);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function rowsOf(xml: string): Cell[][] {
  const rows: Cell[][] = [];
  for (const [, row = ''] of xml.matchAll(/<table:table-row[^>]*>([\s\S]*?)<\/table:table-row>/g)) {
    const cells: Cell[] = [];
    for (const match of row.matchAll(
      /<table:table-cell([^>]*?)(?:\/>|>([\s\S]*?)<\/table:table-cell>)/g,
    )) {
      const attributes = match[1] ?? '';
      const type = /office:value-type="([^"]+)"/.exec(attributes)?.[1] ?? 'empty';
      const text = [...(match[2] ?? '').matchAll(/<text:p>([\s\S]*?)<\/text:p>/g)]
        .map((p) => unescapeXml((p[1] ?? '').replace(/<[^>]+>/g, '')))
        .join('\n');
      const number = /office:value="([^"]+)"/.exec(attributes)?.[1];
      const date = /office:date-value="([^"]+)"/.exec(attributes)?.[1];
      const repeated = Number(/table:number-columns-repeated="(\d+)"/.exec(attributes)?.[1] ?? 1);
      const cell: Cell = {
        type,
        value: type === 'float' && number ? Number(number) : type === 'date' && date ? date : text,
      };
      // Empty cells run to the sheet's last column at the end of a row: dropped below.
      for (let i = 0; i < Math.min(repeated, 1024); i++) cells.push(cell);
    }
    while (cells.at(-1)?.type === 'empty') cells.pop();
    if (cells.length > 0) rows.push(cells);
  }
  return rows;
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
