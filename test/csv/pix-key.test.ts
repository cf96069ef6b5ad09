import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidCnpj, isValidCpf } from '../../src/domain/check-digits.js';
import { inferKey, normalisePhone, parseKeyType, readKey } from '../../src/csv/pix-key.js';
import { inEnglish } from '../support/english.js';

describe('parseKeyType', () => {
  it.each([
    ['0', 'CPF'],
    ['4', 'RANDOM_KEY'],
    ['cpf', 'CPF'],
    ['CNPJ', 'CNPJ'],
    ['E-mail', 'EMAIL'],
    ['Telefone', 'TELEFONE'],
    ['PHONE', 'TELEFONE'],
    ['celular', 'TELEFONE'],
    ['EVP', 'RANDOM_KEY'],
    ['Aleatória', 'RANDOM_KEY'],
    ['chave aleatória', 'RANDOM_KEY'],
    ['random_key', 'RANDOM_KEY'],
    ['5', undefined],
    ['pix', undefined],
  ])('%j -> %s', (text, type) => {
    expect(parseKeyType(text)).toBe(type);
  });
});

describe('normalisePhone', () => {
  it.each([
    ['(11) 98765-4321', '+5511987654321'],
    ['11 98765 4321', '+5511987654321'],
    ['11987654321', '+5511987654321'],
    ['+55 11 98765-4321', '+5511987654321'],
    ['5511987654321', '+5511987654321'],
    ['011 98765-4321', '+5511987654321'],
    ['+55 (21) 99876-5432', '+5521998765432'],
    ['(11) 3456-7890', undefined],
    ['10987654321', undefined],
    ['+1 415 555 0100', undefined],
    ['98765-4321', undefined],
    ['phone', undefined],
  ])('%j -> %s', (text, phone) => {
    expect(normalisePhone(text, false)).toBe(phone);
  });

  it('takes landlines when asked', () => {
    expect(normalisePhone('(11) 3456-7890', true)).toBe('+551134567890');
  });

  /** The definition the character-by-character reading must agree with. */
  const reference = (text: string, allowLandline: boolean): string | undefined => {
    const trimmed = text.trim();
    if (!/^\+?[\d\s().\-]+$/.test(trimmed)) return undefined;
    let digits = trimmed.replace(/\D/g, '');
    if (trimmed.startsWith('+') || (digits.startsWith('55') && digits.length >= 12)) {
      if (!digits.startsWith('55')) return undefined;
      digits = digits.slice(2);
    } else if (digits.startsWith('0')) digits = digits.slice(1);
    const area = Number(digits.slice(0, 2));
    const subscriber = digits.slice(2);
    const inUse = AREAS.get(area);
    if (inUse === undefined) return 'another area';
    if (!inUse) return undefined;
    const mobile = /^9\d{8}$/.test(subscriber);
    const landline = /^[2-5]\d{7}$/.test(subscriber);
    return mobile || (allowLandline && landline) ? `+55${digits}` : undefined;
  };
  // Area codes in use or not, of the function's own list: texts with another are left out.
  const AREAS = new Map([
    [11, true],
    [21, true],
    [55, true],
    [99, true],
    [10, false],
    [20, false],
  ]);

  it('reads any text as the regex definition does, in every shape near a phone number', () => {
    const character = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...'0123456789'.split('')) },
      { weight: 3, arbitrary: fc.constantFrom(' ', '(', ')', '.', '-', '+', '\u00a0', '\t') },
      { weight: 1, arbitrary: fc.constantFrom('a', '/', '\u2003', '٣', '\u0000') },
    );
    const area = fc.constantFrom('11', '21', '55', '99', '10', '20');
    const shaped = fc
      .tuple(
        fc.constantFrom('', '+55 ', '55', '0', '+', '+1 ', ' '),
        area,
        fc.constantFrom(' ', '', ') ', '-', '/', '\u00a0', 'a'),
        fc.stringMatching(/^[0-9]{7,10}$/),
        fc.constantFrom('', ' ', '-'),
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        fc.oneof(
          shaped,
          fc.array(character, { maxLength: 18 }).map((c) => c.join('')),
        ),
        fc.boolean(),
        (text, allowLandline) => {
          const expected = reference(text, allowLandline);
          fc.pre(expected !== 'another area');
          expect(normalisePhone(text, allowLandline), JSON.stringify(text)).toBe(expected);
        },
      ),
      { numRuns: 20_000 },
    );
  });
});

