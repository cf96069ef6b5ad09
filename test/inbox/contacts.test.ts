/**
 * A payroll export as accounting has it (Nome, CPF, Chave Pix, Valor) is paid: the
 * gateway's required e-mail and phone come from each row's Pix key where it is of that
 * type, else from recipientEmail and recipientPhone, and never change who is paid.
 */
import { describe, expect, it } from 'vitest';
import { entriesOf } from '../../src/results/result-file.js';
import { collect } from '../support/collect.js';
import { passHome } from '../support/pass-home.js';

const EXPORT = [
  'Nome;CPF;Chave Pix;Valor',
  'Ana Souza;529.982.247-25;ana@example.com;3.000,00',
  'Bruno Lima;111.444.777-35;+55 21 99876-5432;2.500,00',
  'Caio Dias;390.533.447-05;390.533.447-05;1.000,00',
];

describe('a payroll export without e-mail and phone columns', () => {
  it('is paid in full with the configured contacts, each to its own key', async () => {
    const home = await passHome();
    home.drop('folha.csv', EXPORT);
    const run = await home.run({
      recipientEmail: 'folha@empresa.com.br',
      recipientPhone: '(11) 3333-4444',
    });
    expect(run.exit).toBe(0);
    expect(run.files[0]?.rows).toEqual({ paid: 3 });
    const sent = await home.withJournal(async (journal) => {
      const entries = await collect(
        entriesOf(journal, (await journal.batches('folha.csv'))[0]?.id ?? 0),
      );
      // The contacts sent are the payout's: a result line shows no e-mail or phone.
      return Promise.all(
        entries.map(async (entry) => (await journal.payout(entry.orderId ?? ''))?.request),
      );
    });
    expect(sent.map((request) => [request?.pixKey, request?.cpfCnpj, request?.person])).toEqual([
      [
        'ana@example.com',
        '52998224725',
        { name: 'Ana Souza', email: 'ana@example.com', phone: '+551133334444' },
      ],
      [
        '+5521998765432',
        '11144477735',
        { name: 'Bruno Lima', email: 'folha@empresa.com.br', phone: '+5521998765432' },
      ],
      [
        '39053344705',
        '39053344705',
        { name: 'Caio Dias', email: 'folha@empresa.com.br', phone: '+551133334444' },
      ],
    ]);
    expect(home.sandbox.ledger().filter((entry) => entry.object === 'cashout')).toHaveLength(3);
  });

  it('without them, pays no row it cannot complete, and says which and why', async () => {
    const home = await passHome();
    home.drop('folha.csv', EXPORT);
    const run = await home.run();
    expect(run.exit).toBe(2);
    expect(run.files[0]?.rows).toEqual({ invalid: 3 });
    expect(home.sandbox.ledger()).toHaveLength(0);
  });
});
