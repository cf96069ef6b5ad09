/**
 * Names that last for years (issue 17, rule 11): a result and an archive name carry the
 * batch's date, so week 12's `fornecedores.csv` never takes week 1's result; `status`
 * finds every batch of a name; `reconcile` rewrites every result that shows a payout it
 * updates. The clock is moved to fixed instants (the names carry the day in São Paulo),
 * against a sandbox that keeps its ledger across runs.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { ingestFile } from '../../src/engine/ingest.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { runCli } from '../support/cli.js';
import { passHome } from '../support/pass-home.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const supplier = (n: number, cents: number) =>
  `Fornecedor ${n},${cpf(n)},f${n}@example.com,(11) 98765-43${String(n).padStart(2, '0')},f${n}@example.com,"${cents / 100},00"`;
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
const BRUNO_BROKEN = BRUNO.replace('"2.500,00"', '"abc"');

/** A valid CPF of its own for supplier n. */
const cpf = (n: number): string => withCheckDigits(String(100_000_000 + n * 7_919).slice(0, 9));

const home = () => passHome();

const readResult = (path: string) =>
  parse(readFileSync(path), { bom: true, columns: true, delimiter: ';' }) as Record<
    string,
    string
  >[];

describe('result and archive names carry the batch date', () => {
  it('twelve weeks of fornecedores.csv: each week keeps its own result and archive, named with the day it arrived in São Paulo', async () => {
    const h = await home();
    const days: string[] = [];
    for (let week = 0; week < 12; week++) {
      // 22:30 in São Paulo is 01:30 UTC the next day: the name carries São Paulo's day.
      const at = new Date(Date.parse('2026-09-01T01:30:00Z') + week * 7 * DAY);
      h.at(at.toISOString());
      days.push(new Date(at.getTime() - 3 * HOUR).toISOString().slice(0, 10));
      h.drop('fornecedores.csv', [HEADER, supplier(week + 1, 100_00 + week * 100)]);
      expect((await h.run()).exit).toBe(0);
    }
    expect(days[0]).toBe('2026-08-31');
    const results = readdirSync(h.folders.results).sort();
    expect(results).toEqual(days.map((day) => `fornecedores.${day}.result.csv`).sort());
    expect(readdirSync(h.folders.archive).sort()).toEqual(
      days.map((day) => `fornecedores.${day}.csv`).sort(),
    );
    // Week 1's result still shows week 1's row, after twelve weeks.
    const first = readResult(join(h.folders.results, `fornecedores.${days[0]}.result.csv`));
    expect(first.map((row) => [row['name'], row['status']])).toEqual([['Fornecedor 1', 'paid']]);
  });

  it('a second batch of the same name the same day gets a distinguishing suffix', async () => {
    const h = await home();
    h.at('2026-11-23T12:00:00Z');
    h.drop('fornecedores.csv', [HEADER, ANA]);
    expect((await h.run()).exit).toBe(0);
    h.at('2026-11-23T15:00:00Z');
    h.drop('fornecedores.csv', [HEADER, BRUNO]);
    const second = await h.run();
    expect(second.exit).toBe(0);
    expect(second.files[0]?.outcome).toContain('archived as fornecedores.2026-11-23 [2].csv');
    expect(readdirSync(h.folders.results).sort()).toEqual([
      'fornecedores.2026-11-23 [2].result.csv',
      'fornecedores.2026-11-23.result.csv',
    ]);
    expect(readdirSync(h.folders.archive).sort()).toEqual([
      'fornecedores.2026-11-23 [2].csv',
      'fornecedores.2026-11-23.csv',
    ]);
    const second2 = readResult(join(h.folders.results, 'fornecedores.2026-11-23 [2].result.csv'));
    expect(second2.map((row) => row['name'])).toEqual(['Bruno Lima']);
  });

  it('a batch named by an older version keeps its result name, and its archive name with it', async () => {
    const h = await home();
    h.at('2026-11-23T12:00:00Z');
    // Left in processing/ by an older version, which had named its result already.
    writeFileSync(join(h.folders.processing, 'fornecedores.csv'), `${HEADER}\r\n${ANA}\r\n`);
    const journal = await openJournal(sqliteJournalAt(h.folders.journal), { now: h.now });
    try {
      const config = h.config();
      const ingested = await ingestFile(
        join(h.folders.processing, 'fornecedores.csv'),
        journal,
        { ...config, now: Date.now() },
        'open',
        false,
      );
      if (ingested.kind !== 'open') throw new Error(`not open: ${ingested.kind}`);
      expect(await journal.resultName(ingested.batchId, ['fornecedores.result.csv'])).toBe(
        'fornecedores.result.csv',
      );
    } finally {
      await journal.close();
    }
    expect((await h.run()).exit).toBe(0);
    expect(readdirSync(h.folders.results)).toEqual(['fornecedores.result.csv']);
    expect(readdirSync(h.folders.archive)).toEqual(['fornecedores.csv']);
  });
});

