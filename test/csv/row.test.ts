import { describe, expect, it } from 'vitest';
import { mapHeader } from '../../src/csv/header.js';
import {
  createRowValidator,
  mistakesSaid,
  toCashOutRequest,
  type RowOutcome,
} from '../../src/csv/row.js';
import { sayInEnglish } from '../../src/messages/say.js';
import { inEnglish } from '../support/english.js';

const HEADER = ['orderId', 'name', 'email', 'phone', 'cpfCnpj', 'pixKeyType', 'pixKey', 'amount'];
const GOOD = [
  'p-1',
  'Ana Souza',
  'ana@example.com',
  '(11) 98765-4321',
  '529.982.247-25',
  'CPF',
  '529.982.247-25',
  '1.234,56',
];

function validatorFor(header: string[] = HEADER, maxPayoutCents = 10_000_000) {
  const reading = mapHeader(header);
  if (!reading.ok) throw new Error(inEnglish(reading.problems).join('; '));
  return createRowValidator({
    columns: reading.columns,
    headings: header,
    delimiter: ',',
    stem: 'payroll',
    maxPayoutCents,
  });
}

function invalid(outcome: RowOutcome): { column: string | null; message: string } {
  if (outcome.kind !== 'invalid') throw new Error(`expected invalid, got ${outcome.kind}`);
  return {
    column: outcome.mistakes[0].column,
    message: sayInEnglish(mistakesSaid(outcome.mistakes)),
  };
}

const withCell = (index: number, value: string) =>
  GOOD.map((cell, i) => (i === index ? value : cell));

