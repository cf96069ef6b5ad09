/**
 * Who is paid, and once, month after month: payroll files dropped as accountants drop
 * them (re-exports, next month's file of the same name, dated names, installments),
 * with the clock moved between runs, against a sandbox that keeps its ledger across
 * runs and never deduplicates orderIds. The ledger is the truth: every test counts what
 * the gateway really created.
 */
import { readFileSync, readdirSync, renameSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun } from '../../src/engine/dry-run.js';
import { releaseHolds } from '../../src/inbox/holds.js';
import { retryPayouts } from '../../src/inbox/retry.js';
import type { FileSummary } from '../../src/app/pass.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { entriesOf } from '../../src/results/result-file.js';
import { collect } from '../support/collect.js';
import { runCli } from '../support/cli.js';
import { clientFor, topUp } from '../support/gateway.js';
import { passHome, type PassHome } from '../support/pass-home.js';
import { sayInEnglish } from '../../src/messages/say.js';

const DAY = 24 * 60 * 60 * 1000;
const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
const BRUNO_RAISE =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.700,00"';

interface Month extends PassHome {
  /** orderIds the gateway created, with how many times each. */
  sent(): Map<string, number>;
  /** Cents the gateway paid out in all. */
  paidCents(): number;
  /** Adds to the balance as a payer would: a cash-in, paid; waits until the balance shows it. */
  topUp(cents: number): Promise<void>;
}

async function month(
  options: { balanceCents?: number; settleDelayMs?: number } = {},
): Promise<Month> {
  const home = await passHome(options);
  const { sandbox } = home;
  return {
    ...home,
    sent() {
      const counts = new Map<string, number>();
      for (const entry of sandbox.ledger()) {
        if (entry.object !== 'cashout') continue;
        counts.set(entry.orderId ?? '', (counts.get(entry.orderId ?? '') ?? 0) + 1);
      }
      return counts;
    },
    topUp: (cents) => topUp(sandbox.url, cents),
    paidCents() {
      return sandbox
        .ledger()
        .filter((entry) => entry.object === 'cashout')
        .reduce((sum, entry) => sum + entry.valueCents, 0);
    },
  };
}

/** The rules on who is paid a command of this home weighs rows by. */
const rulesOf = (m: PassHome) => ({ duplicateWindowMs: m.config().duplicateWindow });

function summaryOf(files: FileSummary[], name: string): FileSummary {
  const summary = files.find((file) => file.file === name);
  if (!summary) throw new Error(`no summary for ${name}: ${files.map((f) => f.file).join(', ')}`);
  return summary;
}

function noDuplicates(counts: Map<string, number>): void {
  expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
}

describe('the same rows again', () => {
  it('A: a re-export under another name the same day sends nothing, holds its rows, and one command releases them', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    expect(m.paidCents()).toBe(550_000);

    m.advance(2 * 60 * 60 * 1000);
    m.drop('folha_final.csv', [HEADER, ANA, BRUNO], '\n');
    const copy = await m.run();
    expect(copy.exit).toBe(2);
    const held = summaryOf(copy.files, 'folha_final.csv');
    expect(held.rows).toEqual({ held: 2 });
    expect(held.rows.paid).toBeUndefined();
    expect(m.paidCents()).toBe(550_000);

    // New payments alone free nothing: both rows repeat payouts, freed when counted.
    const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    try {
      const unsaid = await releaseHolds(
        journal,
        'folha_final.csv',
        { newBatch: true, by: 'maria' },
        rulesOf(m),
      );
      expect(unsaid).toMatchObject({ kind: 'released', rows: 0, repeatsReleased: false });
      const released = await releaseHolds(
        journal,
        'folha_final.csv',
        { newBatch: true, by: 'maria', repeats: 2 },
        rulesOf(m),
      );
      expect(released).toMatchObject({ kind: 'released', rows: 2, repeatsReleased: true });
    } finally {
      await journal.close();
    }
    const after = await m.run();
    expect(after.exit).toBe(0);
    expect(m.paidCents()).toBe(1_100_000);
    noDuplicates(m.sent());
  });

  it("E: last month's dated file dropped again 30 days later is held whole, nothing sent", async () => {
    const m = await month();
    m.drop('folha-2026-10.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    m.advance(30 * DAY);
    m.drop('folha-2026-10.csv', [HEADER, ANA, BRUNO]);
    const again = await m.run();
    expect(again.exit).toBe(2);
    expect(summaryOf(again.files, 'folha-2026-10.csv').rows).toEqual({ held: 2 });
    expect(m.sent().size).toBe(2);
  });
});

