import { describe, expect, it } from 'vitest';
import {
  CashOutRequest,
  CashOutResponse,
  quickCashOutAnswer,
  quickCashOutRequest,
} from '../../src/gateway/contract.js';

// The quick readings restate the schemas' checks for the hot path; the schemas stay the
// definition. Each case holds them to the same answer: what the quick one reads, the
// schema reads the same, to the byte; what the schema refuses, the quick one leaves to it.
function heldToTheSchema(
  quick: (input: unknown) => unknown,
  schema: { safeParse: (input: unknown) => { success: boolean; data?: unknown } },
  input: unknown,
): { quick: unknown; schema: { success: boolean; data?: unknown } } {
  const read = quick(input);
  const parsed = schema.safeParse(input);
  if (!parsed.success) expect(read).toBeUndefined();
  else if (read !== undefined) expect(JSON.stringify(read)).toBe(JSON.stringify(parsed.data));
  if (read !== undefined) expect(read).toEqual(parsed.data);
  return { quick: read, schema: parsed };
}

/** A case: what it is, and what it changes of a good answer or request. */
type Case = [string, Record<string, unknown>];

const answer = {
  transactionId: 123,
  orderId: 'o-1',
  gross: 1500,
  tax: '0.50',
  liquid: '14.50',
  status: 'PENDING',
  createdAt: '2026-11-25T10:00:00.000Z',
  success: 'true',
  description: null,
};

const request = {
  value: 1500,
  pixKeyType: 2,
  pixKey: 'ana@example.com',
  cpfCnpj: '52998224725',
  person: { name: 'Ana', email: 'ana@example.com', phone: '+5511987654321' },
  orderId: 'o-1',
};

describe('the quick reading of a cash-out answer', () => {
  it.each([
    ['as the sandbox answers', {}],
    ['a status code', { status: '1' }],
    ['an unknown status word', { status: 'processing' }],
    ['success false in capitals', { success: 'FALSE' }],
    ['success as 1', { success: '1' }],
    ['success as 0', { success: '0' }],
    ['a description', { description: 'Pix enviado' }],
    ['an offset', { createdAt: '2026-11-25T07:00:00-03:00' }],
    ['an offset without colon', { createdAt: '2026-11-25T07:00:00-0300' }],
    ['a lower-case zone', { createdAt: '2026-11-25T10:00:00z' }],
    ['fields the interface does not name', { extra: 1, person: { name: 'x' } }],
    ['a negative gross', { gross: -5 }],
    ['empty texts', { orderId: '', tax: '', liquid: '', status: '' }],
  ])('reads %s as the schema does', (_, change) => {
    const { quick } = heldToTheSchema(quickCashOutAnswer, CashOutResponse, {
      ...answer,
      ...change,
    });
    expect(quick).toBeDefined();
  });

  const fields = Object.keys(answer);
  it.each<Case>([
    ...fields.map((field): Case => [`no ${field}`, { [field]: undefined }]),
    // The description may be null (the base answer's), not absent.
    ...fields
      .filter((field) => field !== 'description')
      .map((field): Case => [`${field} null`, { [field]: null }]),
    ...fields.map((field): Case => [`${field} as an object`, { [field]: {} }]),
    ['a transactionId as text', { transactionId: '123' }],
    ['a fractional transactionId', { transactionId: 1.5 }],
    ['a transactionId past the safe integers', { transactionId: 2 ** 53 }],
    ['a gross as text', { gross: '1500' }],
    ['a fractional gross', { gross: 15.5 }],
    ['a tax as a number', { tax: 0.5 }],
    ['a status as a number', { status: 1 }],
    ['a time without its zone', { createdAt: '2026-11-25T10:00:00' }],
    ['a time that is no date', { createdAt: 'yesterdayZ' }],
    ['a time as a number', { createdAt: 1764064800000 }],
    ['success as yes', { success: 'yes' }],
    ['success as a boolean', { success: true }],
    ['a description as a number', { description: 5 }],
  ])('leaves %s to the schema', (_, change) => {
    const { quick, schema } = heldToTheSchema(quickCashOutAnswer, CashOutResponse, {
      ...answer,
      ...change,
    });
    expect(quick).toBeUndefined();
    expect(schema.success).toBe(false);
  });

  it.each([null, 'text', 5, [answer], []])('leaves %j to the schema', (input) => {
    const { quick, schema } = heldToTheSchema(quickCashOutAnswer, CashOutResponse, input);
    expect(quick).toBeUndefined();
    expect(schema.success).toBe(false);
  });
});

describe('the quick check of a cash-out request', () => {
  it.each([
    ['a payout', {}],
    ['each Pix key type', { pixKeyType: 0 }],
    ['the last Pix key type', { pixKeyType: 4 }],
    ['the largest amount', { value: Number.MAX_SAFE_INTEGER }],
    ['fields the interface does not name', { extra: 1 }],
    ['a person with fields the interface does not name', { person: { ...request.person, x: 1 } }],
  ])('passes %s as the schema does', (_, change) => {
    const { quick } = heldToTheSchema(quickCashOutRequest, CashOutRequest, {
      ...request,
      ...change,
    });
    expect(quick).toBeDefined();
  });

  const fields = Object.keys(request);
  const personFields = Object.keys(request.person);
  it.each<Case>([
    ...fields.map((field): Case => [`no ${field}`, { [field]: undefined }]),
    ...fields.map((field): Case => [`${field} null`, { [field]: null }]),
    ...personFields.map((field): Case => [
      `no person.${field}`,
      { person: { ...request.person, [field]: undefined } },
    ]),
    ...personFields.map((field): Case => [
      `an empty person.${field}`,
      { person: { ...request.person, [field]: '' } },
    ]),
    ['a person as text', { person: 'Ana' }],
    ['a zero amount', { value: 0 }],
    ['a negative amount', { value: -1 }],
    ['a fractional amount', { value: 1.5 }],
    ['an amount past the safe integers', { value: 2 ** 53 }],
    ['an amount as text', { value: '1500' }],
    ['a Pix key type past the list', { pixKeyType: 5 }],
    ['a negative Pix key type', { pixKeyType: -1 }],
    ['a fractional Pix key type', { pixKeyType: 1.5 }],
    ['an empty Pix key', { pixKey: '' }],
    ['an empty document', { cpfCnpj: '' }],
    ['an empty orderId', { orderId: '' }],
    ['an orderId as a number', { orderId: 1 }],
  ])('leaves %s to the schema', (_, change) => {
    const { quick, schema } = heldToTheSchema(quickCashOutRequest, CashOutRequest, {
      ...request,
      ...change,
    });
    expect(quick).toBeUndefined();
    expect(schema.success).toBe(false);
  });

  it.each([
    ['a postback address', 'https://payouts.example.com/postback', true],
    ['a postback address that is none', 'not a url', false],
  ])('leaves %s to the schema', (_, postbackUrl, valid) => {
    const { quick, schema } = heldToTheSchema(quickCashOutRequest, CashOutRequest, {
      ...request,
      postbackUrl,
    });
    expect(quick).toBeUndefined();
    expect(schema.success).toBe(valid);
  });
});
