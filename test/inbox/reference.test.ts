/**
 * A payment's reference (an invoice, an order, a competência) in the cover key, with the
 * clock moved between runs: a new reference is a new payment even at the same amount
 * within duplicateWindow; the same reference again is held whatever its age. The
 * sandbox's ledger says who was paid.
 */
import { describe, expect, it } from 'vitest';
import type { FileSummary } from '../../src/app/pass.js';
import { sayInEnglish } from '../../src/messages/say.js';
import { passHome, type PassHome } from '../support/pass-home.js';

const DAY = 24 * 60 * 60 * 1000;
const WEEK = 7 * DAY;
const SUPPLIERS = 'Fornecedor,CNPJ,E-mail,Telefone,Chave Pix,NF,Valor';
const ALUGUEL = (nf: string, amount = '"4.000,00"') =>
  `Imobiliária Sol,11.222.333/0001-81,sol@example.com,(11) 3333-4444,sol@example.com,${nf},${amount}`;
const PAYROLL = 'Nome,CPF,E-mail,Celular,Chave Pix,Verba,Competência,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com';

/** Payouts the gateway created, by orderId: how many times each. */
function created(home: PassHome): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of home.sandbox.ledger()) {
    if (entry.object === 'cashout') {
      counts.set(entry.orderId ?? '', (counts.get(entry.orderId ?? '') ?? 0) + 1);
    }
  }
  return counts;
}

function paidTwice(home: PassHome): number {
  return [...created(home).values()].filter((times) => times > 1).length;
}

function summaryOf(files: FileSummary[], name: string): FileSummary {
  const summary = files.find((file) => file.file === name);
  if (!summary) throw new Error(`no summary for ${name}: ${files.map((f) => f.file).join(', ')}`);
  return summary;
}