describe('next month', () => {
  it("C: next month's folha.csv with one raise is held whole with the question; approved as new, both are paid once", async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    m.advance(30 * DAY);
    m.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    const held = await m.run();
    expect(held.exit).toBe(2);
    const summary = summaryOf(held.files, 'folha.csv');
    expect(summary.rows).toEqual({ held: 2 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(/same name as folha\.csv/);
    expect(m.sent().size).toBe(2);

    const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    try {
      await releaseHolds(journal, 'folha.csv', { newBatch: true, by: 'maria' }, rulesOf(m));
    } finally {
      await journal.close();
    }
    const paid = await m.run();
    expect(paid.exit).toBe(0);
    expect(m.sent().size).toBe(4);
    expect(m.paidCents()).toBe(550_000 + 570_000);
    noDuplicates(m.sent());
  });

  it('P: a file last changed 17 months ago is held whole, saying its age; saved again, it is paid once', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    const changed = new Date(m.now() - 517 * DAY);
    utimesSync(join(m.folders.inbox, 'folha.csv'), changed, changed);
    const held = await m.run();
    expect(held.exit).toBe(2);
    const summary = summaryOf(held.files, 'folha.csv');
    expect(summary.rows).toEqual({ held: 2 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toContain(
      `it was last changed 517 days ago (on ${changed.toISOString().slice(0, 10)}), longer ago than duplicateWindow: it may be an old file dropped again, so none of it is paid`,
    );
    expect(m.sent().size).toBe(0);

    m.advance(60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    expect(m.paidCents()).toBe(550_000);
    noDuplicates(m.sent());
  });

  it('D: folha-2026-11.csv with the same bytes as folha-2026-10.csv 30 days later is paid in full, no step needed', async () => {
    const m = await month();
    m.drop('folha-2026-10.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    m.advance(30 * DAY);
    m.drop('folha-2026-11.csv', [HEADER, ANA, BRUNO]);
    const november = await m.run();
    expect(november.exit).toBe(0);
    expect(summaryOf(november.files, 'folha-2026-11.csv').rows).toEqual({ paid: 2 });
    expect(m.sent().size).toBe(4);
    noDuplicates(m.sent());
    expect(readdirSync(m.folders.rejected)).toEqual([]);
  });

  it('N: the second installment "13o salario (2).csv" 25 days after "(1)" is paid in full', async () => {
    const m = await month();
    m.drop('13o salario (1).csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    m.advance(25 * DAY);
    m.drop('13o salario (2).csv', [HEADER, ANA, BRUNO]);
    const second = await m.run();
    expect(second.exit).toBe(0);
    expect(summaryOf(second.files, '13o salario (2).csv').rows).toEqual({ paid: 2 });
    expect(m.paidCents()).toBe(2 * 550_000);
    noDuplicates(m.sent());
  });

  it('F: an ID column of employee numbers is not taken for orderIds: next month is paid in full', async () => {
    const m = await month();
    const header = `ID,${HEADER}`;
    m.drop('folha-2026-10.csv', [header, `1001,${ANA}`, `1002,${BRUNO}`]);
    expect((await m.run()).exit).toBe(0);
    m.advance(30 * DAY);
    m.drop('folha-2026-11.csv', [header, `1001,${ANA}`, `1002,${BRUNO_RAISE}`]);
    const november = await m.run();
    expect(november.exit).toBe(0);
    expect(summaryOf(november.files, 'folha-2026-11.csv').rows).toEqual({ paid: 2 });
    expect(m.paidCents()).toBe(550_000 + 570_000);
    noDuplicates(m.sent());
  });

  it('F: an orderId column whose ids lost their zeros in a re-export the same day is held as possible duplicates', async () => {
    const m = await month();
    const header = `orderId,${HEADER}`;
    m.drop('fornecedores.csv', [header, `000123,${ANA}`, `000124,${BRUNO}`]);
    expect((await m.run()).exit).toBe(0);
    m.advance(60 * 60 * 1000);
    m.drop('fornecedores-reexport.csv', [header, `123,${ANA}`, `124,${BRUNO}`]);
    const copy = await m.run();
    expect(copy.exit).toBe(2);
    expect(summaryOf(copy.files, 'fornecedores-reexport.csv').rows).toEqual({ held: 2 });
    expect(m.sent().size).toBe(2);
  });

  it('an orderId already journaled from another file is held naming that file, never counted as paid', async () => {
    const m = await month();
    const header = `orderId,${HEADER}`;
    m.drop('fornecedores.csv', [header, `pedido-77,${ANA}`]);
    expect((await m.run()).exit).toBe(0);
    m.advance(40 * DAY);
    m.drop('outro.csv', [header, `pedido-77,${ANA}`]);
    const again = await m.run();
    expect(again.exit).toBe(2);
    const summary = summaryOf(again.files, 'outro.csv');
    expect(summary.rows.paid).toBeUndefined();
    expect(summary.rows.held).toBe(1);
    expect(m.sent().size).toBe(1);
  });
});

const CAIO_BROKEN =
  'Caio Reis,390.533.447-05,caio@example,(31) 97654-3210,caio@example.com,"1.500,00"';
const CAIO = CAIO_BROKEN.replace('caio@example,', 'caio@example.com,');
const DANI_BROKEN =
  'Dani Melo,123.456.789-09,dani@example.com,(41) 99123-4567,dani@example.com,"abc"';
const DANI = DANI_BROKEN.replace('"abc"', '"800,00"');
const ANA_RAISE = ANA.replace('"3.000,00"', '"3.100,00"');
const BRUNO_LOWER = BRUNO.replace('"2.500,00"', '"2.300,00"');

async function release(m: Month, file: string, how: Parameters<typeof releaseHolds>[2]) {
  const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
  try {
    return await releaseHolds(journal, file, how, rulesOf(m));
  } finally {
    await journal.close();
  }
}

describe('corrections', () => {
  it('B: the corrected folha.csv two hours later sends exactly the two fixed rows; the others are covered; exit 0', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO_BROKEN, DANI_BROKEN]);
    expect((await m.run()).exit).toBe(2);
    expect(m.paidCents()).toBe(550_000);
    m.advance(2 * 60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO, DANI]);
    const corrected = await m.run();
    expect(corrected.exit).toBe(0);
    expect(summaryOf(corrected.files, 'folha.csv').rows).toEqual({ covered: 2, paid: 2 });
    // Covered rows never add to the file's paid sum.
    expect(summaryOf(corrected.files, 'folha.csv').cents.paid).toBe(230_000);
    expect(m.paidCents()).toBe(550_000 + 230_000);
    noDuplicates(m.sent());
    expect(readdirSync(m.folders.processing)).toEqual([]);

    // A third copy under another name finds every row paid, the covered ones included.
    m.drop('folha_v3.csv', [HEADER, ANA, BRUNO, CAIO, DANI]);
    const third = await m.run();
    expect(third.exit).toBe(2);
    expect(summaryOf(third.files, 'folha_v3.csv').rows).toEqual({ held: 4 });
    expect(m.paidCents()).toBe(550_000 + 230_000);
  });

  it('B2: a corrected copy that changes a paid row holds that row as "changes a paid row"; nobody is paid twice', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO_BROKEN]);
    expect((await m.run()).exit).toBe(2);
    m.advance(60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA_RAISE, BRUNO, CAIO]);
    const corrected = await m.run();
    expect(corrected.exit).toBe(2);
    const summary = summaryOf(corrected.files, 'folha.csv');
    expect(summary.rows).toEqual({ covered: 1, paid: 1, held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /changes a row folha\.csv already paid/,
    );
    expect(m.paidCents()).toBe(550_000 + 150_000);
    noDuplicates(m.sent());
  });

  it("B3: a corrected copy that only fixes a paid row's Pix key holds it as changing a paid row, naming where the money went; never 'already paid'", async () => {
    const m = await month();
    // Bruno's row carried Ana's key: his R$ 2.500,00 went to her.
    const brunoToAna = BRUNO.replace(',bruno@example.com,"', ',ana@example.com,"');
    m.drop('folha.csv', [HEADER, ANA, brunoToAna, CAIO]);
    expect((await m.run()).exit).toBe(0);
    const wrong = m.sandbox.ledger().find((entry) => entry.valueCents === 250_000);
    expect(wrong?.pixKey).toBe('ana@example.com');
    m.advance(20 * 60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO]);
    const corrected = await m.run();
    expect(corrected.exit).toBe(2);
    const summary = summaryOf(corrected.files, 'folha.csv');
    expect(summary.rows).toEqual({ covered: 2, held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      new RegExp(
        `changes the Pix key or name of folha\\.csv, line 3: .*went to Pix key ana@example\\.com .*transaction ${wrong?.transactionId}.*return it through their bank.*payouts approve "folha\\.csv" --new-batch`,
      ),
    );
    const result = readFileSync(summary.result ?? '', 'utf8');
    const brunoLine = result.split('\n').find((line) => line.includes('Bruno Lima')) ?? '';
    expect(brunoLine).toContain('ana@example.com');
    expect(brunoLine).not.toMatch(/already paid/);
    expect(m.sent().size).toBe(3);

    // The money came back. The row repeats the payout that went to Ana's key: --new-batch
    // alone lists it and frees nothing; said for that one repeat, the right key is paid once.
    expect(await release(m, 'folha.csv', { newBatch: true, by: 'maria' })).toMatchObject({
      kind: 'released',
      rows: 0,
      repeating: [{ name: 'Bruno Lima', cents: 250_000 }],
    });
    expect(
      await release(m, 'folha.csv', { newBatch: true, repeats: 1, by: 'maria' }),
    ).toMatchObject({ kind: 'released', rows: 1 });
    expect((await m.run()).exit).toBe(0);
    await m.run();
    const bruno = m.sandbox.ledger().filter((entry) => entry.pixKey === 'bruno@example.com');
    expect(bruno.map((entry) => entry.valueCents)).toEqual([250_000]);
    expect(m.sent().size).toBe(4);
    noDuplicates(m.sent());
  });

  it('B4: a copy the same day is weighed against every file of its name that day: a row changing what the first paid is held, though a second came between', async () => {
    const m = await month({ balanceCents: 5_000_00 });
    const ana = (amount: string) => ANA.replace('"3.000,00"', `"${amount}"`);
    m.drop('folha.csv', [HEADER, ana('4.450,50')]);
    expect((await m.run()).exit).toBe(0);
    m.advance(60 * 60 * 1000);
    // Another payroll of that name, a competência column, repeating no row of the first.
    const withMonth = (line: string, amount: string) =>
      line.replace(/"[^"]*"$/, `11/2026,"${amount}"`);
    m.drop('folha.csv', [
      'Nome,CPF,E-mail,Celular,Chave Pix,Competência,Valor',
      withMonth(ANA, '1.000,00'),
      withMonth(BRUNO, '2.500,00'),
      withMonth(CAIO, '3.400,00'),
      withMonth(DANI, '4.001,00'),
    ]);
    const second = await m.run();
    expect(second.exit).toBe(2); // waits for the balance
    // Its Ana, another amount the same day under the name, is held too: only a person can
    // tell a second payment from a changed row.
    const [, waiting] = await m.withJournal((journal) => journal.batches());
    const secondSummary = second.files.find((file) => file.batchId === waiting?.id);
    expect(secondSummary?.problems.map(sayInEnglish).join(' ')).toMatch(
      /changes a row folha\.csv already paid \(line 2, the same document, R\$ 4\.450,50 there, R\$ 1\.000,00 here\)/,
    );
    await m.topUp(100_000_00);
    m.advance(60 * 60 * 1000);
    // The first file again, Ana's amount changed.
    m.drop('folha.csv', [HEADER, ana('4.550,50')]);
    const after = await m.run();
    const [, , copy] = await m.withJournal((journal) => journal.batches());
    const copySummary = after.files.find((file) => file.batchId === copy?.id);
    expect(copySummary?.rows).toEqual({ held: 1 });
    // It names what the first file paid Ana, not the second's R$ 1.000,00.
    expect(copySummary?.problems.map(sayInEnglish).join(' ')).toMatch(
      /changes a row folha\.csv already paid \(line 2, the same document, R\$ 4\.450,50 there, R\$ 4\.550,50 here\)/,
    );
    expect(m.sandbox.ledger().some((entry) => entry.valueCents === 455_050)).toBe(false);
    expect(m.paidCents()).toBe(445_050 + 1_090_100 - 100_000);
    noDuplicates(m.sent());
  });

  it('K: a corrected copy of a payroll held for balance pays exactly its own rows after a top-up, once; the changed and removed rows never', async () => {
    const m = await month({ balanceCents: 100_00 });
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO]);
    const held = await m.run();
    expect(held.exit).toBe(2);
    expect(summaryOf(held.files, 'folha.csv').rows).toEqual({ held: 3 });
    m.advance(60 * 60 * 1000);
    // Bruno's amount corrected, Caio dismissed.
    m.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    expect((await m.run()).exit).toBe(2); // still underfunded
    expect(m.sent().size).toBe(0);
    await m.topUp(100_000_00);
    const paid = await m.run();
    expect(paid.exit).toBe(0);
    expect(m.paidCents()).toBe(300_000 + 270_000);
    expect(m.sent().size).toBe(2);
    noDuplicates(m.sent());
    expect(readdirSync(m.folders.processing)).toEqual([]);
  });

  it('K2: a payroll held for balance, its corrected copy 26 hours later: the top-up sends nothing until a person answers; --corrects pays the copy only, the old amount never', async () => {
    const m = await month({ balanceCents: 100_00 });
    m.drop('folha.csv', [HEADER, ANA, BRUNO, CAIO]);
    expect((await m.run()).exit).toBe(2);
    m.advance(26 * 60 * 60 * 1000);
    // Bruno's amount lowered: too late to be taken as a correction on its own.
    m.drop('folha.csv', [HEADER, ANA, BRUNO_LOWER, CAIO]);
    const held = await m.run();
    expect(held.exit).toBe(2);
    const [first, copy] = await m.withJournal((journal) => journal.batches());
    const said = (batchId: number | undefined, files: FileSummary[]) =>
      files
        .filter((file) => file.batchId === batchId)
        .flatMap((file) => file.problems.map(sayInEnglish))
        .join(' ');
    expect(said(copy?.id, held.files)).toMatch(
      new RegExp(
        `nothing of folha\\.csv \\(batch ${first?.id}: 3 rows, R\\$ 7\\.000,00\\) is sent.*--corrects ${first?.id}.*--new-batch`,
      ),
    );
    expect(said(first?.id, held.files)).toMatch(
      new RegExp(
        `a later file of the same name, folha\\.csv \\(batch ${copy?.id}.*payouts approve "folha\\.csv" --corrects ${first?.id} --batch ${copy?.id}`,
      ),
    );

    await m.topUp(100_000_00);
    const frozen = await m.run();
    expect(frozen.exit).toBe(2);
    expect(m.sent().size).toBe(0);
    expect(said(first?.id, frozen.files)).toMatch(/a later file of the same name/);

    expect(await release(m, 'folha.csv', { corrects: first?.id ?? 0, by: 'maria' })).toMatchObject({
      batchId: copy?.id,
    });
    expect((await m.run()).exit).toBe(0);
    await m.run();
    expect(m.paidCents()).toBe(300_000 + 230_000 + 150_000);
    expect(m.sandbox.ledger().some((entry) => entry.valueCents === 250_000)).toBe(false);
    expect(m.sent().size).toBe(3);
    noDuplicates(m.sent());
  });

  it('K3: a payroll held for balance, its copy of the same name waiting: --new-batch on the copy lets the first go out too', async () => {
    const m = await heldThenCopiedNextDay();
    await m.topUp(100_000_00);
    expect((await m.run()).exit).toBe(2);
    expect(m.sent().size).toBe(0);
    const [first] = await m.withJournal((journal) => journal.batches());
    await release(m, 'folha.csv', { newBatch: true, by: 'maria' });
    await m.run();
    const firstSent = await m.withJournal(async (journal) =>
      (await collect(entriesOf(journal, first?.id ?? 0))).map((entry) => entry.payout?.state),
    );
    expect(firstSent).toEqual(['paid', 'paid']);
    noDuplicates(m.sent());
  });

  it("J: Wednesday's fornecedores.csv with A, B fixed and C is held whole; after approve --corrects, B is sent, A covered, C still held as covered by extra.csv", async () => {
    const m = await month();
    m.drop('fornecedores.csv', [HEADER, ANA, CAIO_BROKEN]);
    expect((await m.run()).exit).toBe(2);
    m.advance(DAY);
    m.drop('extra.csv', [HEADER, BRUNO]);
    expect((await m.run()).exit).toBe(0);
    m.advance(DAY);
    m.drop('fornecedores.csv', [HEADER, ANA, CAIO, BRUNO]);
    const held = await m.run();
    expect(held.exit).toBe(2);
    expect(summaryOf(held.files, 'fornecedores.csv').rows).toEqual({ held: 3 });
    expect(m.sent().size).toBe(2);

    const first = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    const batchId = (await first.batches('fornecedores.csv'))[0]?.id ?? 0;
    await first.close();
    expect(await release(m, 'fornecedores.csv', { corrects: batchId, by: 'maria' })).toMatchObject({
      rows: 1,
    });
    const after = await m.run();
    expect(after.exit).toBe(2);
    expect(summaryOf(after.files, 'fornecedores.csv').rows).toEqual({
      covered: 1,
      paid: 1,
      held: 1,
    });
    expect(m.paidCents()).toBe(300_000 + 250_000 + 150_000);
    noDuplicates(m.sent());
  });
});

