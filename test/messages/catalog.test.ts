import { describe, expect, it } from 'vitest';
import { CATALOGS, type Catalog } from '../../src/messages/catalog.js';
import { languageOf } from '../../src/messages/language.js';

/** Every message of a catalog rendered with sample values: its keys and its texts. */
function rendered(catalog: Catalog): Record<string, string> {
  const sample = {
    file: 'folha.csv',
    rows: 2,
    valid: 1,
    invalid: 1,
    skipped: 0,
    total: 'R$ 10,00',
    count: 2,
    state: 'paid',
    amount: 'R$ 10,00',
    outcome: 'journaled',
    totals: '2 paid',
    path: 'results/folha.result.csv',
    sentence: 'journaled',
    line: 3,
    column: '"CPF"',
    message: 'is not a valid CPF',
    report: false,
    note: 'it has the same name as folha.csv',
    journal: '/srv/payouts/journal.db',
    rule: 'possible duplicate',
    lines: [{ line: 9, reason: 'a total line' }],
    contact: 'email',
    fromKey: 1,
    fromSetting: 2,
    setting: 'recipientEmail',
    value: 'folha@empresa.com.br',
    columns: [{ heading: 'Valor Líquido', as: 'amount' }],
    headings: ['Centro de custo'],
    batchId: 7,
    held: 1,
    covered: 0,
    example: null,
    hintFlags: '',
    name: 'Ana Souza',
    document: '***25',
    key: 'a***@example.com',
    encoding: 'UTF-8',
    delimiter: ';',
    orderIdColumn: null,
    fileLine: 2,
    at: Date.UTC(2026, 10, 27, 9, 30),
    by: 'maria',
    given: 2,
    notHeld: [2, 4],
    verb: 'approve',
    batches: [
      { batchId: 7, at: Date.UTC(2026, 10, 27, 9, 30) },
      { batchId: 9, at: Date.UTC(2026, 10, 27, 14, 5) },
    ],
    inFolder: 'folha [2].csv',
    batchFile: 'fornecedor.csv',
    candidates: [{ batchId: 7, file: 'folha.csv' }],
    duration: '10m',
    today: '2026-11-28',
    flag: '--wait',
    text: 'banana',
    option: '--by <name>',
    other: '--order-id <orderId>',
    why: 'Esperava um número de lote, por exemplo 12.',
    suggestion: 'run?',
    help: 'payouts run --help',
    expected: 2,
    got: 3,
    approvals: [{ by: 'ana', at: '2026-11-28 14:02:07' }],
    code: 'K7QD-M2XA-P9RT',
    cause: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432',
  };
  const texts: Record<string, string> = {};
  const add = (prefix: string, entries: [string, unknown][]) => {
    for (const [key, value] of entries) {
      const name = `${prefix}${key}`;
      // What the reading of a file says has its own samples (said.test.ts).
      if (name === 'said') continue;
      if (typeof value === 'string') texts[name] = value;
      else if (typeof value === 'function')
        texts[name] = (value as (p: object) => string)({ ...sample, state: 'taken' });
      else add(`${name}.`, Object.entries(value as object));
    }
  };
  add('', Object.entries(catalog));
  return texts;
}

describe('the message catalogs', () => {
  it('have the same messages in every language, each one rendered', () => {
    const en = rendered(CATALOGS.en);
    const pt = rendered(CATALOGS['pt-BR']);
    expect(Object.keys(pt).sort()).toEqual(Object.keys(en).sort());
    for (const [key, text] of [...Object.entries(en), ...Object.entries(pt)]) {
      expect(text, key).not.toMatch(/undefined|\[object/);
      expect(text.trim(), key).not.toBe('');
    }
  });

  it('speak Portuguese where people read: no status word or heading left in English', () => {
    const en = rendered(CATALOGS.en);
    const pt = rendered(CATALOGS['pt-BR']);
    // Names that are the same in both languages, on purpose.
    const same = new Set(['heading.sandbox', 'heading.endToEndId']);
    for (const key of Object.keys(en).filter((k) => /^(heading|state)\./.test(k)))
      if (!same.has(key)) expect(pt[key], key).not.toBe(en[key]);
  });

  it('count in both languages: 1 payout, 2 payouts; 1 linha, 2 linhas', () => {
    const [en, pt] = [CATALOGS.en.approval, CATALOGS['pt-BR'].approval];
    expect(en.onceApproved({ count: 1, amount: 'R$ 1,00' })).toBe(
      'Once approved, 1 payout is sent, R$ 1,00 in all.',
    );
    expect(en.onceApproved({ count: 2, amount: 'R$ 2,00' })).toBe(
      'Once approved, 2 payouts are sent, R$ 2,00 in all.',
    );
    expect(en.notSent({ invalid: 1, held: 2, covered: 0 })).toBe(
      'Not sent: 1 invalid row, 2 rows held by the rules on who is paid, 0 covered by payouts already made.',
    );
    expect(pt.notSent({ invalid: 2, held: 1, covered: 1 })).toBe(
      'Não enviadas: 2 linhas inválidas, 1 linha retida pelas regras de quem é pago, 1 já coberta por pagamentos já feitos.',
    );
  });

  it.each([
    [null, {}, 'en'],
    [null, { LANG: 'pt_BR.UTF-8' }, 'pt-BR'],
    [null, { LANG: 'C.UTF-8' }, 'en'],
    [null, { LANG: 'pt_BR.UTF-8', LC_ALL: 'en_US.UTF-8' }, 'en'],
    [null, { LANG: 'en_US.UTF-8', LC_MESSAGES: 'pt_PT' }, 'pt-BR'],
    [null, { LANG: 'pt' }, 'pt-BR'],
    [null, { LANG: 'ptx' }, 'en'],
    [null, { LC_ALL: '', LANG: 'pt_BR' }, 'pt-BR'],
    ['en', { LANG: 'pt_BR.UTF-8' }, 'en'],
    ['pt-BR', {}, 'pt-BR'],
  ] as const)('languageOf(%s, %j) is %s', (setting, env, expected) => {
    expect(languageOf(setting, env)).toBe(expected);
  });
});
