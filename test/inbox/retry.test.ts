/**
 * `payouts retry` after someone else paid: a returned payout sent again on purpose is
 * weighed against what has paid that person that amount since, as a person runs it. The
 * sandbox's ledger is the judge of who was paid.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { passHome, type PassHome } from '../support/pass-home.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
// The corrected copy pays Bruno at another key of his.
const BRUNO_NEW_KEY = BRUNO.replace(/bruno@example\.com,"/, 'bruno.lima@example.com,"');

/** Cash-outs the gateway paid (not returned) to keys that start with `who`. */
const paidTo = (home: PassHome, who: string): number =>
  home.sandbox
    .ledger()
    .filter(
      (entry) =>
        entry.object === 'cashout' && entry.status === 'paid' && entry.pixKey?.startsWith(who),
    ).length;

describe('payouts retry, once a corrected copy has paid that person', () => {
  it('a returned payout of folha.csv, then folha_corrigida.csv pays Bruno: payouts retry folha.csv holds his row, naming that payout, and pays nobody twice', async () => {
    const home = await passHome();
    const env = home.env();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await runCli(['run'], { env })).code).toBe(0);
    const returned = home.sandbox.ledger().find((entry) => entry.pixKey === 'bruno@example.com');
    expect(home.sandbox.refund(returned?.orderId ?? '')).toBe(true);
    await runCli(['reconcile', '--days', '9999'], { env });

    home.drop('folha_corrigida.csv', [HEADER, BRUNO_NEW_KEY]);
    expect((await runCli(['run'], { env })).code).toBe(0);
    expect(paidTo(home, 'bruno')).toBe(1);

    const retry = await runCli(['retry', 'folha.csv', '--by', 'maria'], { env });
    await runCli(['run'], { env });
    expect(paidTo(home, 'bruno')).toBe(1);
    expect(paidTo(home, 'ana')).toBe(1);
    expect(retry.stdout).toMatch(
      /^1 payout sent again is held, not sent: another file has paid that person that amount since:\n {2}line 3: \S+ -> \S+-r2: possible duplicate: the same document and amount as folha_corrigida\.csv, line 2, /,
    );
    const held = await home.withJournal(async (journal) => {
      const [folha] = await journal.batches('folha.csv');
      return journal.heldRowsOfBatch(folha?.id ?? 0);
    });
    expect(held.map((row) => [row.line, row.reason, row.repeats?.fileName])).toEqual([
      [3, 'duplicate', 'folha_corrigida.csv'],
    ]);

    // Due twice after all: said with the count of repeats, it is paid once more.
    const approved = await runCli(['approve', 'folha.csv', '--new-batch', '--repeats', '1'], {
      env,
    });
    expect(approved.code, approved.stderr).toBe(0);
    await runCli(['run'], { env });
    expect(paidTo(home, 'bruno')).toBe(2);
  });
});