/** A payroll held for balance, and its copy of the same name 26 hours later, waiting. */
async function heldThenCopiedNextDay(): Promise<Month> {
  const m = await month({ balanceCents: 100_00 });
  m.drop('folha.csv', [HEADER, ANA, BRUNO]);
  expect((await m.run()).exit).toBe(2);
  m.advance(26 * 60 * 60 * 1000);
  m.drop('folha.csv', [HEADER, ANA, BRUNO_LOWER]);
  expect((await m.run()).exit).toBe(2);
  return m;
}

/** What a person does with a waiting file: moves it into approved/ (as `payouts approve` does). */
function approveFile(m: Month, name: string): void {
  renameSync(join(m.folders.awaiting, name), join(m.folders.approved, name));
}

/** `payouts reject NAME`: the batch turned down, the file moved to rejected/. */
async function rejectFile(m: Month, name: string, why: string): Promise<void> {
  const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
  try {
    const batch = (await journal.batchesIn('awaiting-approval')).find(
      (b) => b.awaitingName === name,
    );
    expect(await journal.refuseBatch(batch?.id ?? 0, { code: 'turnedDownBy', reason: why })).toBe(
      true,
    );
  } finally {
    await journal.close();
  }
  renameSync(join(m.folders.awaiting, name), join(m.folders.rejected, name));
}