describe('an invoice column (NF) in a weekly supplier file', () => {
  it("next week's invoice of the same amount is a new payment, inside duplicateWindow", async () => {
    const home = await passHome();
    home.drop('aluguel-semana-01.csv', [SUPPLIERS, ALUGUEL('1001')]);
    expect((await home.run()).exit).toBe(0);
    home.advance(WEEK);
    home.drop('aluguel-semana-02.csv', [SUPPLIERS, ALUGUEL('1002')]);
    const second = await home.run();
    expect(summaryOf(second.files, 'aluguel-semana-02.csv').rows).toEqual({ paid: 1 });
    expect(second.exit).toBe(0);
    expect(created(home).size).toBe(2);
    expect(paidTwice(home)).toBe(0);
  });

  it("last week's invoice sent again is held, and still held 12 weeks later, naming the payment", async () => {
    const home = await passHome();
    home.drop('aluguel-semana-01.csv', [SUPPLIERS, ALUGUEL('1001')]);
    expect((await home.run()).exit).toBe(0);
    home.advance(WEEK);
    home.drop('aluguel-semana-02.csv', [SUPPLIERS, ALUGUEL('1002'), ALUGUEL('1001')]);
    const second = await home.run();
    expect(second.exit).toBe(2);
    expect(summaryOf(second.files, 'aluguel-semana-02.csv').rows).toEqual({ paid: 1, held: 1 });

    home.advance(12 * WEEK);
    home.drop('aluguel-semana-14.csv', [SUPPLIERS, ALUGUEL('1014'), ALUGUEL('1002')]);
    const later = await home.run();
    expect(later.exit).toBe(2);
    const summary = summaryOf(later.files, 'aluguel-semana-14.csv');
    expect(summary.rows).toEqual({ paid: 1, held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /the same reference \(1002\) for the same document as aluguel-semana-02\.csv, line 2/,
    );
    expect(created(home).size).toBe(3);
    expect(paidTwice(home)).toBe(0);
  });

  it('the same invoice with another amount is held, naming both amounts', async () => {
    const home = await passHome();
    home.drop('aluguel-semana-01.csv', [SUPPLIERS, ALUGUEL('1001')]);
    expect((await home.run()).exit).toBe(0);
    home.advance(3 * DAY);
    home.drop('aluguel-ajuste.csv', [SUPPLIERS, ALUGUEL('1001', '"4.200,00"')]);
    const again = await home.run();
    expect(again.exit).toBe(2);
    const summary = summaryOf(again.files, 'aluguel-ajuste.csv');
    expect(summary.rows).toEqual({ held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /R\$ 4\.000,00 there, R\$ 4\.200,00 here/,
    );
    expect(created(home).size).toBe(1);
  });

  // The routines model (seed 483910443) shrank to this: the second copy waits as
  // `fornecedores [2].csv`, and supersedes the first.
  it('the same invoices dropped twice under another name are held by reference both times', async () => {
    const home = await passHome();
    const rows = [SUPPLIERS, ALUGUEL('1001'), ALUGUEL('1002')];
    home.drop('aluguel-semana-01.csv', rows);
    expect((await home.run()).exit).toBe(0);
    home.drop('fornecedores.csv', rows);
    const first = await home.run();
    expect(first.exit).toBe(2);
    expect(summaryOf(first.files, 'fornecedores.csv').rows).toEqual({ held: 2 });
    home.drop('fornecedores.csv', rows);
    const second = await home.run();
    expect(second.exit).toBe(2);
    const copies = second.files.filter((file) => file.file.startsWith('fornecedores'));
    expect(copies.map((copy) => copy.rows)).toEqual(
      expect.arrayContaining([{ held: 2 }, { superseded: 2 }]),
    );
    expect(created(home).size).toBe(2);
    expect(paidTwice(home)).toBe(0);
  });

  it('a row with an empty NF cell is weighed by duplicateWindow, as in a file without the column', async () => {
    const home = await passHome();
    home.drop('aluguel-semana-01.csv', [SUPPLIERS, ALUGUEL('1001')]);
    expect((await home.run()).exit).toBe(0);
    home.advance(WEEK);
    home.drop('aluguel-semana-02.csv', [SUPPLIERS, ALUGUEL('')]);
    const second = await home.run();
    expect(second.exit).toBe(2);
    expect(summaryOf(second.files, 'aluguel-semana-02.csv').rows).toEqual({ held: 1 });
    expect(created(home).size).toBe(1);
  });

  it('a corrected copy of the same name that changes an invoice paid is held as changing a paid row, never covered', async () => {
    const home = await passHome();
    const broken = ALUGUEL('1002').replace('sol@example.com,(11)', 'sol@example,(11)');
    home.drop('fornecedores.csv', [SUPPLIERS, ALUGUEL('1001'), broken]);
    expect((await home.run()).exit).toBe(2);
    home.advance(2 * 60 * 60 * 1000);
    home.drop('fornecedores.csv', [SUPPLIERS, ALUGUEL('1001', '"4.100,00"'), ALUGUEL('1002')]);
    const corrected = await home.run();
    expect(corrected.exit).toBe(2);
    const summary = summaryOf(corrected.files, 'fornecedores.csv');
    expect(summary.rows).toEqual({ paid: 1, held: 1 });
    expect(summary.problems.map(sayInEnglish).join(' ')).toMatch(
      /changes a row fornecedores\.csv already paid/,
    );
    expect(created(home).size).toBe(2);
    expect(paidTwice(home)).toBe(0);
  });
});

describe('a competência column in payroll', () => {
  const salary = `${ANA},Salário,11/2026,"5.000,00"`;
  const vacation = `${ANA},Férias,11/2026,"6.666,67"`;
  const thirteenth = `${ANA},13º salário,nov/26,"2.500,00"`;

  it('salary, férias and 13º of one competência are each paid; the payroll dropped again months later is held', async () => {
    const home = await passHome();
    home.drop('folha-2026-11.csv', [PAYROLL, salary, vacation]);
    expect((await home.run()).exit).toBe(0);
    home.advance(5 * DAY);
    home.drop('13o-2026.csv', [PAYROLL, thirteenth]);
    expect((await home.run()).exit).toBe(0);
    home.advance(30 * DAY);
    home.drop('folha-2026-12.csv', [PAYROLL, `${ANA},Salário,2026-12,"5.000,00"`]);
    expect((await home.run()).exit).toBe(0);
    expect(created(home).size).toBe(4);

    home.advance(60 * DAY);
    home.drop('folha novembro.csv', [PAYROLL, salary, vacation]);
    const again = await home.run();
    expect(again.exit).toBe(2);
    expect(summaryOf(again.files, 'folha novembro.csv').rows).toEqual({ held: 2 });
    expect(created(home).size).toBe(4);
    expect(paidTwice(home)).toBe(0);
  });
});
