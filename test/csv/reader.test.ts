import { readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readPayoutFile, type ReadOptions } from '../../src/csv/reader.js';
import type { RowOutcome } from '../../src/csv/row.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { inEnglish, type English } from '../support/english.js';

const OPTIONS: ReadOptions = {
  encoding: 'auto',
  maxFileBytes: 512 * 1024 * 1024,
  maxPayoutCents: 10_000_000,
  maxFileCents: 1_000_000_000,
};

async function readAll(path: string, options: Partial<ReadOptions> = {}) {
  const rows: RowOutcome[] = [];
  const report = await readPayoutFile(path, { ...OPTIONS, ...options }, (row) => {
    rows.push(row);
  });
  return inEnglish({ report, rows });
}

const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,value';
const ROW = (id: string, name = 'Ana Souza', cents = '1000') =>
  `${id},${name},ana@example.com,11987654321,52998224725,CPF,52998224725,${cents}`;

const openDescriptors = () => readdirSync('/proc/self/fd').length;
/** The repeat tables' spill files this process holds open (removed from the folder at once). */
const keyFilesOpen = () =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const path = readlinkSync(`/proc/self/fd/${fd}`);
      return path.includes('payouts-keys-') ? [path] : [];
    } catch {
      return []; // closed while we looked (the listing's own descriptor)
    }
  });

const lines = (rows: readonly { line: number; kind: string }[]) =>
  rows.map((row) => `${row.line}:${row.kind}`);
const valid = (rows: English<RowOutcome>[]) =>
  rows.flatMap((row) => (row.kind === 'valid' ? [row.payout] : []));