describe('corrections awaiting approval', () => {
  it('M: a corrected copy of a waiting file counts only what it would send; approving it and rejecting the original pays its rows once', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    m.advance(30 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE, CAIO]);
    const waiting = await m.run({ requireApproval: true });
    expect(waiting.exit).toBe(2);
    const names = readdirSync(m.folders.awaiting).filter((name) => name.endsWith('.csv'));
    expect(names.sort()).toEqual(['folha [2].csv', 'folha.csv']);
    const report = readFileSync(join(m.folders.awaiting, 'folha [2].csv.report.txt'), 'utf8');
    expect(report).toContain('Once approved, 3 payouts are sent, R$ 7.200,00 in all.');
    // Every payee, with the document and key masked, for the person who approves.
    expect(report).toContain(
      'line 2: Ana Souza, document ***25, Pix key a***@example.com, R$ 3.000,00: to be sent',
    );
    expect(report).toContain('line 4: Caio Reis, document ***05');
    expect(report).not.toMatch(/529\.?982\.?247-?25/);
    approveFile(m, 'folha [2].csv');
    await rejectFile(m, 'folha.csv', 'the corrected copy replaces it');
    expect((await m.run({ requireApproval: true })).exit).toBe(0);
    expect(m.paidCents()).toBe(300_000 + 270_000 + 150_000);
    expect(m.sent().size).toBe(3);
    noDuplicates(m.sent());
  });

  it('L: an approved file held for balance, its re-export turned down: after a top-up every row of the approved file is paid once', async () => {
    const m = await month({ balanceCents: 100_00 });
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    await m.run({ requireApproval: true });
    approveFile(m, 'folha.csv');
    expect((await m.run({ requireApproval: true })).exit).toBe(2); // held for balance
    m.advance(10 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO], '\n');
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    // It arrived while the approved file was in processing/: it waits under another name.
    await rejectFile(m, 'folha [2].csv', 'a copy of the approved file');
    await m.topUp(100_000_00);
    expect((await m.run({ requireApproval: true })).exit).toBe(0);
    expect(m.paidCents()).toBe(550_000);
    expect(m.sent().size).toBe(2);
    noDuplicates(m.sent());
  });
});

