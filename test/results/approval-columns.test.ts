/**
 * Who dropped and who approved a batch, in its result file (docs/result-files.md): two
 * trailing columns for a batch released by approval, none for one that needed no approval.
 * Four eyes with real Unix users, made here with useradd, so only as root. Each runs on
 * SQLite and on PostgreSQL (PAYOUTS_REQUIRE_POSTGRES=1 so the second cannot skip).
 */
import { chownSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { writeResultFile, type ResultFormat } from '../../src/results/result-file.js';
import { runCli } from '../support/cli.js';
import { paidByKey } from '../support/gateway.js';
import { IS_ROOT } from '../support/nobody.js';
import { ANA, BRUNO, HEADER } from '../support/folha.js';
import { passHomeStores, type PassHome } from '../support/pass-home.js';
import { useUnixUsers } from '../support/unix-users.js';

// A few passes and a child run each: far from what they take, so a busy machine waits.
vi.setConfig({ testTimeout: 60_000 });

/** Today's columns: what a batch released with no approval keeps, for existing imports. */
const FIFTEEN_PT = [
  'Linha',
  'ID do pagamento',
  'Nome',
  'Tipo de chave',
  'Chave Pix',
  'CPF/CNPJ',
  'Valor',
  'Situação',
  'ID da transação',
  'EndToEndId',
  'Tarifa',
  'Líquido',
  'Criado em',
  'Processado em',
  'Mensagem',
];

/** A result file's lines as cells, whatever its dialect. */
function cellsOf(path: string, delimiter: string): string[][] {
  return parse(readFileSync(path, 'utf8'), { delimiter, bom: true, relax_column_count: true });
}

/** The one result file of a home. */
function resultOf(home: PassHome): string {
  const [name, ...more] = readdirSync(home.folders.results).filter((each) =>
    each.endsWith('.result.csv'),
  );
  expect(more).toEqual([]);
  return join(home.folders.results, name ?? 'none');
}

describe.runIf(IS_ROOT)('who dropped and who approved, in the result file', () => {
  const { users: USERS, ids } = useUnixUsers('rc', ['maria', 'ana', 'bruno']);
  describe.each(passHomeStores())('on %s', (_store, newHome) => {
    it('a four-eyes file dropped by one and approved by two names all three, and the code', async () => {
      const settings: Partial<Config> = {
        fourEyes: true,
        approvers: [USERS.ana, USERS.bruno],
        secondApprovalAbove: 5_000_00,
        language: 'pt-BR',
      };
      const home = await newHome();
      home.drop('folha.csv', [HEADER, ANA, BRUNO]);
      chownSync(join(home.folders.inbox, 'folha.csv'), ids.maria.uid, ids.maria.gid);
      expect((await home.run(settings)).exit).toBe(2);
      const waiting = join(home.folders.awaiting, 'folha.csv');
      const code =
        /\b([A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4})\b/.exec(
          readFileSync(`${waiting}.report.txt`, 'utf8'),
        )?.[1] ?? 'no code';
      for (const who of ['ana', 'bruno'] as const) {
        const path = `${waiting}.${USERS[who]}.aprovado`;
        writeFileSync(path, `${code}\n`, { mode: 0o640 });
        chownSync(path, ids[who].uid, ids[who].gid);
      }
      const released = await home.run(settings);
      expect(released.exit, JSON.stringify(released.files)).toBe(0);
      expect([...paidByKey(home.sandbox).values()]).toEqual([1, 1]);

      // São Paulo's clock, as the file's other times: `2026-11-28 14:02:07` in excel.
      const at = '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}';
      const [headings, ...lines] = cellsOf(resultOf(home), ';');
      expect(headings).toEqual([...FIFTEEN_PT, 'Enviado por', 'Aprovado por']);
      expect(lines).toHaveLength(2);
      for (const cells of lines) {
        expect(cells).toHaveLength(17);
        expect(cells[15]).toBe(USERS.maria);
        expect(cells[16]).toMatch(
          new RegExp(`^${USERS.ana} ${at}; ${USERS.bruno} ${at} \\(código ${code}\\)$`),
        );
      }

      // The same batch for an English reader, and for a program (its times with their offset).
      const written = (format: ResultFormat, path: string) =>
        home.withJournal(async (journal) => {
          const [batch] = await journal.batches('folha.csv');
          return writeResultFile(journal, batch!, path, format);
        });
      const english = join(home.folders.home, 'en.csv');
      expect(await written({ dialect: 'excel', timeZone: 'America/Sao_Paulo' }, english)).toBe(
        true,
      );
      const [enHeadings, enLine] = cellsOf(english, ';');
      expect(enHeadings?.slice(-3)).toEqual(['message', 'droppedBy', 'approvedBy']);
      expect(enLine?.slice(-2)).toEqual([
        USERS.maria,
        expect.stringMatching(
          new RegExp(`^${USERS.ana} ${at}; ${USERS.bruno} ${at} \\(code ${code}\\)$`),
        ),
      ]);
      const program = join(home.folders.home, 'rfc.csv');
      const rfc: ResultFormat = {
        dialect: 'rfc4180',
        timeZone: 'America/Sao_Paulo',
        language: 'pt-BR',
      };
      expect(await written(rfc, program)).toBe(true);
      const [, rfcLine] = cellsOf(program, ',');
      const offset = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}-03:00';
      expect(rfcLine?.at(-1)).toMatch(
        new RegExp(`^${USERS.ana} ${offset}; ${USERS.bruno} ${offset} \\(code ${code}\\)$`),
      );
    });

    it('approved with payouts approve, it names who ran it; with approval off, 15 columns', async () => {
      const home = await newHome();
      const settings: Partial<Config> = { requireApproval: true, language: 'pt-BR' };
      home.drop('folha.csv', [HEADER, ANA]);
      expect((await home.run(settings)).exit).toBe(2);
      const env = { ...home.env(), PAYOUTS_REQUIRE_APPROVAL: 'true' };
      const approved = await runCli(['approve', 'folha.csv'], { env });
      expect(approved.code, approved.stderr).toBe(0);
      expect((await home.run(settings)).exit).toBe(0);
      const [headings, line] = cellsOf(resultOf(home), ';');
      expect(headings).toEqual([...FIFTEEN_PT, 'Enviado por', 'Aprovado por']);
      // Nobody's drop was recorded without four eyes: the cell is empty, the column kept.
      expect(line?.slice(-2)).toEqual([
        '',
        expect.stringMatching(/^root \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      ]);

      const plain = await newHome();
      plain.drop('folha.csv', [HEADER, ANA]);
      expect((await plain.run({ language: 'pt-BR' })).exit).toBe(0);
      const [fifteen, ...rows] = cellsOf(resultOf(plain), ';');
      expect(fifteen).toEqual(FIFTEEN_PT);
      expect(rows.map((cells) => cells.length)).toEqual([15]);
    });
  });
});
