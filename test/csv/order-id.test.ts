import { describe, expect, it } from 'vitest';
import {
  batchKey,
  batchSlug,
  batchStem,
  contentFingerprint,
  deriveOrderId,
  homeTag,
  orderIdsAsBatches,
} from '../../src/csv/order-id.js';

/** One row's content, as the fingerprint reads it. */
const content = {
  pixKeyType: 'CPF',
  pixKey: '52998224725',
  cpfCnpj: '52998224725',
  valueCents: 1000,
  name: 'Ana Souza',
};

describe('batchStem', () => {
  it.each([
    ['payroll-2026-11.csv', 'payroll-2026-11'],
    ['/srv/inbox/payroll-2026-11.CSV', 'payroll-2026-11'],
    ['payroll-2026-11 - Copy.csv', 'payroll-2026-11'],
    ['payroll-2026-11 - Cópia.csv', 'payroll-2026-11'],
    ['Cópia de payroll-2026-11.csv', 'payroll-2026-11'],
    ['Copy of payroll-2026-11.csv', 'payroll-2026-11'],
    ['folha (corrigida).csv', 'folha'],
    ['folha (Corrigido).csv', 'folha'],
    ['fornecedores.txt', 'fornecedores'],
    ['bonus 2026.csv', 'bonus 2026'],
    // A number in parentheses may name an installment: never a copy mark.
    ['13o salario (1).csv', '13o salario (1)'],
    ['13o salario (2).csv', '13o salario (2)'],
    ['payroll-2026-11 - Copy (2).csv', 'payroll-2026-11 - Copy (2)'],
    ['folha (11).csv', 'folha (11)'],
    // The mark payouts itself gives a file whose name is taken in a folder.
    ['folha [2].csv', 'folha'],
  ])('%j -> %j', (name, stem) => {
    expect(batchStem(name)).toBe(stem);
  });
});

describe('deriveOrderId with a batch number', () => {
  it("gives next month's file of the same name orderIds of its own", () => {
    const first = contentFingerprint(batchKey('folha', 1), content);
    const second = contentFingerprint(batchKey('folha', 2), content);
    expect(second).not.toEqual(first);
    expect(deriveOrderId(batchSlug('folha', 2), second, 0)).toMatch(/^folha-b2-[0-9a-f]{16}$/);
    // The first batch of a name keeps the ids earlier versions gave it.
    expect(batchKey('folha', 1)).toBe(batchKey('folha'));
    expect(batchSlug('folha', 1)).toBe('folha');
  });
});

describe('orderIdsAsBatches', () => {
  const as = (batchNumber: number, occurrence = 0) =>
    deriveOrderId(
      batchSlug('folha', batchNumber, '1f0c9a2e'),
      contentFingerprint(batchKey('folha', batchNumber), content),
      occurrence,
    );
  const made = { stem: 'folha', batchNumber: 2, home: '1f0c9a2e' };

  it.each([
    ['a derived orderId', as(2), [as(3), as(4)]],
    ['an identical row after the first', as(2, 1), [as(3, 1), as(4, 1)]],
    ['an orderId the file gave', 'f-0', []],
    ['a retry of a derived orderId', `${as(2)}-r2`, []],
    ['another batch number', as(5), []],
  ])('%s', (_, orderId, expected) => {
    expect(orderIdsAsBatches(orderId, made, content, [3, 4])).toEqual(expected);
  });

  it('gives none for a row whose content is not what its orderId was made of', () => {
    expect(orderIdsAsBatches(as(2), made, { ...content, valueCents: 445050 }, [3])).toEqual([]);
  });
});