describe('answers that must not reach past their file (a review of the merged rules)', () => {
  it('R1: a re-export turned down no longer uses up the payout it repeated: a third copy within the window is held', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA]);
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    approveFile(m, 'folha.csv');
    expect((await m.run({ requireApproval: true })).exit).toBe(0);
    m.advance(60 * 60 * 1000);
    m.drop('folha_final.csv', [HEADER, ANA]);
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    await rejectFile(m, 'folha_final.csv', 'a copy of folha.csv');
    m.advance(60 * 60 * 1000);
    m.drop('folha_v3.csv', [HEADER, ANA]);
    await m.run({ requireApproval: true });
    approveFile(m, 'folha_v3.csv');
    const third = await m.run({ requireApproval: true });
    expect(summaryOf(third.files, 'folha_v3.csv').rows).toEqual({ held: 1 });
    expect(m.sent().size).toBe(1);
  });

  it('R2: a third file of a name answered as new leaves the first frozen while the second still waits', async () => {
    const m = await heldThenCopiedNextDay();
    m.advance(26 * 60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO_LOWER, CAIO]);
    expect((await m.run()).exit).toBe(2);
    await m.topUp(100_000_00);
    // The tool names the third file folha [3].csv in processing/, and so do its hints.
    await release(m, 'folha [3].csv', { newBatch: true, by: 'maria' });
    await m.run();
    // Bruno's old amount is the first file's: it waits for the answer to the second.
    const brunoOld = m.sandbox.ledger().filter((entry) => entry.valueCents === 250_000);
    expect(brunoOld).toEqual([]);
    noDuplicates(m.sent());
  });

  it('R3: approve FILE answers the waiting batch of that name, never one turned down', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    await m.run({ requireApproval: true });
    approveFile(m, 'folha.csv');
    expect((await m.run({ requireApproval: true })).exit).toBe(0);
    m.advance(30 * 24 * 60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    await rejectFile(m, 'folha.csv', 'sent by mistake');
    // Nothing of a name waits: an answer frees nothing, and nothing is sent.
    const answer = await release(m, 'folha.csv', { newBatch: true, by: 'maria' });
    expect(answer).toBeUndefined();
    await m.run({ requireApproval: true });
    expect(m.sent().size).toBe(2);
  });
});