describe('readKey', () => {
  it.each([
    ['CPF', '529.982.247-25', '52998224725'],
    ['CNPJ', '11.222.333/0001-81', '11222333000181'],
    ['EMAIL', ' Ana.Souza@Example.com ', 'ana.souza@example.com'],
    ['TELEFONE', '(11) 98765-4321', '+5511987654321'],
    ['RANDOM_KEY', '123E4567-E89B-12D3-A456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ] as const)('%s %j -> %s', (type, text, key) => {
    expect(inEnglish(readKey(type, text))).toMatchObject({ ok: true, type, key });
  });

  it('restores a CPF key that lost its zeros, and says so', () => {
    expect(inEnglish(readKey('CPF', '1234567890'))).toEqual({
      ok: true,
      type: 'CPF',
      key: '01234567890',
      note: 'leading zeros restored: 1234567890 read as 01234567890',
    });
  });

  it('restores a CNPJ key that lost its zeros: the key type says CNPJ', () => {
    expect(inEnglish(readKey('CNPJ', '50559631460'))).toEqual({
      ok: true,
      type: 'CNPJ',
      key: '00050559631460',
      note: 'leading zeros restored: 50559631460 read as 00050559631460',
    });
  });

  it.each([
    ['CPF', '529.982.247-26', /is a CPF key, but .* not a valid CPF/],
    ['CNPJ', '505.596.314-60', /is a CNPJ key, but 505\.596\.314-60 is not a valid CPF/],
    ['CPF', '50559631460', /is a CPF key, but 50559631460 is not a valid CPF/],
    ['CPF', '11.222.333/0001-81', /is a CPF key, but .* is a CNPJ/],
    ['EMAIL', 'ana@', /not an e-mail address/],
    [
      'EMAIL',
      `${'a'.repeat(70)}@example.com`,
      /is 82 characters long; a Pix e-mail key has at most 77/,
    ],
    ['TELEFONE', '(11) 3456-7890', /not a mobile number/],
    ['RANDOM_KEY', '123e4567', /is a RANDOM_KEY, but/],
    ['CPF', '5,29982E+10', /scientific notation/],
    ['TELEFONE', '1,19876E+10', /scientific notation/],
    ['EMAIL', '  ', /is empty/],
  ] as const)('%s %j is refused: %s', (type, text, problem) => {
    const reading = inEnglish(readKey(type, text));
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });
});

describe('inferKey', () => {
  it.each([
    ['ana@example.com', 'EMAIL', 'ana@example.com'],
    ['123e4567-e89b-12d3-a456-426614174000', 'RANDOM_KEY', '123e4567-e89b-12d3-a456-426614174000'],
    ['+55 11 98765-4321', 'TELEFONE', '+5511987654321'],
    ['(11) 98765-4321', 'TELEFONE', '+5511987654321'],
    ['529.982.247-25', 'CPF', '52998224725'],
    ['11.222.333/0001-81', 'CNPJ', '11222333000181'],
    ['11222333000181', 'CNPJ', '11222333000181'],
    // Valid CPF; "52" is an unused area code, so it cannot be a phone.
    ['52998224725', 'CPF', '52998224725'],
    // A plausible mobile that is not a valid CPF.
    ['11987654321', 'TELEFONE', '+5511987654321'],
  ] as const)('%j -> %s', (text, type, key) => {
    expect(inEnglish(inferKey(text))).toMatchObject({ ok: true, type, key });
  });

  it('does not guess an 11-digit number that is both a valid CPF and a plausible mobile', () => {
    // Area code 11, then 9 and eight digits, and valid CPF check digits.
    const both = '11999999975';
    expect(normalisePhone(both, false)).toBeDefined();
    const reading = inEnglish(inferKey(both));
    expect(reading).toEqual({
      ok: false,
      problem: `${both} could be a CPF or a phone number: give its type (CPF or TELEFONE) in the key type column`,
    });
  });

  it('says when the type cannot be told', () => {
    const reading = inEnglish(inferKey('abc'));
    expect(reading.ok).toBe(false);
    if (!reading.ok)
      expect(reading.problem).toMatch(
        /cannot be told: give it in the key type column \(0-4 or CPF/,
      );
  });
});

// The DICT formats (the Central Bank's key directory) as the directory's API states them;
// for e-mail, the dot rules of an RFC 5321 address and a domain that ends in a name are
// added (see pix-key.ts).
const DICT_FORMAT = {
  CPF: /^[0-9]{11}$/,
  CNPJ: /^[0-9A-Z]{12}[0-9]{2}$/,
  TELEFONE: /^\+55[1-9][0-9]9[0-9]{8}$/,
  EMAIL:
    /^[a-z0-9!#$&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
  RANDOM_KEY: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
} as const;
const TYPES = Object.keys(DICT_FORMAT) as (keyof typeof DICT_FORMAT)[];

describe('e-mail keys in the DICT format', () => {
  it.each([
    ['Ana.Souza@Example.com', 'ana.souza@example.com'],
    ['ana+pix@example.com.br', 'ana+pix@example.com.br'],
    ["o'brien_jr@sub.example-site.com", "o'brien_jr@sub.example-site.com"],
    ['a@b.co', 'a@b.co'],
    ['x1@xn--80ak6aa92e.com', 'x1@xn--80ak6aa92e.com'],
    [`${'a'.repeat(65)}@example.com`, `${'a'.repeat(65)}@example.com`], // 77 characters
  ])('%j -> %j', (text, key) => {
    expect(inEnglish(readKey('EMAIL', text))).toEqual({ ok: true, type: 'EMAIL', key });
    expect(inEnglish(inferKey(text))).toEqual({ ok: true, type: 'EMAIL', key });
  });

  it.each([
    [
      'joão@example.com',
      /"joão@example\.com" has "ã", a character outside plain ASCII: Pix e-mail keys are ASCII only/,
    ],
    ['ana@exämple.com', /has "ä", a character outside plain ASCII/],
    ['ana@my_company.com', /has "_" in its domain \(after the @\)/],
    ['ana@-example.com', /has a domain part starting or ending with "-" \("-example"\)/],
    ['ana@example-.com.br', /starting or ending with "-" \("example-"\)/],
    ['ana..souza@example.com', /has two dots in a row/],
    ['ana@example..com', /has two dots in a row/],
    ['.ana@example.com', /starts or ends with a dot/],
    ['ana.@example.com', /starts or ends with a dot/],
    ['ana@example.com.', /starts or ends with a dot/],
    ['ana%pix@example.com', /has "%" before the @/],
    ['ana souza@example.com', /has a space/],
    ['ana@example', /has no domain after the @ \(like example\.com\)/],
    ['ana@@example.com', /one @/],
    ['ana@example.123', /does not end in a domain name/],
    [`ana@${'d'.repeat(64)}.com`, /a domain part longer than 63/],
    [`${'a'.repeat(66)}@example.com`, /is 78 characters long; a Pix e-mail key has at most 77/],
  ])('%j is refused: %s', (text, problem) => {
    expect(inEnglish(readKey('EMAIL', text))).toEqual({
      ok: false,
      problem: expect.stringMatching(new RegExp(`^is an EMAIL key, but .*${problem.source}`)),
    });
    expect(inEnglish(inferKey(text))).toMatchObject({ ok: false });
  });
});

describe('every key accepted is in the DICT format of its type', () => {
  const part = fc
    .array(fc.constantFrom(...'aZ9._-@+%ã! '.split('')), { minLength: 0, maxLength: 10 })
    .map((c) => c.join(''));
  const emailish = fc
    .tuple(part, part, fc.constantFrom('', '.com', '.a1', '.br.'))
    .map(([local, domain, end]) => `${local}@${domain}${end}`);
  const keyText = fc.oneof(
    emailish,
    fc.string({ maxLength: 40 }),
    fc.stringMatching(/^[0-9.\-/ ()+]{8,20}$/),
    fc.uuid().map((u) => u.toUpperCase()),
  );

  it('whatever the text and the stated type', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TYPES), keyText, (type, text) => {
        const reading = inEnglish(readKey(type, text));
        if (!reading.ok) return;
        expect(reading.key).toMatch(DICT_FORMAT[type]);
        if (type === 'CPF') expect(isValidCpf(reading.key)).toBe(true);
        if (type === 'CNPJ') expect(isValidCnpj(reading.key)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('and inferred types too', () => {
    fc.assert(
      fc.property(keyText, (text) => {
        const reading = inEnglish(inferKey(text));
        if (reading.ok) expect(reading.key).toMatch(DICT_FORMAT[reading.type]);
      }),
      { numRuns: 5000 },
    );
  });

  it('an e-mail key in the DICT format, in any case, is accepted as itself in lower case', () => {
    const atom = fc
      .array(fc.constantFrom(..."abcXYZ019!#$&'*+/=?^_`{|}~-".split('')), {
        minLength: 1,
        maxLength: 6,
      })
      .map((c) => c.join(''));
    const label = fc.stringMatching(/^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,8}[a-zA-Z0-9])?$/);
    const tld = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9]{1,5}$/);
    fc.assert(
      fc.property(
        fc.array(atom, { minLength: 1, maxLength: 3 }),
        fc.array(label, { minLength: 1, maxLength: 3 }),
        tld,
        (local, domain, end) => {
          const text = `${local.join('.')}@${[...domain, end].join('.')}`;
          fc.pre(text.length <= 77);
          expect(inEnglish(readKey('EMAIL', text))).toEqual({
            ok: true,
            type: 'EMAIL',
            key: text.toLowerCase(),
          });
        },
      ),
    );
  });
});