describe('row validation', () => {
  it('turns a good row into the cash-out request of the interface', () => {
    const outcome = validatorFor().check(GOOD, 2);
    expect(outcome.kind).toBe('valid');
    if (outcome.kind !== 'valid') return;
    expect(toCashOutRequest(outcome.payout)).toEqual({
      value: 123_456,
      pixKeyType: 0,
      pixKey: '52998224725',
      cpfCnpj: '52998224725',
      person: { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' },
      orderId: 'p-1',
    });
    expect(outcome.notes).toEqual([]);
  });

  it.each([
    [0, '', 'orderId', /is empty: each row needs its own order reference/],
    [0, 'a/b', 'orderId', /is not usable as an order reference/],
    [1, '', 'name', /is empty: the recipient's name is required/],
    [1, '=HYPERLINK("http://x")', 'name', /does not look like a name.*spreadsheet formula/],
    [1, '@SUM(1)', 'name', /does not look like a name/],
    [1, 'A'.repeat(141), 'name', /at most 140/],
    [2, 'ana@', 'email', /is not an e-mail address/],
    [3, '98765', 'phone', /is not a phone number with area code/],
    [4, '529.982.247-26', 'cpfCnpj', /not a valid CPF/],
    [5, 'PIX', 'pixKeyType', /"PIX" is not a key type: use 0-4 or CPF/],
    [6, 'ana@example.com', 'pixKey', /is a CPF key, but "ana@example.com" is not a CPF or CNPJ/],
    [7, '0,00', 'amount', /zero/],
    [7, '-5,00', 'amount', /negative/],
    [7, '1,5E+03', 'amount', /scientific notation/],
    [
      7,
      '200.000,00',
      'amount',
      /R\$ 200\.000,00 is over the limit of R\$ 100\.000,00 per payout \(maxPayoutCents\)/,
    ],
  ])('cell %i = %j -> invalid in column %s', (index, value, column, message) => {
    const found = invalid(validatorFor().check(withCell(index, value), 2));
    expect(found.column).toBe(column);
    expect(found.message).toMatch(message);
  });

  it('gives one message per row, saying every mistake with its column', () => {
    const found = invalid(validatorFor().check(['p-1', '', 'x', '1', '1', 'CPF', '1', '0'], 2));
    expect(found).toEqual({
      column: 'name',
      message: [
        "is empty: the recipient's name is required",
        'cpfCnpj: 1 is not a valid CPF with its leading zeros restored (00000000001): check it',
        'pixKey: is a CPF key, but 1 is not a valid CPF with its leading zeros restored (00000000001): check it',
        'email: "x" is not an e-mail address (like name@example.com)',
        'phone: "1" is not a phone number with area code (like (11) 98765-4321 or +55 11 98765-4321)',
        'amount: 0 is zero: a payout must be more than zero',
      ].join(' | '),
    });
  });

  it('says why the amount is wrong too, not only that it is (issue 32)', () => {
    const row = withCell(3, '98765').map((cell, i) => (i === 7 ? '9 99' : cell));
    const outcome = validatorFor().check(row, 2);
    expect(invalid(outcome)).toEqual({
      column: 'phone',
      message: expect.stringMatching(
        /^"98765" is not a phone number .* \| amount: "9 99" has a space that does not separate thousands/,
      ),
    });
    expect(outcome.kind === 'invalid' && inEnglish(outcome.mistakes)).toEqual([
      { column: 'phone', message: expect.stringMatching(/^"98765" is not a phone number/) },
      { column: 'amount', message: expect.stringMatching(/^"9 99" has a space/) },
    ]);
  });

  it("refuses a CPF key that is not the row's own document", () => {
    const found = invalid(validatorFor().check(withCell(6, '111.444.777-35'), 2));
    expect(found).toEqual({
      column: 'pixKey',
      message:
        "the CPF key 11144477735 is not this row's document 52998224725: a CPF key is its owner's own document",
    });
  });

  it('refuses a value in a column beyond the header, and control characters', () => {
    expect(invalid(validatorFor().check([...GOOD, 'stray'], 2))).toEqual({
      column: 'column 9',
      message:
        'this line has 9 values but the header has 8 columns: a value holding the delimiter must be in quotes',
    });
    expect(validatorFor().check([...GOOD, ''], 2).kind).toBe('valid');
    expect(
      inEnglish(invalid(validatorFor().check(withCell(1, 'Ana\u0000Souza'), 2))),
    ).toMatchObject({
      column: 'name',
      message: expect.stringContaining('invisible control character'),
    });
  });

  it('refuses an orderId used twice in the file, naming the first line', () => {
    const validator = validatorFor();
    expect(validator.check(GOOD, 2).kind).toBe('valid');
    expect(invalid(validator.check(GOOD, 9))).toEqual({
      column: 'orderId',
      message: '"p-1" is already used on line 2: each row needs its own order reference',
    });
  });

  it('infers the key type when the cell is empty, and warns of restored zeros', () => {
    const outcome = validatorFor().check(
      ['p-1', 'Isa', 'i@example.com', '11987654321', '1234567890', '', 'i@example.com', '10'],
      2,
    );
    expect(inEnglish(outcome)).toMatchObject({
      kind: 'valid',
      payout: { pixKeyType: 'EMAIL', cpfCnpj: '01234567890' },
      notes: [
        { column: 'cpfCnpj', message: 'leading zeros restored: 1234567890 read as 01234567890' },
      ],
    });
  });

  describe('a bare 11-digit document that fails as a CPF', () => {
    // 50559631460 is no CPF, but 00050559631460 is a valid CNPJ: only the file may say so.
    const row = (document: string, type: string, key: string) => [
      'p-1',
      'Loja Ltda',
      'loja@example.com',
      '(11) 98765-4321',
      document,
      type,
      key,
      '10,00',
    ];

    it('is refused with a hint when nothing in the file says CNPJ', () => {
      expect(
        invalid(validatorFor().check(row('50559631460', 'EMAIL', 'loja@example.com'), 2)),
      ).toEqual({
        column: 'cpfCnpj',
        message: expect.stringMatching(
          /^50559631460 is not a valid CPF .*if it is a CNPJ, write all 14 digits/,
        ),
      });
    });

    it('is a CNPJ that lost its zeros under a CNPJ heading, or with a CNPJ key, and says so', () => {
      const header = HEADER.map((heading) => (heading === 'cpfCnpj' ? 'CNPJ' : heading));
      expect(
        inEnglish(validatorFor(header).check(row('50559631460', 'EMAIL', 'loja@example.com'), 2)),
      ).toMatchObject({
        kind: 'valid',
        payout: { cpfCnpj: '00050559631460' },
        notes: [
          { column: 'CNPJ', message: 'leading zeros restored: 50559631460 read as 00050559631460' },
        ],
      });
      expect(
        inEnglish(validatorFor().check(row('50559631460', 'CNPJ', '50559631460'), 2)),
      ).toMatchObject({
        kind: 'valid',
        payout: { cpfCnpj: '00050559631460', pixKeyType: 'CNPJ', pixKey: '00050559631460' },
      });
    });

    it('written as a CPF, stays a CPF even under a CNPJ heading', () => {
      const header = HEADER.map((heading) => (heading === 'cpfCnpj' ? 'CNPJ' : heading));
      expect(
        invalid(validatorFor(header).check(row('505.596.314-60', 'EMAIL', 'loja@example.com'), 2)),
      ).toEqual({
        column: 'CNPJ',
        message: expect.stringMatching(/^505\.596\.314-60 is not a valid CPF/),
      });
      expect(
        inEnglish(
          invalid(validatorFor().check(row('505.596.314-60', 'CNPJ', '505.596.314-60'), 2)),
        ),
      ).toMatchObject({
        column: 'cpfCnpj',
        message: expect.stringMatching(
          /^505\.596\.314-60 is not a valid CPF.* \| pixKey: is a CNPJ key, but 505\.596\.314-60 is not a valid CPF/,
        ),
      });
    });
  });

  it('skips total lines and blank lines, and keeps the figures for control totals', () => {
    const validator = validatorFor();
    expect(validator.check(['', '', '', '', '', '', '', ''], 3)).toEqual({
      kind: 'blank',
      line: 3,
    });
    expect(validator.check(GOOD, 2).kind).toBe('valid');
    expect(
      validator.check(
        withCell(7, 'abc').map((c, i) => (i === 0 ? 'p-2' : c)),
        4,
      ).kind,
    ).toBe('invalid');
    expect(
      inEnglish(validator.check(['Total', '', '', '', '', '', '', 'R$ 1.234,56'], 5)),
    ).toMatchObject({
      kind: 'skipped',
      reason: 'a total line, not a payout',
    });
    expect(validator.totals()).toEqual({
      rows: 2,
      readableCents: 123_456,
      unreadableAmountLines: [4],
      trailingTotal: { line: 5, cents: 123_456 },
    });
    // A data row after it makes the total line a subtotal: no longer a control total.
    validator.check(
      GOOD.map((c, i) => (i === 0 ? 'p-3' : c)),
      6,
    );
    expect(validator.totals().trailingTotal).toBeUndefined();
  });

  it('keeps the first six lines of unreadable amounts, not one a row, and counts them all', () => {
    const validator = validatorFor();
    for (let line = 2; line < 1_002; line++) {
      validator.check(
        withCell(7, 'abc').map((c, i) => (i === 0 ? `p-${line}` : c)),
        line,
      );
    }
    expect(validator.totals()).toMatchObject({
      rows: 1_000,
      unreadableAmountLines: [2, 3, 4, 5, 6, 7],
    });
  });

  it('derives orderIds from the content when the file has none, numbering identical rows', () => {
    const validator = validatorFor(HEADER.slice(1));
    const row = GOOD.slice(1);
    const ids = [2, 3].map((line) => {
      const outcome = validator.check(row, line);
      if (outcome.kind !== 'valid') throw new Error('expected valid');
      expect(outcome.payout.orderIdDerived).toBe(true);
      return outcome.payout.orderId;
    });
    expect(ids[0]).toMatch(/^payroll-[0-9a-f]{16}$/);
    expect(ids[1]).toBe(`${ids[0]}-2`);
  });

  it('reads the reference; rows differing only by it are two payments with orderIds of their own', () => {
    const validator = validatorFor([...HEADER.slice(1), 'Pedido']);
    const [first, second, again, blank] = ['PED-0042', 'PED-43', 'ped 42', ''].map((pedido, at) =>
      validator.check([...GOOD.slice(1), pedido], at + 2),
    );
    if (first?.kind !== 'valid' || second?.kind !== 'valid' || again?.kind !== 'valid') {
      throw new Error('expected valid rows');
    }
    expect([first.payout.reference, second.payout.reference]).toEqual(['PED42', 'PED43']);
    expect(second.payout.identicalTo).toBeUndefined();
    expect(second.payout.orderId).toBe(`${first.payout.orderId}-2`);
    expect(again.payout.identicalTo).toBe(2);
    expect(blank?.kind === 'valid' && blank.payout.reference).toBe(undefined);
    expect(blank?.kind === 'valid' && blank.notes.map((note) => note.message)).toContainEqual({
      code: 'referenceEmpty',
    });
  });

  it('refuses a value under a blank heading, and an amount split by the comma delimiter', () => {
    const header = ['name', 'email', 'phone', 'cpfCnpj', 'pixKey', 'amount', ''];
    const row = [
      'Ana',
      'ana@example.com',
      '11987654321',
      '52998224725',
      '52998224725',
      '1234',
      '56',
    ];
    expect(invalid(validatorFor(header).check(row, 2))).toEqual({
      column: 'amount',
      message:
        '"1234,56" looks split by the comma delimiter: put the amount in quotes, or write it as 1234.56 | column 7: holds a value under a blank heading: a value holding the delimiter must be in quotes',
    });
    const withNotes = [...header.slice(0, 6), 'notes'];
    expect(validatorFor(withNotes).check([...row.slice(0, 6), 'paid in cash'], 2).kind).toBe(
      'valid',
    );
    expect(invalid(validatorFor(header).check([...row.slice(0, 6), 'x'], 2))).toEqual({
      column: 'column 7',
      message:
        'holds a value under a blank heading: a value holding the delimiter must be in quotes',
    });
  });

  describe('an amount split by the comma delimiter is guessed only when the cells do not fit the header', () => {
    const header = ['name', 'email', 'phone', 'cpfCnpj', 'pixKey', 'Valor', 'Parcela'];
    const person = ['Ana', 'ana@example.com', '11987654321', '52998224725', '52998224725'];

    it.each([
      ['10.00', '12', 1000],
      ['1234', '56', 123_400],
      ['R$ 1234', '5', 123_400],
    ])(
      '%j then %j under Valor,Parcela is the amount and the installment',
      (amount, next, cents) => {
        expect(inEnglish(validatorFor(header).check([...person, amount, next], 2))).toMatchObject({
          kind: 'valid',
          payout: { valueCents: cents },
        });
      },
    );

    const split = (text: string, plain: string) =>
      `"${text}" looks split by the comma delimiter: put the amount in quotes, or write it as ${plain}`;
    it.each([
      // One cell more than the header, even an empty one, is what a split leaves.
      [header, ['1234', '56', ''], split('1234,56', '1234.56')],
      [header, ['1.234', '56', '3'], split('1.234,56', '1234.56')],
      [header, ['12', '5', '1'], split('12,5', '12.50')],
      // One cell fewer than the header is no fit either.
      [[...header, 'Obs'], ['1234', '56'], split('1234,56', '1234.56')],
    ])('under %j, %j is refused as split', (headings, cells, message) => {
      const found = invalid(validatorFor(headings).check([...person, ...cells], 2));
      expect(found.column).toBe('Valor');
      expect(found.message.startsWith(message)).toBe(true);
    });

    it('a decimal amount and a number that make no amount together are not a split', () => {
      const found = invalid(validatorFor(header).check([...person, '10.00', '12', 'x'], 2));
      expect(found).toEqual({
        column: 'column 8',
        message:
          'this line has 8 values but the header has 7 columns: a value holding the delimiter must be in quotes',
      });
    });
  });

  it('refuses a row that runs over several lines, naming them', () => {
    const found = invalid(validatorFor().check(withCell(1, 'Ana\nSouza'), 4, 5));
    expect(found).toEqual({
      column: 'name',
      message: expect.stringMatching(/^this row runs over lines 4–5: .* a quote \("\) is missing/),
    });
  });

  it('takes a line for a total only when it holds nothing but a label and the amount', () => {
    const validator = validatorFor();
    const nameLike = validator.check(
      [
        'total-7',
        'Total Distribuidora',
        'x@example.com',
        '11987654321',
        '52998224725',
        '',
        '',
        '10,00',
      ],
      2,
    );
    expect(nameLike.kind).toBe('invalid');
    expect(
      validator.check(
        ['SUM-1', 'Ana', 'ana@example.com', '11987654321', '52998224725', '', '', '10,00'],
        3,
      ).kind,
    ).toBe('invalid');
    expect(
      inEnglish(validator.check(['Total', '', '', '', '', '', '', '#VALUE!'], 4)),
    ).toMatchObject({
      kind: 'skipped',
    });
    expect(validator.totals().trailingTotal).toEqual({
      line: 4,
      cents: undefined,
      unreadable: '#VALUE!',
    });
  });

  it('warns of orderIds that look like row numbers', () => {
    const outcome = validatorFor().check(withCell(0, '12'), 2);
    expect(inEnglish(outcome)).toMatchObject({
      kind: 'valid',
      notes: [{ column: 'orderId', message: expect.stringContaining('looks like a row number') }],
    });
  });
});

describe('contacts a payroll export leaves out (Nome, CPF, Chave Pix, Valor)', () => {
  const SHORT = ['Nome', 'CPF', 'Chave Pix', 'Valor'];
  const validator = (defaults: { recipientEmail?: string; recipientPhone?: string } = {}) => {
    const reading = mapHeader(SHORT);
    if (!reading.ok) throw new Error(inEnglish(reading.problems).join('; '));
    return createRowValidator({
      columns: reading.columns,
      headings: SHORT,
      delimiter: ';',
      stem: 'folha',
      maxPayoutCents: 10_000_000,
      recipientEmail: defaults.recipientEmail ?? null,
      recipientPhone: defaults.recipientPhone ?? null,
    });
  };
  const person = (outcome: RowOutcome) =>
    outcome.kind === 'valid'
      ? { email: outcome.payout.email, phone: outcome.payout.phone, filled: outcome.filled }
      : invalid(outcome);
  const ana = (key: string) => ['Ana Souza', '529.982.247-25', key, '1.234,56'];

  it.each([
    // The key gives the contact of its own type; the configured default the other.
    [
      ana('ana@example.com'),
      { recipientPhone: '(11) 3333-4444' },
      {
        email: 'ana@example.com',
        phone: '+551133334444',
        filled: { email: 'key', phone: 'default' },
      },
    ],
    [
      ana('+55 11 98765-4321'),
      { recipientEmail: 'folha@empresa.com.br' },
      {
        email: 'folha@empresa.com.br',
        phone: '+5511987654321',
        filled: { email: 'default', phone: 'key' },
      },
    ],
    [
      ana('529.982.247-25'),
      { recipientEmail: 'folha@empresa.com.br', recipientPhone: '(11) 3333-4444' },
      {
        email: 'folha@empresa.com.br',
        phone: '+551133334444',
        filled: { email: 'default', phone: 'default' },
      },
    ],
    // Nothing to fill from: the row says what is missing and where it could come from.
    [
      ana('529.982.247-25'),
      {},
      // Named in the reader's words, never by a column the file does not have.
      {
        column: null,
        message:
          'the file has no e-mail column (the gateway requires one, and the Pix key is not an e-mail); the company can set a default e-mail: recipientEmail | the file has no phone column (the gateway requires one, and the Pix key is not a phone); the company can set a default phone: recipientPhone',
      },
    ],
  ])('%j with %j', (cells, defaults, expected) => {
    expect(person(validator(defaults).check(cells, 2))).toEqual(expected);
  });

  it('never lets a default change who is paid: the key and document stay the row', () => {
    const outcome = validator({
      recipientEmail: 'folha@empresa.com.br',
      recipientPhone: '(11) 3333-4444',
    }).check(ana('529.982.247-25'), 2);
    expect(outcome.kind).toBe('valid');
    if (outcome.kind !== 'valid') return;
    expect([outcome.payout.pixKey, outcome.payout.cpfCnpj]).toEqual(['52998224725', '52998224725']);
  });

  it('keeps what the file says over the key and the default', () => {
    const header = ['Nome', 'CPF', 'E-mail', 'Chave Pix', 'Valor'];
    const reading = mapHeader(header);
    if (!reading.ok) throw new Error(inEnglish(reading.problems).join('; '));
    const outcome = createRowValidator({
      columns: reading.columns,
      headings: header,
      delimiter: ';',
      stem: 'folha',
      maxPayoutCents: 10_000_000,
      recipientEmail: 'folha@empresa.com.br',
      recipientPhone: '(11) 3333-4444',
    }).check(
      ['Ana Souza', '529.982.247-25', 'ana.souza@example.com', 'ana@example.com', '10,00'],
      2,
    );
    expect(person(outcome)).toEqual({
      email: 'ana.souza@example.com',
      phone: '+551133334444',
      filled: { phone: 'default' },
    });
  });
});
