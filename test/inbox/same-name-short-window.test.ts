/**
 * A file dropped again under its name within the day, with `duplicateWindow` shorter than
 * a day: its unchanged rows change no paid row, so they are held by the same-name rule,
 * with its answers, and the answer the summary prints pays nobody twice. The sandbox's
 * ledger is the judge.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/clock.js';
import { runCli } from '../support/cli.js';
import { paidByKey } from '../support/gateway.js';
import { passHome, type PassHome } from '../support/pass-home.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
/** A payroll row of one person, their e-mail their Pix key. */
const row = (name: string, cpf: string, key: string, amount: string) =>
  [name, cpf, key, '(11) 98765-4321', key, `"${amount}"`].join(',');
const ANA = row('Ana Souza', '529.982.247-25', 'ana@example.com', '3.000,00');
const BRUNO = row('Bruno Lima', '111.444.777-35', 'bruno@example.com', '2.500,00');
const BRUNO_RAISE = row('Bruno Lima', '111.444.777-35', 'bruno@example.com', '2.700,00');

const PAID_ONCE = new Map([
  ['ana@example.com 300000', 1],
  ['bruno@example.com 250000', 1],
]);

/**
 * With duplicateWindow at 12 hours, folha.csv paid, then `again` dropped as folha.csv 13
 * hours later and run; every command on the home's clock.
 */
async function droppedAgain(again: readonly string[]) {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_DUPLICATE_WINDOW: '12h' };
  const cli = (...args: string[]) =>
    runCli(args, { env, clock: { now: home.now, sleep: systemClock.sleep } });
  home.drop('folha.csv', [HEADER, ANA, BRUNO]);
  expect((await cli('run')).code).toBe(0);
  home.advance(13 * 60 * 60 * 1000);
  home.drop('folha.csv', [HEADER, ...again]);
  return { home, cli, run: await cli('run') };
}

const heldOf = (home: PassHome, batchId: number) =>
  home.withJournal(async (journal) =>
    (await journal.heldRowsOfBatch(batchId)).map((held) => [held.line, held.reason]),
  );

describe('a file dropped again under its name 13 hours later, duplicateWindow 12h', () => {
  it('holds its unchanged rows for its name, not as changing a paid row; its answer pays nobody twice', async () => {
    const { home, cli, run } = await droppedAgain([ANA, BRUNO]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/same name as folha\.csv/);
    expect(run.stdout).not.toMatch(/already paid/);
    expect(await heldOf(home, 2)).toEqual([
      [2, 'same-name'],
      [3, 'same-name'],
    ]);
    const status = await cli('status', 'folha.csv');
    expect(status.stdout).toMatch(/same name as folha\.csv/);
    expect(status.stdout).not.toMatch(/already paid/);
    expect(paidByKey(home.sandbox)).toEqual(PAID_ONCE);

    // The answer it offers first, the same file corrected, pays nothing again.
    expect((await cli('approve', 'folha.csv', '--corrects', '1')).code).toBe(0);
    await cli('run');
    expect(paidByKey(home.sandbox)).toEqual(PAID_ONCE);
  });

  it('still holds a row that changes the amount a file of its name paid as changing a paid row', async () => {
    const { home, run } = await droppedAgain([ANA, BRUNO_RAISE]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/changes a row folha\.csv already paid/);
    expect(await heldOf(home, 2)).toEqual([
      [2, 'same-name'],
      [3, 'changes-paid'],
    ]);
    expect(paidByKey(home.sandbox)).toEqual(PAID_ONCE);
  });
});