describe('identical rows, and copies approved together', () => {
  it('G: two identical rows in one file: validate flags the second; one is paid, both only when released', async () => {
    const m = await month();
    m.drop('bonus.csv', [HEADER, ANA, BRUNO, ANA]);
    const first = await m.run();
    expect(first.exit).toBe(2);
    const summary = summaryOf(first.files, 'bonus.csv');
    expect(summary.rows).toEqual({ paid: 2, held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /1 row repeats an earlier row of the same file exactly/,
    );
    expect(m.paidCents()).toBe(550_000);
    expect(await release(m, 'bonus.csv', { identical: true, by: 'maria' })).toMatchObject({
      rows: 1,
    });
    expect((await m.run()).exit).toBe(0);
    expect(m.paidCents()).toBe(850_000);
    noDuplicates(m.sent());
  });

  it('H: folha.csv and its re-export folha_final.csv both awaiting approval, both approved: one is paid, the other held', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    m.drop('folha_final.csv', [HEADER, ANA, BRUNO], '\n');
    expect((await m.run({ requireApproval: true })).exit).toBe(2);
    approveFile(m, 'folha.csv');
    approveFile(m, 'folha_final.csv');
    const both = await m.run({ requireApproval: true });
    expect(both.exit).toBe(2);
    expect(summaryOf(both.files, 'folha_final.csv').rows).toEqual({ held: 2 });
    expect(m.paidCents()).toBe(550_000);
    noDuplicates(m.sent());
  });
});

