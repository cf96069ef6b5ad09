import { describe, expect, it } from 'vitest';
import { foldHeading } from '../../src/csv/fold.js';
import { MAX_COLUMNS, headingMapProblems, mapHeader } from '../../src/csv/header.js';
import { inEnglish } from '../support/english.js';

describe('foldHeading', () => {
  it.each([
    ['Valor (R$)', 'valor'],
    ['Tipo de Chave', 'tipodechave'],
    ['CPF/CNPJ', 'cpfcnpj'],
    ['E-mail', 'email'],
    ['Valor R$', 'valorrs'],
    ['orderId', 'orderid'],
    ['  Order ID ', 'orderid'],
    ['BENEFICIÁRIO', 'beneficiario'],
    ['Referência', 'referencia'],
  ])('%j -> %j', (heading, folded) => {
    expect(foldHeading(heading)).toBe(folded);
  });
});

describe('mapHeader', () => {
  it('maps English headings', () => {
    const reading = inEnglish(
      mapHeader(['orderId', 'name', 'email', 'phone', 'cpfCnpj', 'pixKeyType', 'pixKey', 'value']),
    );
    expect(reading).toEqual({
      ok: true,
      ignored: [],
      columns: {
        orderId: { index: 0, heading: 'orderId' },
        name: { index: 1, heading: 'name' },
        email: { index: 2, heading: 'email' },
        phone: { index: 3, heading: 'phone' },
        cpfCnpj: { index: 4, heading: 'cpfCnpj' },
        pixKeyType: { index: 5, heading: 'pixKeyType' },
        pixKey: { index: 6, heading: 'pixKey' },
        valueCents: { index: 7, heading: 'value' },
      },
    });
  });

  it('maps Portuguese headings from a Brazilian Excel export, keeping unknown columns aside', () => {
    const reading = inEnglish(
      mapHeader([
        'Favorecido',
        'CPF/CNPJ',
        'E-mail',
        'Celular',
        'Tipo de Chave',
        'Chave PIX',
        'Valor (R$)',
        'Observação',
        '',
      ]),
    );
    expect(reading.ok).toBe(true);
    if (!reading.ok) return;
    expect(reading.columns.amountReais).toEqual({ index: 6, heading: 'Valor (R$)' });
    expect(reading.columns.pixKeyType?.heading).toBe('Tipo de Chave');
    expect(reading.columns.orderId).toBeUndefined();
    expect(reading.ignored).toEqual(['Observação']);
  });

  // In accounting these name employees, suppliers and purchase orders, which repeat
  // every month: read as orderIds, next month's unchanged salary was never sent.
  it.each(['ID', 'id', 'Ref', 'Identificador'])(
    'does not take a %j column for orderIds',
    (heading) => {
      const reading = inEnglish(
        mapHeader([heading, 'Nome', 'CPF', 'E-mail', 'Celular', 'Chave', 'Valor']),
      );
      expect(reading.ok).toBe(true);
      if (!reading.ok) return;
      expect(reading.columns.orderId).toBeUndefined();
      expect(reading.ignored).toContain(heading);
    },
  );

  // Accounts payable names the payee by its supplier; NF (the invoice) is the reference.
  it.each([
    'Fornecedor',
    'FORNECEDOR',
    'Razão Social',
    'Razao Social',
    'RAZÃO SOCIAL',
    'razao social',
  ])("takes a supplier export's %j heading for the name", (heading) => {
    const reading = inEnglish(mapHeader([heading, 'CNPJ', 'Chave Pix', 'NF', 'Valor']));
    expect(reading).toMatchObject({
      ok: true,
      columns: { name: { index: 0, heading }, reference: { index: 3, heading: 'NF' } },
      ignored: [],
    });
  });

  // Each tells two payments of one payee apart; none of them is an orderId.
  it.each([
    'NF',
    'Nota Fiscal',
    'Número do documento',
    'Fatura',
    'Referência',
    'Pedido',
    'Competência',
  ])('takes a %j column for the reference, never for orderIds', (heading) => {
    const reading = inEnglish(mapHeader([heading, 'Nome', 'CPF', 'Chave', 'Valor']));
    expect(reading).toMatchObject({ ok: true, columns: { reference: { index: 0, heading } } });
    if (reading.ok) expect(reading.columns.orderId).toBeUndefined();
  });

  it.each([
    [['Pedido', 'NF'], 'NF', 'Pedido'],
    [['NF', 'Competência'], 'NF', 'Competência'],
    [['Competência', 'Fatura'], 'Fatura', 'Competência'],
  ])('of the reference columns %j, reads %j and lists %j as not used', (both, kept, unused) => {
    const reading = inEnglish(mapHeader([...both, 'Nome', 'CPF', 'Chave', 'Valor']));
    expect(reading).toMatchObject({
      ok: true,
      columns: { reference: { heading: kept } },
      ignored: [unused],
    });
  });

  it.each(['orderId', 'Order ID', 'ID do pagamento', 'Id do Pagamento'])(
    'takes an explicit %j heading for orderIds',
    (heading) => {
      const reading = inEnglish(
        mapHeader([heading, 'Nome', 'CPF', 'E-mail', 'Celular', 'Chave', 'Valor']),
      );
      expect(reading.ok && reading.columns.orderId?.heading).toBe(heading);
    },
  );

  it('names every missing column and the headings it accepts', () => {
    const reading = inEnglish(mapHeader(['nome', 'chave']));
    expect(reading.ok).toBe(false);
    if (reading.ok) return;
    expect(reading.problems).toHaveLength(1);
    const [problem] = reading.problems;
    expect(problem).toMatch(/^missing columns: recipient's CPF\/CNPJ/);
    // Contacts may come from the Pix key or the configuration (see the row's check).
    expect(problem).not.toContain('e-mail');
    expect(problem).not.toContain('phone');
    expect(problem).toContain(
      "recipient's CPF/CNPJ (accepted headings: cpfCnpj, CPF/CNPJ, documento, CPF, CNPJ, CNPJ/CPF)",
    );
    expect(problem).toContain('the amount: amount in reais (accepted headings: amount, valor');
    expect(problem).not.toContain('Pix key (');
  });

  it('refuses two columns for one field, and two kinds of amount', () => {
    const reading = inEnglish(
      mapHeader(['nome', 'email', 'telefone', 'CPF', 'CNPJ', 'chave', 'valor', 'value']),
    );
    expect(reading).toEqual({
      ok: false,
      problems: [
        `columns "CPF" and "CNPJ" both give the recipient's CPF/CNPJ: keep one`,
        `both "value" (cents) and "valor" (reais) give the amount: keep one`,
      ],
    });
  });

  it('refuses a header with too many columns', () => {
    const reading = inEnglish(mapHeader(Array.from({ length: 100_000 }, (_, i) => `c${i}`)));
    expect(reading).toEqual({
      ok: false,
      problems: [`the header has 100000 columns; a payout file has at most ${MAX_COLUMNS}`],
    });
  });
});

describe("the headings setting: an accountant's headings read as ours", () => {
  const EXPORT = ['Favorecido', 'CPF', 'Chave Pix', 'Valor Líquido', 'Valor Bruto'];

  it('reads a configured heading as our column, matched as ours are, and says it was the setting', () => {
    const reading = inEnglish(mapHeader(EXPORT, { 'valor liquido': 'amount' }));
    expect(reading).toMatchObject({
      ok: true,
      columns: {
        name: { index: 0, heading: 'Favorecido' },
        amountReais: { index: 3, heading: 'Valor Líquido', configured: true },
      },
      ignored: ['Valor Bruto'],
    });
    expect(inEnglish(mapHeader(EXPORT))).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^missing columns: the amount/)],
    });
  });

  it('two configured headings for one column in one file: keep one', () => {
    const reading = inEnglish(
      mapHeader(EXPORT, { 'Valor Líquido': 'amount', 'Valor Bruto': 'amount' }),
    );
    expect(reading).toMatchObject({
      ok: false,
      problems: [expect.stringContaining('"Valor Líquido" and "Valor Bruto" both give')],
    });
  });

  it.each([
    [{ 'Valor Líquido': 'amount', Favorecido: 'name' }, []],
    [
      { 'Valor Líquido': 'amout' },
      [
        '"Valor Líquido": "amout" is not one of our columns; did you mean amount? (one of: orderId, name, email, phone, cpfCnpj, pixKeyType, pixKey, value, amount, reference)',
      ],
    ],
    [
      { 'Valor Líquido': 'cents' },
      [expect.stringMatching(/^"Valor Líquido": "cents" is not one of our columns \(one of: /)],
    ],
    [
      { Valor: 'name' },
      ['"Valor" is already a heading of ours for amount in reais; it cannot also be read as name'],
    ],
    [{ Valor: 'amount' }, []],
    [{ ' ': 'name' }, ['a heading may not be empty (it is read as "name")']],
    [
      { 'Valor Líquido': 'amount', 'VALOR  LIQUIDO': 'value' },
      [
        '"Valor Líquido" and "VALOR  LIQUIDO" are the same heading (case, accents and spacing aside): keep one',
      ],
    ],
  ])('headingMapProblems(%j)', (map, problems) => {
    expect(headingMapProblems(map as Record<string, string>)).toEqual(problems);
  });
});