describe("the home's tag in derived orderIds", () => {
  it.each([
    ['3f9a0c1b-2d4e-4f60-8a7b-9c0d1e2f3a4b', '3f9a0c1b'],
    ['3F9A0C1B-2D4E-4F60-8A7B-9C0D1E2F3A4B', '3f9a0c1b'],
    ['00ab-cd12-ef', '00abcd12'],
  ])('homeTag(%j) is %j', (journalId, tag) => {
    expect(homeTag(journalId)).toBe(tag);
  });

  it.each([
    ['folha', 1, '3f9a0c1b', 'folha-3f9a0c1b'],
    ['folha', 2, '3f9a0c1b', 'folha-b2-3f9a0c1b'],
    ['x'.repeat(80), 1, '3f9a0c1b', `${'x'.repeat(29)}-3f9a0c1b`],
    ['x'.repeat(80), 12, '3f9a0c1b', `${'x'.repeat(25)}-b12-3f9a0c1b`],
    // A batch journaled before homes had a tag keeps the orderIds it has.
    ['folha', 2, null, 'folha-b2'],
  ] as const)('batchSlug(%j, %i, %j) is %j', (stem, batchNumber, home, slug) => {
    expect(batchSlug(stem, batchNumber, home)).toBe(slug);
  });

  it('keeps a derived orderId within 55 characters with the tag, as long as before it', () => {
    const slug = batchSlug('x'.repeat(80), 99, '3f9a0c1b');
    expect(deriveOrderId(slug, contentFingerprint(batchKey('x'), content), 0)).toHaveLength(55);
  });
});

describe('batchSlug', () => {
  it.each([
    ['Folha Março', 'folha-marco'],
    ['payroll-2026-11', 'payroll-2026-11'],
    ["=cmd|' /C calc'!A0", 'cmd-c-calc-a0'],
    ['***', 'payout'],
    ['x'.repeat(80), 'x'.repeat(38)],
  ])('%j -> %j', (stem, slug) => {
    expect(batchSlug(stem)).toBe(slug);
  });
});

describe('deriveOrderId', () => {
  it('is stable, and numbers identical rows', () => {
    const slug = batchSlug('Folha Março');
    const fingerprint = contentFingerprint(slug, content);
    expect(deriveOrderId(slug, fingerprint, 0)).toMatch(/^folha-marco-[0-9a-f]{16}$/);
    expect(deriveOrderId(slug, fingerprint, 1)).toBe(`${deriveOrderId(slug, fingerprint, 0)}-2`);
    expect(contentFingerprint(slug, content)).toEqual(fingerprint);
  });

  it('derives the orderIds it always has: a changed id would pay a file taken again as new', () => {
    const cases: [string, number, typeof content, string][] = [
      ['folha', 1, content, 'folha-7c942dee73d76774'],
      [
        'Folha Março',
        2,
        {
          pixKeyType: 'EMAIL',
          pixKey: 'joao@example.com',
          cpfCnpj: '11222333000181',
          valueCents: 123456789,
          name: 'João  Conceição',
        },
        'folha-marco-b2-117818988152cc00',
      ],
      [
        '',
        1,
        {
          pixKeyType: 'TELEFONE',
          pixKey: '+5511987654321',
          cpfCnpj: '52998224725',
          valueCents: 1,
          name: 'Straße Łódź 😀',
        },
        'payout-c6ff04c6bbf4b69c',
      ],
    ];
    for (const [stem, number, row, orderId] of cases) {
      const print = contentFingerprint(batchKey(stem, number), row);
      expect(deriveOrderId(batchSlug(stem, number), print, 0)).toBe(orderId);
    }
  });

  it('ignores accents, case and spacing of the name, but not the amount, key or batch', () => {
    const base = contentFingerprint('payroll', content);
    expect(contentFingerprint('payroll', { ...content, name: ' ANA  souza ' })).toEqual(base);
    expect(contentFingerprint('payroll', { ...content, name: 'Ána Souza' })).toEqual(base);
    expect(contentFingerprint('payroll', { ...content, valueCents: 1001 })).not.toEqual(base);
    expect(contentFingerprint('payroll', { ...content, pixKey: '11144477735' })).not.toEqual(base);
    expect(contentFingerprint('bonus', content)).not.toEqual(base);
  });

  it('tells apart long names that share their first 38 characters', () => {
    const november = 'pagamentos-fornecedores-regiao-sudeste-2026-11';
    const december = 'pagamentos-fornecedores-regiao-sudeste-2026-12';
    expect(batchSlug(november)).toBe(batchSlug(december));
    expect(contentFingerprint(november, content)).not.toEqual(
      contentFingerprint(december, content),
    );
  });

  it('keeps to the characters and length an orderId allows', () => {
    const slug = batchSlug("=cmd|' /C calc'!A0 " + 'x'.repeat(80));
    expect(deriveOrderId(slug, contentFingerprint(slug, content), 0)).toMatch(
      /^[a-z0-9-]{1,38}-[0-9a-f]{16}$/,
    );
  });
});