describe('readPayoutFile', () => {
  const folder = useTempFolder();

  it('reads a clean UTF-8 file', async () => {
    const path = writeFile(
      folder(),
      'payroll.csv',
      `${HEADER}\n${ROW('p-1')}\n${ROW('p-2', 'Bia', '2500')}\n`,
    );
    const { report, rows } = await readAll(path);
    expect(report).toMatchObject({
      encoding: 'utf-8',
      delimiter: ',',
      rows: 2,
      valid: 2,
      invalid: 0,
      totalCents: 3500,
      problems: [],
    });
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(lines(rows)).toEqual(['2:valid', '3:valid']);
  });

  it('strips a UTF-8 byte-order mark before the header', async () => {
    const path = writeFile(
      folder(),
      'bom.csv',
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(`${HEADER}\r\n${ROW('p-1', 'João')}\r\n`),
      ]),
    );
    const { report, rows } = await readAll(path);
    expect(report).toMatchObject({ encoding: 'utf-8', valid: 1 });
    expect(valid(rows)[0]?.name).toBe('João');
  });

  it('detects Windows-1252 from its bytes, semicolons, CRLF, reais and a total line', async () => {
    const text =
      'Favorecido;CPF/CNPJ;E-mail;Telefone;Tipo de Chave;Chave PIX;Valor (R$)\r\n' +
      'João Conceição;529.982.247-25;joao@example.com;(11) 98765-4321;CPF;529.982.247-25;R$ 1.234,56\r\n' +
      'Açougue São Jorge;11.222.333/0001-81;fin@example.com;(11) 3456-7890;CNPJ;11.222.333/0001-81;R$ 100,00\r\n' +
      'Total;;;;;;R$ 1.334,56\r\n';
    const path = writeFile(folder(), 'fornecedores.csv', Buffer.from(text, 'latin1'));
    const { report, rows } = await readAll(path);
    expect(report).toMatchObject({
      encoding: 'windows-1252',
      delimiter: ';',
      valid: 2,
      skipped: 1,
      totalCents: 133_456,
      problems: [],
    });
    expect(valid(rows).map((p) => p.name)).toEqual(['João Conceição', 'Açougue São Jorge']);
    expect(report.header?.orderIdsDerived).toBe(true);
    expect(lines(rows)).toEqual(['2:valid', '3:valid', '4:skipped']);
  });

  it('reads UTF-16 with a byte-order mark (Excel "Unicode text"), tab-delimited', async () => {
    const text = `${HEADER.replaceAll(',', '\t')}\r\n${ROW('p-1', 'Zoë').replaceAll(',', '\t')}\r\n`;
    const path = writeFile(
      folder(),
      'unicode.txt',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    );
    const { report, rows } = await readAll(path);
    expect(report).toMatchObject({ encoding: 'utf-16le', delimiter: '\t', valid: 1 });
    expect(valid(rows)[0]?.name).toBe('Zoë');
  });

  it('reads a character cut between two 256 KiB chunks as one character', async () => {
    // Pad so that the two bytes of "ã" fall on either side of the chunk boundary.
    const head = `${HEADER}\n`;
    const filler = Array.from({ length: 3000 }, (_, i) => ROW(`f-${i}`)).join('\n') + '\n';
    const prefix = `p-x,`;
    const pad = 256 * 1024 - Buffer.byteLength(head + filler + prefix) - 1;
    const name = `${'N'.repeat(pad)}ão`;
    const text = `${head}${filler}${prefix}${name},ana@example.com,11987654321,52998224725,CPF,52998224725,1000\n`;
    expect(Buffer.from(text).subarray(256 * 1024 - 1, 256 * 1024 + 1)).toEqual(Buffer.from('ã'));
    const { report, rows } = await readAll(writeFile(folder(), 'boundary.csv', text), {
      maxFileCents: 1e12,
    });
    expect(report).toMatchObject({ encoding: 'utf-8', invalid: 1 }); // the name is over 140 characters
    const last = rows.at(-1);
    expect(last?.kind === 'invalid' && last.cells.name?.endsWith('Não')).toBe(true);
  });

  it('finds a Windows-1252 byte far into an otherwise ASCII file', async () => {
    const filler = Array.from({ length: 5000 }, (_, i) => ROW(`f-${i}`)).join('\n');
    const text = Buffer.concat([
      Buffer.from(`${HEADER}\n${filler}\n`),
      Buffer.from(`${ROW('p-x', 'João')}\n`, 'latin1'),
    ]);
    const { report, rows } = await readAll(writeFile(folder(), 'late.csv', text), {
      maxFileCents: 1e12,
    });
    expect(report).toMatchObject({ encoding: 'windows-1252', valid: 5001 });
    expect(valid(rows).at(-1)?.name).toBe('João');
  });

  it('honours a forced encoding, and says when forced UTF-8 does not fit', async () => {
    const path = writeFile(
      folder(),
      'latin.csv',
      Buffer.from(`${HEADER}\n${ROW('p-1', 'João')}\n`, 'latin1'),
    );
    expect((await readAll(path, { encoding: 'latin1' })).report.encoding).toBe('windows-1252');
    const forced = await readAll(path, { encoding: 'utf-8' });
    expect(forced.report.problems).toEqual([
      {
        kind: 'unusable',
        message: expect.stringMatching(
          /^is not valid UTF-8 \(line 2, byte 0xE3 at offset \d+\) but encoding is set to utf-8: use auto or windows-1252/,
        ),
      },
    ]);
  });

  it('keeps line numbers true across a sep= line, quoted delimiters, quoted line breaks and blank lines', async () => {
    const text = `sep=,\r\n${HEADER}\r\n${ROW('p-1', '"Souza, Ana"')}\r\n${ROW('p-2', '"Ana\r\nMaria"')}\r\n\r\n,,,,,,,\r\n${ROW('p-3', 'Bad', 'x')}\r\n${ROW('p-4')}\r\n`;
    const path = writeFile(folder(), 'quoted.csv', text);
    const { report, rows } = await readAll(path);
    expect(lines(rows)).toEqual([
      '3:valid',
      '4:invalid',
      '6:blank',
      '7:blank',
      '8:invalid',
      '9:valid',
    ]);
    expect(rows[1]).toMatchObject({
      mistakes: [{ column: 'name', message: expect.stringContaining('runs over lines 4–5') }],
    });
    expect(valid(rows).map((p) => p.name)).toEqual(['Souza, Ana', 'Ana Souza']);
    expect(report).toMatchObject({ rows: 4, valid: 2, invalid: 2, blank: 2 });
  });

  it('splits rows at any line end: one LF line in a CRLF file does not merge two rows', async () => {
    const text = `${HEADER}\r\n${ROW('p-1')}\n${ROW('p-2')}\r\n${ROW('p-3')}\r${ROW('p-4')}\r\n`;
    const { rows } = await readAll(writeFile(folder(), 'mixed.csv', text));
    expect(lines(rows)).toEqual(['2:valid', '3:valid', '4:valid', '5:valid']);
  });

  // A CRLF cut at 256 KiB, a boundary between two reads (of 32 KiB each): its CR is the last byte of one.
  const straddling = () => {
    const rows = Array.from({ length: 4000 }, (_, i) => ROW(`p-${i}`, `Ana ${i}`));
    const text = `${HEADER}\n${rows.join('\r\n')}\r\n`;
    const pad = 262_143 - text.lastIndexOf('\r', 262_143);
    return text.replace('Ana 0', `Ana ${'a'.repeat(pad)}0`);
  };
  it.each([
    [
      'CRLF, blank lines, a last line without its end',
      `${HEADER}\r\n${ROW('p-1')}\r\n\r\n,,,\r\n\r\n${ROW('p-2')}`,
    ],
    ['LF, ending in blank lines', `${HEADER}\n${ROW('p-1')}\n\n\n`],
    ['CR only, and a total line', `${HEADER}\r${ROW('p-1')}\r${ROW('p-2')}\rTotal,,,,,,,20\r`],
    [
      'all three line ends, a lone CR last',
      `${HEADER}\r\n${ROW('p-1')}\n${ROW('p-2')}\r\r\n${ROW('p-3')}\r`,
    ],
    [
      'semicolons, Windows-1252, stray values',
      `${HEADER.replaceAll(',', ';')};\r\n${ROW('p-1', 'João').replaceAll(',', ';')};x\r\n`,
    ],
    ['a CRLF cut between two reads of a mixed file', straddling()],
  ])('reads a file without quotes as csv-parse reads it with one: %s', async (_, text) => {
    // The header quoted names the same columns, and sends the file through csv-parse.
    const quotedHeader = text.replace('orderId', '"orderId"');
    const encode = (t: string) => (t.includes('João') ? Buffer.from(t, 'latin1') : t);
    const plain = await readAll(writeFile(folder(), 'plain.csv', encode(text)));
    const quoted = await readAll(writeFile(folder(), 'quoted.csv', encode(quotedHeader)));
    const { sha256: _a, bytes: _b, file: _c, ...plainReport } = plain.report;
    const { sha256: _d, bytes: _e, file: _f, ...quotedReport } = quoted.report;
    expect(plainReport).toEqual(quotedReport);
    expect(plain.rows).toEqual(quoted.rows);
    expect(plain.rows.length).toBeGreaterThan(0);
  });

  it('reads any file without quotes as csv-parse reads it (random files)', async () => {
    // Rows of good and broken cells, stray delimiters, blank lines and every kind of
    // line end: the split path must give what csv-parse gives, row for row and message
    // for message, or a payout could be read differently by the path a file happens to take.
    const cell = fc.constantFrom('p-1', 'p-2', 'Ana', ' Bia ', '', '1000', '10,50', 'x;y', 'ç');
    const line = fc.oneof(
      fc.constant(''),
      fc.array(cell, { minLength: 1, maxLength: 10 }).map((cells) => cells.join(',')),
      fc.constantFrom(ROW('p-1'), ROW('p-2', 'Bia', '2500'), ROW('p-1', 'Ana', '12,5')),
    );
    const end = fc.constantFrom('\n', '\r\n', '\r');
    const body = fc.array(fc.tuple(line, end), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (lines, endless) => {
        let text = `${HEADER}\n${lines.map(([l, e]) => l + e).join('')}`;
        if (endless) text = text.replace(/(\r\n|\r|\n)$/, '');
        const plain = await readAll(writeFile(folder(), 'plain.csv', text));
        const quoted = await readAll(
          writeFile(folder(), 'quoted.csv', text.replace('orderId', '"orderId"')),
        );
        const { sha256: _a, bytes: _b, file: _c, ...plainReport } = plain.report;
        const { sha256: _d, bytes: _e, file: _f, ...quotedReport } = quoted.report;
        expect(plainReport).toEqual(quotedReport);
        expect(plain.rows).toEqual(quoted.rows);
      }),
      { numRuns: 150 },
    );
  });

  it('reads a long file of CR-only line ends (a Mac CSV) line by line, and still finds its long line', async () => {
    const rows = Array.from({ length: 2_000 }, (_, i) => ROW(`p-${i}`, `Ana ${i}`));
    const text = `${HEADER}\r${rows.join('\r')}\r`;
    expect(text.length).toBeGreaterThan(100_000);
    const { report } = await readAll(writeFile(folder(), 'mac.csv', text));
    expect(report).toMatchObject({ valid: 2_000, invalid: 0, problems: [] });

    const long = `${HEADER}\r${ROW('p-1')}\r${ROW('p-2', 'a'.repeat(100_001))}\r${ROW('p-3')}\r`;
    const refused = await readAll(writeFile(folder(), 'mac-long.csv', long));
    expect(refused.report.problems).toEqual([
      { kind: 'unusable', message: expect.stringContaining('line 3') },
    ]);
  });

  it('shows a missing closing quote as the rows it swallowed, never as a silent gap', async () => {
    const text = `${HEADER}\n${ROW('p-1')}\n${ROW('p-2', '"Ana')}\n${ROW('p-3')}\n${ROW('p-4', 'Bia"')}\n${ROW('p-5')}\n`;
    const { report, rows } = await readAll(writeFile(folder(), 'swallow.csv', text));
    expect(lines(rows)).toEqual(['2:valid', '3:invalid', '6:valid']);
    expect(rows[1]).toMatchObject({
      mistakes: [
        { column: 'name', message: expect.stringContaining('runs over lines 3–5') },
        { column: 'name', message: 'is 147 characters long; at most 140' },
      ],
    });
    expect(report).toMatchObject({ valid: 2, invalid: 1 });
  });

  it('refuses a file that mixes UTF-8 and Windows-1252, whose orderIds would change once fixed', async () => {
    const text = Buffer.concat([
      Buffer.from(`${HEADER}\n${ROW('p-1', 'João')}\n`, 'utf8'),
      Buffer.from(`${ROW('p-2', 'Conceição')}\n`, 'latin1'),
    ]);
    const { report } = await readAll(writeFile(folder(), 'mixed-enc.csv', text));
    expect(report.problems).toEqual([
      {
        kind: 'unusable',
        message: expect.stringMatching(
          /^mixes encodings: UTF-8 characters \(line 2, byte 0xC3 at offset \d+\) and bytes that are not UTF-8 \(line 3, byte 0xE7 at offset \d+\);/,
        ),
      },
    ]);
  });

  it('holds a file whose total line gives an amount that cannot be read', async () => {
    const text = `${HEADER}\n${ROW('p-1')}\nTotal,,,,,,,#VALUE!\n`;
    const { report } = await readAll(writeFile(folder(), 'value.csv', text));
    expect(report.problems).toEqual([
      {
        kind: 'held',
        message: expect.stringContaining(
          'the total line (line 3) gives an amount that cannot be read ("#VALUE!")',
        ),
      },
    ]);
  });

  it("lets the caller's own failure through, and releases the file", async () => {
    const path = writeFile(folder(), 'payroll.csv', `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\n`);
    const before = openDescriptors();
    for (let i = 0; i < 20; i++) {
      await expect(
        readPayoutFile(path, OPTIONS, () => {
          throw new Error('SQLITE_BUSY: database is locked');
        }),
      ).rejects.toThrow('SQLITE_BUSY');
      await readAll(writeFile(folder(), 'bad.csv', 'date,debit\n1,2\n'));
    }
    // Closed a moment after the read ends: waited for, within a bound.
    for (let i = 0; i < 200 && openDescriptors() > before + 2; i++) await delay(10);
    expect(openDescriptors()).toBeLessThanOrEqual(before + 2);
  });

  it('holds a file whose total line does not match, with both figures', async () => {
    const path = writeFile(
      folder(),
      'cut.csv',
      `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\nTotal,,,,,,,3000\n`,
    );
    const { report } = await readAll(path);
    expect(report.problems).toEqual([
      {
        kind: 'held',
        message:
          'control total mismatch: the file has R$ 20,00, but the total line (line 4) says R$ 30,00; the file may be truncated or edited, so none of it is paid: export it again, or fix the rows or the total, and drop the corrected file in the inbox',
      },
    ]);
  });

  it('checks a sidecar .total file, and holds the file on a mismatch or an unreadable sidecar', async () => {
    const path = writeFile(folder(), 'payroll.csv', `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\n`);
    writeFile(folder(), 'payroll.csv.total', 'rows: 2\ntotal: 20,00\n');
    expect((await readAll(path)).report.problems).toEqual([]);
    writeFile(folder(), 'payroll.csv.total', 'rows: 3\ntotal: 30,00\n');
    expect((await readAll(path)).report.problems).toEqual([
      {
        kind: 'held',
        message: expect.stringContaining(
          'the file has 2 rows and R$ 20,00, but payroll.csv.total says 3 rows and R$ 30,00',
        ),
      },
    ]);
    writeFile(folder(), 'payroll.csv.total', 'about 2 rows\n');
    expect((await readAll(path)).report.problems).toEqual([
      { kind: 'held', message: expect.stringContaining('payroll.csv.total line 1') },
    ]);
  });

  it('holds a file over the per-file limit, and refuses one over the size limit unread', async () => {
    const path = writeFile(
      folder(),
      'big.csv',
      `${HEADER}\n${ROW('p-1', 'A', '600')}\n${ROW('p-2', 'B', '600')}\n`,
    );
    expect((await readAll(path, { maxFileCents: 1000 })).report.problems).toEqual([
      {
        kind: 'held',
        message:
          'its valid rows add up to R$ 12,00, over the limit of R$ 10,00 per file (maxFileCents)',
      },
    ]);
    const tooBig = await readAll(path, { maxFileBytes: 10 });
    expect(tooBig.report.problems[0]?.message).toMatch(/over the limit of 10 \(maxFileBytes\)/);
    expect(tooBig.rows).toEqual([]);
  });

  it('takes an orderId column blank in every row as absent: orderIds are derived', async () => {
    const header = 'orderId,name,email,phone,cpfCnpj,pixKey,amount';
    const rows = [
      ',Ana Souza,ana@example.com,11987654321,52998224725,52998224725,"10,00"',
      ' ,Bia Lima,bia@example.com,11987654322,11144477735,bia@example.com,"20,00"',
    ];
    const { report, rows: read } = await readAll(
      writeFile(folder(), 'folha.csv', [header, ...rows].join('\n')),
    );
    expect(report).toMatchObject({ valid: 2, invalid: 0 });
    expect(report.header?.orderIdsDerived).toBe(true);
    expect(report.header?.ignored).toContain('orderId (blank in every row)');
    expect(valid(read).map((p) => p.orderIdDerived)).toEqual([true, true]);
  });

  it('keeps a blank orderId cell an invalid row when other rows have one', async () => {
    const header = 'orderId,name,email,phone,cpfCnpj,pixKey,amount';
    const rows = [
      ',Ana Souza,ana@example.com,11987654321,52998224725,52998224725,"10,00"',
      'p-2,Bia Lima,bia@example.com,11987654322,11144477735,bia@example.com,"20,00"',
    ];
    const { report } = await readAll(
      writeFile(folder(), 'folha.csv', [header, ...rows].join('\n')),
    );
    expect(report).toMatchObject({ valid: 1, invalid: 1 });
    expect(report.header?.orderIdsDerived).toBe(false);
  });

  it('gives the same fingerprint to the same bytes under another name', async () => {
    const text = `${HEADER}\n${ROW('p-1')}\n`;
    const a = await readAll(writeFile(folder(), 'a.csv', text));
    const b = await readAll(writeFile(folder(), 'b.csv', text));
    expect(a.report.sha256).toBe(b.report.sha256);
  });

  it('maps the unchanged rows of a corrected copy to the same derived orderIds', async () => {
    const header = 'name,email,phone,cpfCnpj,pixKey,amount';
    const good = 'Ana Souza,ana@example.com,11987654321,52998224725,52998224725,"1.000,00"';
    const twin = good; // two identical payouts in one file are two payouts
    const fixedLater = 'Bruno Lima,bruno@example,11987654322,11144477735,bruno@example.com,"50,00"';
    const first = await readAll(
      writeFile(folder(), 'payroll-11.csv', [header, good, twin, fixedLater].join('\n')),
    );
    expect(first.report).toMatchObject({ valid: 2, invalid: 1 });
    const corrected = await readAll(
      writeFile(
        folder(),
        'payroll-11 (corrigida).csv',
        [header, good, twin, fixedLater.replace('bruno@example,', 'bruno@example.com,')].join('\n'),
      ),
    );
    expect(corrected.report).toMatchObject({ valid: 3, invalid: 0 });
    const before = valid(first.rows).map((p) => p.orderId);
    const after = valid(corrected.rows).map((p) => p.orderId);
    expect(after.slice(0, 2)).toEqual(before);
    expect(new Set(after).size).toBe(3);
    expect(after[1]).toBe(`${after[0]}-2`);
  });

  it('finds every repeat as in memory once its tables spill to a file, naming both lines', async () => {
    // Ids and contents come back before and after the tables fill (at 5 keys here).
    const people = ['Ana', 'Bia', 'Caio', 'Duda'];
    const withIds = [HEADER];
    const withoutIds = ['name,email,phone,cpfCnpj,pixKeyType,pixKey,value'];
    for (let i = 0; i < 40; i++) {
      const name = people[i % 4] ?? 'Ana';
      withIds.push(ROW(`p-${i % 13}`, name, String(1000 + (i % 7))));
      withoutIds.push(ROW('', name, String(1000 + (i % 7))).slice(1));
    }
    for (const text of [withIds, withoutIds]) {
      const path = writeFile(folder(), 'payroll.csv', `${text.join('\n')}\n`);
      let spilled = false;
      const rows: RowOutcome[] = [];
      const report = await readPayoutFile(path, { ...OPTIONS, memoryKeys: 5 }, (row) => {
        rows.push(row);
        spilled ||= keyFilesOpen().length > 0;
      });
      expect(spilled).toBe(true);
      expect(keyFilesOpen()).toEqual([]);
      expect(inEnglish({ report, rows })).toEqual(await readAll(path));
    }
    const { rows } = await readAll(`${folder()}/payroll.csv`, { memoryKeys: 5 });
    // Line 41 is the 40th row: i = 39, the same content as i = 11 (line 13), its second.
    expect(rows.at(-1)).toMatchObject({ kind: 'valid', payout: { identicalTo: 13 } });
    expect(valid(rows).at(-1)?.orderId).toMatch(/-2$/);
    const withIdsRead = await readAll(writeFile(folder(), 'ids.csv', `${withIds.join('\n')}\n`), {
      memoryKeys: 5,
    });
    // i = 39 repeats p-0 of i = 0, line 2.
    expect(withIdsRead.rows.at(-1)).toMatchObject({
      kind: 'invalid',
      mistakes: [{ column: 'orderId', message: expect.stringContaining('line 2') }],
    });
  });

  it('leaves no key file open nor in the temp folder when the caller fails after a spill', async () => {
    const path = writeFile(folder(), 'payroll.csv', `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\n`);
    await expect(
      readPayoutFile(path, { ...OPTIONS, memoryKeys: 0 }, () => {
        expect(keyFilesOpen()).toHaveLength(1);
        throw new Error('SQLITE_BUSY: database is locked');
      }),
    ).rejects.toThrow('SQLITE_BUSY');
    expect(keyFilesOpen()).toEqual([]);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('payouts-keys-'))).toEqual([]);
  });

  it('says the temp folder cannot hold the repeat keys, rather than call a good file unreadable', async () => {
    const path = writeFile(folder(), 'payroll.csv', `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\n`);
    const missing = join(folder(), 'no-such-tmp');
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = missing;
    try {
      const reading = readPayoutFile(path, { ...OPTIONS, memoryKeys: 0 }, () => undefined);
      await expect(reading).rejects.toMatchObject({
        name: 'PayoutsError',
        code: 'temp-folder',
        message: expect.stringContaining(
          `finding repeated rows needs room in the temp folder ${missing} (ENOENT`,
        ),
      });
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
  });

  it('says past how many rows its own reading keeps repeat keys in a file', async () => {
    const path = writeFile(folder(), 'payroll.csv', `${HEADER}\n${ROW('p-1')}\n${ROW('p-2')}\n`);
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = join(folder(), 'no-such-tmp');
    try {
      const reading = readPayoutFile(path, { ...OPTIONS, memoryKeys: 2 }, () => undefined);
      await expect(reading).rejects.toMatchObject({
        code: 'temp-folder',
        message: expect.stringContaining('in a file past 2 rows'),
      });
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
  });
});

