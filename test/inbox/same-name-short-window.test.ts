/**
 * A file dropped again under its name within the day, with `duplicateWindow` shorter than
 * a day: its unchanged rows change no paid row, so they are held by the same-name rule,
 * with its answers, and the answer the summary prints pays nobody twice. The sandbox's
 * ledger is the judge.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/clock.js';
import { runCli } from '../support/cli.js';
import { passHome, type PassHome } from '../support/pass-home.js';

const HOUR = 60 * 60 * 1000;
const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
const BRUNO_RAISE =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.700,00"';

/** Cashouts the gateway created: Pix key and amount, with how many times each. */
function paid(home: PassHome): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of home.sandbox.ledger()) {
    if (entry.object !== 'cashout') continue;
    const key = `${entry.pixKey ?? ''} ${entry.valueCents}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** A home whose duplicateWindow is 12 hours, its commands run on its clock. */
async function twelveHourHome() {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_DUPLICATE_WINDOW: '12h' };
  const cli = (...args: string[]) =>
    runCli(args, { env, clock: { now: home.now, sleep: systemClock.sleep } });
  return { home, cli };
}

const heldOf = (home: PassHome, batchId: number) =>
  home.withJournal(async (journal) =>
    (await journal.heldRowsOfBatch(batchId)).map((row) => [row.line, row.reason]),
  );

const PAID_ONCE = new Map([
  ['ana@example.com 300000', 1],
  ['bruno@example.com 250000', 1],
]);

describe('a file dropped again under its name 13 hours later, duplicateWindow 12h', () => {
  it('holds its unchanged rows for its name, not as changing a paid row; its answer pays nobody twice', async () => {
    const { home, cli } = await twelveHourHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(0);
    home.advance(13 * HOUR);
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    const again = await cli('run');
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(/same name as folha\.csv/);
    expect(again.stdout).not.toMatch(/already paid/);
    expect(await heldOf(home, 2)).toEqual([
      [2, 'same-name'],
      [3, 'same-name'],
    ]);
    const status = await cli('status', 'folha.csv');
    expect(status.stdout).toMatch(/same name as folha\.csv/);
    expect(status.stdout).not.toMatch(/already paid/);
    expect(paid(home)).toEqual(PAID_ONCE);

    // The answer it offers first, the same file corrected, pays nothing again.
    expect((await cli('approve', 'folha.csv', '--corrects', '1')).code).toBe(0);
    await cli('run');
    expect(paid(home)).toEqual(PAID_ONCE);
  });

  it('still holds a row that changes the amount a file of its name paid as changing a paid row', async () => {
    const { home, cli } = await twelveHourHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(0);
    home.advance(13 * HOUR);
    home.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    const again = await cli('run');
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(/changes a row folha\.csv already paid/);
    expect(await heldOf(home, 2)).toEqual([
      [2, 'same-name'],
      [3, 'changes-paid'],
    ]);
    expect(paid(home)).toEqual(PAID_ONCE);
  });
});