describe('status NAME', () => {
  it('lists every batch of that name, each with its date and state', async () => {
    const h = await home();
    h.at('2026-11-02T12:00:00Z');
    h.drop('fornecedores.csv', [HEADER, ANA]);
    expect((await h.run()).exit).toBe(0);
    h.at('2026-11-09T12:00:00Z');
    h.drop('fornecedores (corrigida).csv', [HEADER, BRUNO]);
    expect((await h.run()).exit).toBe(0);
    h.at('2026-11-16T12:00:00Z');
    h.drop('outro.csv', [HEADER, supplier(3, 300_00)]);
    expect((await h.run()).exit).toBe(0);

    const status = await runCli(['status', 'fornecedores.csv'], { env: h.env() });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /batch 1 {2}fornecedores\.csv {2}received 2026-11-02T09:00:\d{2}-03:00 {2}done/,
    );
    expect(status.stdout).toMatch(
      /batch 2 {2}fornecedores \(corrigida\)\.csv {2}received 2026-11-09T09:00:\d{2}-03:00 {2}done/,
    );
    expect(status.stdout).not.toContain('outro.csv');
    // The name a person sees in results/ or archive/ finds its batch too.
    const byResult = await runCli(['status', 'fornecedores (corrigida).2026-11-09.result.csv'], {
      env: h.env(),
    });
    expect(byResult.code, byResult.stdout + byResult.stderr).toBe(0);
    expect(byResult.stdout).toContain('batch 2  fornecedores (corrigida).csv');
    expect(byResult.stdout).not.toContain('batch 1 ');
  });
});

describe('reconcile rewrites every result that shows a payout it updates', () => {
  it("a covered row whose covering payout is refunded is held for retry, in its own file's result", async () => {
    const h = await home();
    h.at('2026-11-23T12:00:00Z');
    h.drop('folha.csv', [HEADER, ANA, BRUNO_BROKEN]);
    expect((await h.run()).exit).toBe(2);
    h.at('2026-11-23T14:00:00Z');
    h.drop('folha.csv', [HEADER, ANA, BRUNO]);
    const corrected = await h.run();
    expect(corrected.exit).toBe(0);
    expect(corrected.files[0]?.rows).toEqual({ covered: 1, paid: 1 });

    const first = join(h.folders.results, 'folha.2026-11-23.result.csv');
    const copy = join(h.folders.results, 'folha.2026-11-23 [2].result.csv');
    const anaOrderId = readResult(first)[0]?.['orderId'] ?? '';
    expect(h.sandbox.refund(anaOrderId)).toBe(true);
    const reconciled = await runCli(['reconcile', '--days', '9999'], { env: h.env() });
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(2);
    // Every line keeps its row's name and value, the superseded one its amount as written.
    expect(readResult(first).map((row) => [row['status'], row['name'], row['value']])).toEqual([
      ['refunded', 'Ana Souza', '3000,00'],
      ['superseded', 'Bruno Lima', 'abc'],
    ]);
    const covered = readResult(copy);
    expect(covered.map((row) => row['status'])).toEqual(['held', 'paid']);
    // Not "already paid" once its cover was returned: it waits for payouts retry.
    expect(covered[0]?.['message']).toMatch(
      new RegExp(`\\(orderId ${anaOrderId}, .*ended refunded.*payouts retry ${anaOrderId}`),
    );
    expect(reconciled.stdout).toContain(`result rewritten: ${copy}`);
  });

  it('a later file whose line repeats an orderId shows the refund too', async () => {
    const h = await home();
    const header = `orderId,${HEADER}`;
    h.at('2026-11-23T12:00:00Z');
    h.drop('folha.csv', [header, `p-1,${ANA}`, `p-2,${BRUNO_BROKEN}`]);
    expect((await h.run()).exit).toBe(2);
    h.at('2026-11-23T13:00:00Z');
    h.drop('folha.csv', [header, `p-1,${ANA}`, `p-2,${BRUNO}`]);
    const corrected = await h.run();
    expect(corrected.exit).toBe(0);
    const copy = join(h.folders.results, 'folha.2026-11-23 [2].result.csv');
    expect(readResult(copy).map((row) => [row['status'], row['name'], row['value']])).toEqual([
      ['covered', 'Ana Souza', '3000,00'],
      ['paid', 'Bruno Lima', '2500,00'],
    ]);

    expect(h.sandbox.refund('p-1')).toBe(true);
    const reconciled = await runCli(['reconcile', '--days', '9999'], { env: h.env() });
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(2);
    const rows = readResult(copy);
    expect(rows.map((row) => row['status'])).toEqual(['refunded', 'paid']);
    expect(rows[0]?.['message']).toMatch(/the payout that covered it \(p-1.*\) was returned/);
  });
});
