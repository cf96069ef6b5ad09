import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { openAtomicCsv, type CsvDialect } from '../../src/csv/atomic-csv.js';
import { useTempFolder } from '../support/files.js';

describe('openAtomicCsv', () => {
  const folder = useTempFolder();

  it('gives the file its name only once it is complete', async () => {
    const path = join(folder(), 'out.csv');
    const file = openAtomicCsv(path, ['name', 'cpf']);
    await file.write(['Ana Souza', '52998224725']);
    expect(existsSync(path)).toBe(false);
    await file.commit();
    expect(readFileSync(path, 'utf8')).toBe('name,cpf\nAna Souza,52998224725\n');
    expect(readdirSync(folder())).toEqual(['out.csv']);
  });

  it('leaves no temporary file with the rows behind when the name cannot be taken', async () => {
    const path = join(folder(), 'taken');
    const file = openAtomicCsv(path, ['name', 'cpf']);
    await file.write(['Ana Souza', '52998224725']);
    mkdirSync(join(path, 'inside'), { recursive: true }); // a full folder now holds the name
    await expect(file.commit()).rejects.toThrow();
    expect(readdirSync(folder())).toEqual(['taken']);
  });

  // Cells that need quoting, and records enough to span many of the chunks it writes at once.
  const cells = [
    '',
    'plain',
    'a;b',
    'a,b',
    'say "hi"',
    'two\nlines',
    'cr\rhere',
    'crlf\r\n',
    'ç ã é',
    '"',
  ];
  const records = Array.from({ length: 5_000 }, (_, i) => [
    String(i),
    cells[i % cells.length] as string,
    cells[(i * 7) % cells.length] as string,
  ]);
  it.each<[string, CsvDialect]>([
    ['excel', { delimiter: ';', bom: true, recordDelimiter: 'windows' }],
    ['rfc4180', { delimiter: ',', bom: false, recordDelimiter: 'windows' }],
    ['plain', { delimiter: ',', bom: false, recordDelimiter: 'unix' }],
  ])('writes the bytes csv-stringify writes (%s)', async (_, dialect) => {
    const path = join(folder(), 'out.csv');
    const file = openAtomicCsv(path, ['line', 'first "one"', 'second;'], dialect);
    for (const record of records) await file.write(record);
    await file.commit();
    const expected = stringify(records, {
      header: true,
      columns: ['line', 'first "one"', 'second;'],
      delimiter: dialect.delimiter,
      bom: dialect.bom,
      record_delimiter: dialect.recordDelimiter,
      // A lone line break is quoted too: unquoted, it would end the record for any reader.
      quote_record_delimiter: true,
    });
    expect(readFileSync(path, 'utf8')).toBe(expected);
  });
});