describe('nothing waits unseen', () => {
  const HOUR = 60 * 60 * 1000;

  it('O: a payout pending for 2 hours needs a person: exit 2, its age in the summary', async () => {
    // The gateway takes a day to settle it; our clock moves, the gateway's does not.
    const m = await month({ settleDelayMs: DAY });
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    const sent = await m.run({}, { followMs: 0 });
    expect(sent.exit).toBe(3);
    expect(summaryOf(sent.files, 'folha.csv').rows).toEqual({ pending: 2 });

    // Within pendingAlertAfter (default 1h): still "run again later".
    m.advance(30 * 60 * 1000);
    const soon = await m.run({}, { followMs: 0 });
    expect(soon.exit).toBe(3);
    expect(summaryOf(soon.files, 'folha.csv').problems.map(sayInEnglish).join(' ')).not.toMatch(
      /pending for/,
    );

    m.advance(HOUR + 35 * 60 * 1000);
    const late = await m.run({}, { followMs: 0 });
    expect(late.exit).toBe(2);
    const summary = summaryOf(late.files, 'folha.csv');
    expect(summary.rows).toEqual({ pending: 2 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /2 pending for up to 2h 05m since they were sent: look them up at the gateway/,
    );
    // Seen, never sent again.
    expect(m.sent().size).toBe(2);
    noDuplicates(m.sent());
  });

  it('O: the age is configurable (pendingAlertAfter)', async () => {
    const m = await month({ settleDelayMs: DAY });
    m.drop('folha.csv', [HEADER, ANA]);
    expect((await m.run({}, { followMs: 0 })).exit).toBe(3);
    m.advance(2 * HOUR);
    expect((await m.run({ pendingAlertAfter: 3 * HOUR }, { followMs: 0 })).exit).toBe(3);
    m.advance(HOUR + 60_000);
    const late = await m.run({ pendingAlertAfter: 3 * HOUR }, { followMs: 0 });
    expect(late.exit).toBe(2);
    expect(summaryOf(late.files, 'folha.csv').problems.map(sayInEnglish).join(' ')).toMatch(
      /1 pending for 3h 01m since it was sent: look it up at the gateway/,
    );
  });
});

describe('retry on purpose', () => {
  // The sandbox fails every payout to this key.
  const EVA = 'Eva Rocha,390.533.447-05,eva@example.com,(31) 97654-3210,fail@example.com,"700,00"';

  async function retry(m: Month, target: string) {
    const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    try {
      return await retryPayouts(journal, target, { by: 'maria' }, rulesOf(m));
    } finally {
      await journal.close();
    }
  }

  const retries = (m: Month, suffix: string) =>
    [...m.sent().entries()].filter(([orderId]) => orderId.endsWith(suffix));

  it('I: a row failed at the gateway is not sent again by re-dropping its file; payouts retry sends it once, as -r2', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    const first = await m.run();
    expect(first.exit).toBe(2);
    expect(summaryOf(first.files, 'folha.csv').rows).toEqual({ paid: 1, failed: 1 });
    expect(m.sent().size).toBe(2);

    // Dropped again within the hour (a corrected copy by the rules): the failed row is held.
    m.advance(60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    const again = await m.run();
    expect(again.exit).toBe(2);
    const copy = summaryOf(again.files, 'folha.csv');
    expect(copy.rows).toEqual({ covered: 1, held: 1 });
    expect(copy.problems.map(sayInEnglish).join(' ')).toMatch(/payouts retry "folha\.csv"/);
    expect(m.sent().size).toBe(2);

    // Dropped again two days later (same name, held whole): still nothing sent.
    m.advance(2 * DAY);
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    expect((await m.run()).exit).toBe(2);
    expect(m.sent().size).toBe(2);

    // A person asks: sent once, as -r2.
    const asked = await retry(m, 'folha.csv');
    expect(asked).toMatchObject({ kind: 'retried' });
    if (asked.kind !== 'retried') return;
    expect(asked.payouts.map((p) => p.orderId)).toEqual([expect.stringMatching(/-r2$/)]);
    const after = await m.run();
    expect(retries(m, '-r2')).toEqual([[asked.payouts[0]?.orderId, 1]]);
    expect(m.sent().size).toBe(3);
    // The key still fails at the gateway: -r2 failed too, and needs a person again.
    expect(after.exit).toBe(2);

    // Asking again sends -r3, once; runs alone never send anything more.
    expect(await retry(m, asked.payouts[0]?.orderId ?? '')).toMatchObject({ kind: 'retried' });
    await m.run();
    await m.run();
    expect(retries(m, '-r2')).toHaveLength(1);
    expect(retries(m, '-r3')).toHaveLength(1);
    expect(m.sent().size).toBe(4);
    noDuplicates(m.sent());
  });

  it('I: a failed row re-dropped under another name is held for payouts retry, not sent as new; one retry pays it once', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    expect(summaryOf((await m.run()).files, 'folha.csv').rows).toEqual({ paid: 1, failed: 1 });

    // The next day, the same rows saved as another file: Ana is a possible duplicate of
    // her payout; Eva's row repeats, unchanged, a payout that failed.
    m.advance(DAY);
    m.drop('folha_reenvio.csv', [HEADER, ANA, EVA]);
    // A dry run says so row by row, before anything is sent.
    const [plan] = await m.withJournal((journal) =>
      planRun([join(m.folders.inbox, 'folha_reenvio.csv')], journal, {
        ...m.config(),
        now: m.now(),
      }),
    );
    expect(plan?.holds.map((hold) => [hold.line, hold.rule])).toEqual([
      [2, 'possible duplicate'],
      [3, 'repeats a failed payout'],
    ]);
    const again = await m.run();
    expect(again.exit).toBe(2);
    const copy = summaryOf(again.files, 'folha_reenvio.csv');
    expect(copy.rows).toEqual({ held: 2 });
    expect(copy.problems.map(sayInEnglish).join(' ')).toMatch(
      /failed at the gateway.*payouts retry "folha_reenvio\.csv"/,
    );
    expect(m.sent().size).toBe(2);

    // The retry the hint names sends the failed payout again, once, and no later run
    // sends anything more; it fails again (the key always fails), so the copy's row it
    // covered needs a person once more.
    expect(await retry(m, 'folha_reenvio.csv')).toMatchObject({ kind: 'retried' });
    await m.run();
    await m.run();
    expect(retries(m, '-r2')).toHaveLength(1);
    expect(m.sent().size).toBe(3);
    const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    const copyBatch = (await journal.batches('folha_reenvio.csv'))[0]?.id ?? 0;
    const states = (await collect(entriesOf(journal, copyBatch))).map(
      (entry) => entry.payout?.state,
    );
    await journal.close();
    expect(states.sort()).toEqual(['held', 'held']);
    noDuplicates(m.sent());
  });

  it("I: a copy's row covered by a retry that fails again needs a person: held in its summary, result and status, with payouts retry", async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    expect((await m.run()).exit).toBe(2);
    // Its corrected copy: Ana covered by her payout, Eva's failed row held for a retry.
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    const copy = summaryOf((await m.run()).files, 'folha.csv');
    expect(copy.rows).toEqual({ covered: 1, held: 1 });
    expect(await retry(m, 'folha.csv')).toMatchObject({ kind: 'retried' });

    // -r2 fails at the gateway too: the copy's row it covered is not paid by anyone.
    const failed = await m.run();
    expect(retries(m, '-r2')).toHaveLength(1);
    expect(failed.exit).toBe(2);
    const evaOf = async () =>
      m.withJournal(async (journal) => {
        const entries = await collect(entriesOf(journal, copy.batchId ?? 0));
        return entries.find((entry) => entry.line === 3)?.payout;
      });
    expect((await evaOf())?.state).toBe('held');
    const again = await m.run();
    expect(again.exit).toBe(2);
    const named = again.files.filter((file) => file.batchId === copy.batchId);
    expect(named.map((file) => file.rows)).toEqual([{ covered: 1, held: 1 }]);
    expect(named[0]?.problems.map(sayInEnglish).join(' ')).toMatch(/payouts retry/);
    expect(readFileSync(named[0]?.result ?? '', 'utf8')).toMatch(/ended failed.*payouts retry/);
    const eva = (await evaOf())?.orderId ?? '';
    const status = await runCli(['status', eva], { env: m.env() });
    expect(status.stdout).toMatch(/held/);
    expect(status.stdout).toMatch(/payouts retry/);
    expect(m.sent().size).toBe(3);

    // The retry it names sends Eva once more, as -r3, and nothing else.
    expect(await retry(m, eva)).toMatchObject({ kind: 'retried' });
    await m.run();
    await m.run();
    expect(retries(m, '-r3')).toHaveLength(1);
    expect(m.sent().size).toBe(4);
    noDuplicates(m.sent());
  });

  /** Eva's row failed and Caio's was invalid; two hours later the copy with `eva` and Caio fixed. */
  async function copyAfterFailure(eva: string) {
    const m = await month();
    m.drop('folha.csv', [HEADER, EVA, CAIO_BROKEN]);
    expect(summaryOf((await m.run()).files, 'folha.csv').rows).toEqual({
      failed: 1,
      invalid: 1,
    });
    m.advance(2 * 60 * 60 * 1000);
    m.drop('folha.csv', [HEADER, eva, CAIO]);
    const { exit, files } = await m.run();
    return { m, exit, copy: summaryOf(files, 'folha.csv') };
  }

  it('I: a failed row fixed in a corrected copy the same day is sent once; the copy is not held whole', async () => {
    const { m, exit, copy } = await copyAfterFailure(
      EVA.replace('fail@example.com', 'eva@example.com'),
    );
    expect(exit).toBe(0);
    expect(copy.rows).toEqual({ paid: 2 });
    const eva = m.sandbox.ledger().filter((entry) => entry.pixKey === 'eva@example.com');
    expect(eva.map((entry) => entry.valueCents)).toEqual([70_000]);
    expect(m.sent().size).toBe(3);
    noDuplicates(m.sent());
  });

  it('I: a failed row repeated unchanged in a corrected copy the same day stays held for payouts retry; the fixed row is sent', async () => {
    const { m, exit, copy } = await copyAfterFailure(EVA);
    expect(exit).toBe(2);
    expect(copy.rows).toEqual({ held: 1, paid: 1 });
    const why = copy.problems.map(sayInEnglish).join(' ');
    expect(why).toMatch(/repeats folha\.csv, line 2 \(orderId .*ended failed at the gateway/);
    expect(why).toMatch(/payouts retry "folha\.csv"/);
    expect(m.sent().size).toBe(2);
    noDuplicates(m.sent());
  });

  it('I: a copy held whole for its name says which of its rows repeat which of the earlier file', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    await m.run();
    m.advance(2 * DAY);
    m.drop('folha.csv', [HEADER, EVA, CAIO, ANA]);
    const held = await m.run();
    expect(summaryOf(held.files, 'folha.csv').rows).toEqual({ held: 3 });
    expect(summaryOf(held.files, 'folha.csv').problems.map(sayInEnglish).join(' ')).toMatch(
      /repeats some of its rows \(line 2 as its line 3, line 4 as its line 2\)/,
    );
    expect(m.sent().size).toBe(2);
  });

  it('I: a failed row dropped again after duplicateWindow is a new payment, sent', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, EVA]);
    expect(summaryOf((await m.run()).files, 'folha.csv').rows).toEqual({ failed: 1 });
    m.advance(21 * DAY);
    m.drop('folha_dezembro.csv', [HEADER, EVA]);
    expect(summaryOf((await m.run()).files, 'folha_dezembro.csv').rows).toEqual({ failed: 1 });
    expect(m.sent().size).toBe(2);
  });

  it('I: a row that paid, or one already sent again, is not retried', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, EVA]);
    await m.run();
    const journal = await openJournal(sqliteJournalAt(m.folders.journal), { now: m.now });
    const batchId = (await journal.batches('folha.csv'))[0]?.id ?? 0;
    const paid = (await collect(entriesOf(journal, batchId))).find(
      (e) => e.payout?.state === 'paid',
    );
    await journal.close();
    expect(await retry(m, paid?.orderId ?? '')).toMatchObject({
      kind: 'not-failed',
      state: 'paid',
    });
    expect(await retry(m, 'folha.csv')).toMatchObject({ kind: 'retried' });
    // Asked twice before a run: the second finds nothing failed left to send again.
    expect(await retry(m, 'folha.csv')).toMatchObject({ kind: 'nothing' });
    await m.run();
    expect(retries(m, '-r2')).toHaveLength(1);
    expect(m.sent().size).toBe(3);
  });
});

