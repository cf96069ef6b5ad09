import { describe, expect, it } from 'vitest';
import { inferKey, normalisePhone, parseKeyType, readKey } from '../../src/csv/pix-key.js';

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
});

describe('readKey', () => {
  it.each([
    ['CPF', '529.982.247-25', '52998224725'],
    ['CNPJ', '11.222.333/0001-81', '11222333000181'],
    ['EMAIL', ' Ana.Souza@Example.com ', 'ana.souza@example.com'],
    ['TELEFONE', '(11) 98765-4321', '+5511987654321'],
    ['RANDOM_KEY', '123E4567-E89B-12D3-A456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ] as const)('%s %j -> %s', (type, text, key) => {
    expect(readKey(type, text)).toMatchObject({ ok: true, type, key });
  });

  it('restores a CPF key that lost its zeros, and says so', () => {
    expect(readKey('CPF', '1234567890')).toEqual({
      ok: true,
      type: 'CPF',
      key: '01234567890',
      note: 'leading zeros restored: 1234567890 read as 01234567890',
    });
  });

  it('restores a CNPJ key that lost its zeros: the key type says CNPJ', () => {
    expect(readKey('CNPJ', '50559631460')).toEqual({
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
    ['EMAIL', `${'a'.repeat(70)}@example.com`, /not an e-mail address/],
    ['TELEFONE', '(11) 3456-7890', /not a mobile number/],
    ['RANDOM_KEY', '123e4567', /is a RANDOM_KEY, but/],
    ['CPF', '5,29982E+10', /scientific notation/],
    ['TELEFONE', '1,19876E+10', /scientific notation/],
    ['EMAIL', '  ', /is empty/],
  ] as const)('%s %j is refused: %s', (type, text, problem) => {
    const reading = readKey(type, text);
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
    expect(inferKey(text)).toMatchObject({ ok: true, type, key });
  });

  it('does not guess an 11-digit number that is both a valid CPF and a plausible mobile', () => {
    // Area code 11, then 9 and eight digits, and valid CPF check digits.
    const both = '11999999975';
    expect(normalisePhone(both, false)).toBeDefined();
    const reading = inferKey(both);
    expect(reading).toEqual({
      ok: false,
      problem: `${both} could be a CPF or a phone number: give its type (CPF or TELEFONE) in the key type column`,
    });
  });

  it('says when the type cannot be told', () => {
    const reading = inferKey('abc');
    expect(reading.ok).toBe(false);
    if (!reading.ok)
      expect(reading.problem).toMatch(
        /cannot be told: give it in the key type column \(0-4 or CPF/,
      );
  });
});