describe('hostile files: a clear error or per-row messages, never a crash or a hang', () => {
  const folder = useTempFolder();
  const unusable = async (path: string, message: RegExp) => {
    const { report } = await readAll(path);
    expect(report.problems).toEqual([
      { kind: 'unusable', message: expect.stringMatching(message) },
    ]);
  };

  it('random bytes', async () => {
    const random = createRandom(7);
    const bytes = Uint8Array.from({ length: 64 * 1024 }, () => Math.floor(random() * 256));
    await unusable(
      writeFile(folder(), 'random.csv', bytes),
      // Names the menus a Brazilian Excel has, as the accountant sees them.
      /not a CSV text file: it holds NUL bytes .*; save it again from Excel with Arquivo > Salvar como > "CSV UTF-8 \(delimitado por vírgulas\)" \(or "CSV \(separado por vírgulas\)"\)$/,
    );
  });

  it('random bytes without NULs', async () => {
    const random = createRandom(8);
    const bytes = Uint8Array.from({ length: 64 * 1024 }, () => 1 + Math.floor(random() * 255));
    const { report } = await readAll(writeFile(folder(), 'random.csv', bytes));
    expect(report.problems[0]?.kind).toBe('unusable');
    expect(report.valid).toBe(0);
  });

  it('a 50 MB single line', async () => {
    const path = writeFile(folder(), 'line.csv', Buffer.alloc(50 * 1024 * 1024, 'a'));
    await unusable(
      path,
      /^has a line of \d+ bytes \(line 1\), over 100000: this is not a payout file$/,
    );
  });

  it('a header only', async () => {
    await unusable(
      writeFile(folder(), 'header.csv', `${HEADER}\r\n`),
      /^has a header but no payout rows$/,
    );
  });

  it('a header of 100,000 columns, and one of 2,000', async () => {
    const header = Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(',');
    await unusable(
      writeFile(folder(), 'wide.csv', `${header}\n1\n`),
      /^has a line of \d+ bytes \(line 1\), over 100000/,
    );
    const narrower = Array.from({ length: 2000 }, (_, i) => `c${i}`).join(',');
    await unusable(
      writeFile(folder(), 'wide.csv', `${narrower}\n1\n`),
      /the header has 2000 columns; a payout file has at most 1000/,
    );
  });

  it('50 MB of delimiters on one line, and a million blank lines', async () => {
    await unusable(
      writeFile(folder(), 'commas.csv', Buffer.alloc(50 * 1024 * 1024, ',')),
      /^has a line of \d+ bytes \(line 1\)/,
    );
    const blank = Buffer.concat([
      Buffer.from(`${HEADER}\n${ROW('p-1')}\n`),
      Buffer.alloc(1_000_000, '\n'),
    ]);
    await unusable(
      writeFile(folder(), 'blank-run.csv', blank),
      /^has more than 100000 blank lines in a row from line 3/,
    );
  });

  it('formula-looking cells are per-row errors, and the good rows stay good', async () => {
    const text = `${HEADER}\n${ROW('p-1')}\n${ROW('p-2', '"=HYPERLINK(""http://evil"",""x"")"')}\n${ROW('p-3', "=cmd|' /C calc'!A0")}\n${ROW('p-4', '+1')}\n${ROW('p-5', '@SUM(1)')}\n`;
    const { report, rows } = await readAll(writeFile(folder(), 'formula.csv', text));
    expect(report).toMatchObject({ valid: 1, invalid: 4, problems: [] });
    expect(
      rows
        .filter((r) => r.kind === 'invalid')
        .map((r) => r.kind === 'invalid' && r.mistakes[0]?.column),
    ).toEqual(['name', 'name', 'name', 'name']);
  });

  it('NUL bytes at the start, and a NUL inside one cell later on', async () => {
    await unusable(
      writeFile(folder(), 'nul.csv', `\u0000\u0000${HEADER}\n${ROW('p-1')}\n`),
      /holds NUL bytes/,
    );
    const filler = Array.from({ length: 200 }, (_, i) => ROW(`f-${i}`)).join('\n');
    const text = `${HEADER}\n${filler}\n${ROW('p-x', 'Ana\u0000Souza')}\n`;
    const { report, rows } = await readAll(writeFile(folder(), 'nul-late.csv', text));
    expect(report).toMatchObject({ valid: 200, invalid: 1, problems: [] });
    expect(rows.at(-1)).toMatchObject({
      kind: 'invalid',
      line: 202,
      mistakes: [{ column: 'name', message: expect.stringContaining('control character') }],
    });
  });

  it('an empty file, blank lines only, and a missing file', async () => {
    await unusable(writeFile(folder(), 'empty.csv', ''), /^is empty \(0 bytes\)$/);
    await unusable(writeFile(folder(), 'blank.csv', '\r\n\r\n  \r\n'), /^has no header row/);
    await unusable(`${folder()}/nope.csv`, /^does not exist: check its name and folder$/);
  });

  it('a quote never closed at the end of the file (a cut-short export)', async () => {
    const text = `${HEADER}\n${ROW('p-1')}\n${ROW('p-2', '"Ana')}\n${ROW('p-3')}\n`;
    await unusable(
      writeFile(folder(), 'cut.csv', text),
      /^has a quote opened on line 3 that is never closed/,
    );
  });

  it('a header without the payout columns', async () => {
    await unusable(
      writeFile(folder(), 'other.csv', 'date,description,debit\n2026-11-01,coffee,5\n'),
      /^has a header \(line 1\) that cannot be used: missing columns/,
    );
  });
});