describe('the duplicate window', () => {
  /** folha.csv, Ana and Bruno, held for balance. */
  async function heldForBalance(): Promise<Month> {
    const m = await month({ balanceCents: 100_00 });
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(2);
    return m;
  }

  /** Its re-export under another name, after folha.csv was paid: held, nothing paid again. */
  async function reExportHeld(m: Month): Promise<void> {
    m.drop('folha_final.csv', [HEADER, ANA, BRUNO]);
    const copy = await m.run();
    expect(copy.exit).toBe(2);
    expect(summaryOf(copy.files, 'folha_final.csv').rows).toEqual({ held: 2 });
    expect(m.paidCents()).toBe(550_000);
    expect(m.sent().size).toBe(2);
  }

  it('counts from when a payout was paid: a re-export 6 days after a payment held 15 days for balance is held', async () => {
    const m = await heldForBalance();
    m.advance(15 * DAY);
    await m.topUp(100_000_00);
    expect((await m.run()).exit).toBe(0);
    expect(m.paidCents()).toBe(550_000);
    m.advance(6 * DAY);
    await reExportHeld(m);
  });

  it('holds a file held for balance beyond the window when, at its top-up, another file has paid its row since', async () => {
    const m = await heldForBalance();
    m.advance(21 * DAY);
    // Ana's row again, in a file the balance covers: paid.
    await m.topUp(300_000);
    m.drop('folha_ana.csv', [HEADER, ANA]);
    expect(summaryOf((await m.run()).files, 'folha_ana.csv').rows).toEqual({ paid: 1 });
    await m.topUp(1_000_000);
    const topped = await m.run();
    expect(topped.exit).toBe(2);
    expect(summaryOf(topped.files, 'folha.csv').rows).toEqual({ paid: 1, held: 1 });
    expect(m.paidCents()).toBe(300_000 + 250_000);
  });

  it('a row left unsent beyond the window still counts: its re-export under another name is held, never both sent', async () => {
    const m = await month();
    // The gateway down for the balance: folha.csv is journaled, nothing of it sent.
    m.sandbox.setFaults({ serverErrorRate: 1, operations: ['getBalance'] });
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(3);
    expect(m.sent().size).toBe(0);
    // Three weeks later, the gateway back, the same payroll under another name.
    m.advance(21 * DAY);
    m.sandbox.setFaults({ serverErrorRate: 0 });
    m.drop('folha_final.csv', [HEADER, ANA, BRUNO]);
    const both = await m.run();
    expect(summaryOf(both.files, 'folha_final.csv').rows).toEqual({ held: 2 });
    expect(m.paidCents()).toBe(550_000);
    expect(m.sent().size).toBe(2);
  });

  it('orders payouts by the journal, not the clock: with the clock 30 s behind the first file, its re-export is held', async () => {
    const m = await month();
    m.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await m.run()).exit).toBe(0);

    m.advance(-30_000);
    await reExportHeld(m);
  });
});
