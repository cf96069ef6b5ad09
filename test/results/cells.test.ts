import { describe, expect, it } from 'vitest';
import {
  decimalComma,
  gatewayInstant,
  inTimeZone,
  punctuatedDocument,
  shownPixKey,
  spreadsheetTime,
} from '../../src/results/cells.js';

describe('cells for a Brazilian Excel', () => {
  it.each([
    ['52998224725', '529.982.247-25'],
    ['01234567890', '012.345.678-90'],
    ['11222333000181', '11.222.333/0001-81'],
    ['12ABC34501DE35', '12.ABC.345/01DE-35'],
    ['1234', '1234'],
  ])('punctuatedDocument(%j) = %j', (document, shown) => {
    expect(punctuatedDocument(document)).toBe(shown);
  });

  it.each([
    ['0.50', '0,50'],
    ['1234.5', '1234,5'],
    ['-2.00', '-2,00'],
    ['50', '50'],
    ['', ''],
    ['R$ 0.50', 'R$ 0.50'],
  ])('decimalComma(%j) = %j', (text, shown) => {
    expect(decimalComma(text)).toBe(shown);
  });

  it.each([
    ['2026-11-23T20:41:07.123Z', '2026-11-23T20:41:07.123Z'],
    // No zone on the wire (processedAt): the gateway's UTC, as its createdAt.
    ['2026-11-23T20:41:07.123', '2026-11-23T20:41:07.123Z'],
    ['2026-11-23T20:41:07', '2026-11-23T20:41:07.000Z'],
  ])('gatewayInstant(%j) is %j', (text, iso) => {
    expect(gatewayInstant(text)?.toISOString()).toBe(iso);
  });

  it.each([[''], ['2026-11-23'], ['2026-11-23T20:41:07-03:00'], ['yesterday']])(
    'gatewayInstant(%j) is no instant: the text is left as it came',
    (text) => {
      expect(gatewayInstant(text)).toBeUndefined();
    },
  );

  it.each([
    ['2026-11-23T20:41:07.123Z', 'America/Sao_Paulo', '2026-11-23T17:41:07-03:00'],
    ['2026-11-24T02:00:00.000Z', 'America/Sao_Paulo', '2026-11-23T23:00:00-03:00'],
    ['2026-11-23T20:41:07.000Z', 'UTC', '2026-11-23T20:41:07+00:00'],
    ['2026-11-23T20:41:07.000Z', 'Asia/Kolkata', '2026-11-24T02:11:07+05:30'],
    // Fernando de Noronha, and Sao Paulo's clock when it kept summer time (2018).
    ['2026-11-23T20:41:07.000Z', 'America/Noronha', '2026-11-23T18:41:07-02:00'],
    ['2018-12-01T12:00:00.000Z', 'America/Sao_Paulo', '2018-12-01T10:00:00-02:00'],
  ])(
    'inTimeZone(%j, %j) = %j; spreadsheetTime, the same without the offset',
    (iso, zone, shown) => {
      expect(inTimeZone(new Date(iso), zone)).toBe(shown);
      expect(spreadsheetTime(new Date(iso), zone)).toBe(shown.slice(0, 19).replace('T', ' '));
    },
  );
});

describe('shownPixKey', () => {
  it.each([
    ['CPF', '01234567890', '012.345.678-90'],
    ['CNPJ', '04252011000110', '04.252.011/0001-10'],
    ['TELEFONE', '+5511987654321', '(11) 98765-4321'],
    ['TELEFONE', '+551134567890', '(11) 3456-7890'],
    ['EMAIL', 'ana@example.com', 'ana@example.com'],
    ['RANDOM_KEY', '123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ])('a %s key %j is shown %j', (type, key, shown) => {
    expect(shownPixKey(type, key)).toBe(shown);
  });
});
