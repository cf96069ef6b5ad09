import { describe, expect, it } from 'vitest';
import { buildPaymentCode, crc16 } from '../../src/sandbox/emv.js';

/** Splits an EMV payload into its ID-length-value fields. */
function fields(payload: string): Map<string, string> {
  const found = new Map<string, string>();
  let at = 0;
  while (at < payload.length) {
    const id = payload.slice(at, at + 2);
    const length = Number(payload.slice(at + 2, at + 4));
    found.set(id, payload.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return found;
}

describe('crc16 (CCITT-FALSE)', () => {
  it.each([
    ['123456789', '29B1'],
    ['', 'FFFF'],
    ['A', 'B915'],
  ])('%j -> %s', (input, expected) => {
    expect(crc16(input)).toBe(expected);
  });
});

describe('buildPaymentCode', () => {
  const code = buildPaymentCode({
    pixKey: '7d9f0335-8dcc-4054-9bf9-0c5f4e1a1b8e',
    amountCents: 123_456,
    merchantName: 'Padaria São João & Filhos Comércio Ltda',
    merchantCity: 'São Paulo',
    txid: 'TX-1001',
  });

  it('is a list of EMV fields closed by a matching CRC', () => {
    const parsed = fields(code);
    expect([...parsed.keys()]).toEqual([
      '00',
      '01',
      '26',
      '52',
      '53',
      '54',
      '58',
      '59',
      '60',
      '62',
      '63',
    ]);
    expect(parsed.get('63')).toBe(crc16(code.slice(0, -4)));
  });

  it('carries the Pix key, the amount in reais and the currency', () => {
    const parsed = fields(code);
    expect(fields(parsed.get('26') ?? '')).toEqual(
      new Map([
        ['00', 'br.gov.bcb.pix'],
        ['01', '7d9f0335-8dcc-4054-9bf9-0c5f4e1a1b8e'],
      ]),
    );
    expect(parsed.get('54')).toBe('1234.56');
    expect(parsed.get('53')).toBe('986');
    expect(parsed.get('58')).toBe('BR');
  });

  it('writes names in plain ASCII within their length limits', () => {
    const parsed = fields(code);
    expect(parsed.get('59')).toBe('Padaria Sao Joao Filhos C');
    expect(parsed.get('60')).toBe('Sao Paulo');
    expect(fields(parsed.get('62') ?? '').get('05')).toBe('TX1001');
  });

  it('writes small amounts with two decimals', () => {
    const small = fields(
      buildPaymentCode({
        pixKey: 'k',
        amountCents: 5,
        merchantName: 'A',
        merchantCity: 'B',
        txid: 'T',
      }),
    );
    expect(small.get('54')).toBe('0.05');
  });
});
