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
    encoding: 'UTF-8',
    delimiter: ';',
    orderIdColumn: null,
  };
  const texts: Record<string, string> = {};
  for (const [key, value] of Object.entries(catalog)) {
    if (typeof value === 'string') texts[key] = value;
    else if (typeof value === 'function')
      texts[key] = (value as (p: object) => string)({ ...sample, state: 'taken' });
    else
      for (const [inner, text] of Object.entries(value as Record<string, string>))
        texts[`${key}.${inner}`] = text;
  }
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
