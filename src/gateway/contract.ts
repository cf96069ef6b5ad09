/**
 * The gateway's interface (docs/gateway.md) as zod schemas: the single
 * source of truth for both our client and the sandbox, so the two cannot disagree.
 *
 * Request schemas describe what goes on the wire. Response schemas parse what comes
 * back exactly as the interface writes it (`z.input<>` is the wire shape the sandbox
 * produces) and normalise it once into our own types (`z.output<>`, what the client
 * returns): amounts stay integer cents, `tax`/`liquid` stay verbatim text, statuses
 * become one enum shared by codes and words.
 */
import { z } from 'zod';
import { mapStatus } from './status.js';

/** Section 2.4: the position in this list is the wire value of `pixKeyType`. */
export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'TELEFONE', 'RANDOM_KEY'] as const;
export type PixKeyTypeName = (typeof PIX_KEY_TYPES)[number];

const cents = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const text = z.string().min(1);

export const CashInRequest = z.object({
  payerName: text,
  payerDocument: text,
  payerEmail: text,
  payerPhone: text,
  productName: text,
  productDescription: text,
  value: cents,
  postbackUrl: z.url().optional(),
  orderId: text.optional(),
  splits: z.array(z.object({ clientId: z.uuid(), value: cents })).optional(),
});
export type CashInRequest = z.infer<typeof CashInRequest>;

export const CashOutRequest = z.object({
  value: cents,
  pixKeyType: z
    .number()
    .int()
    .min(0)
    .max(PIX_KEY_TYPES.length - 1),
  pixKey: text,
  cpfCnpj: text,
  person: z.object({ name: text, email: text, phone: text }),
  orderId: text,
  postbackUrl: z.url().optional(),
});
export type CashOutRequest = z.infer<typeof CashOutRequest>;

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isCents = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) > 0;

/**
 * CashOutRequest's checks written out, for the engine's thousands of creates a second
 * (zod's parse of a request and of its answer is a real share of a payout's CPU,
 * docs/benchmarks.md): the request
 * as the schema gives it, or undefined for anything else, a postback address among them,
 * which the schema then judges. So the schema stays the one definition;
 * test/gateway/contract.test.ts holds the two to the same answers.
 */
export function quickCashOutRequest(input: unknown): CashOutRequest | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { value, pixKeyType, pixKey, cpfCnpj, person, orderId, postbackUrl } = input as Record<
    string,
    unknown
  >;
  if (typeof person !== 'object' || person === null) return undefined;
  const { name, email, phone } = person as Record<string, unknown>;
  const typed =
    isCents(value) &&
    Number.isSafeInteger(pixKeyType) &&
    (pixKeyType as number) >= 0 &&
    (pixKeyType as number) < PIX_KEY_TYPES.length &&
    isText(pixKey) &&
    isText(cpfCnpj) &&
    isText(name) &&
    isText(email) &&
    isText(phone) &&
    isText(orderId) &&
    postbackUrl === undefined;
  if (!typed) return undefined;
  return {
    value,
    pixKeyType: pixKeyType as number,
    pixKey,
    cpfCnpj,
    person: { name, email, phone },
    orderId,
  };
}

/** A timestamp kept as the gateway wrote it, once we know it reads as a date. */
const timestamp = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not a timestamp');

/** Normalised to UTC only when it says its zone: without one, `Date` would assume ours. */
const ZONED = /(Z|[+-]\d\d:?\d\d)$/i;
const zonedTimestamp = timestamp.refine(
  (s) => ZONED.test(s),
  'expected a time with its zone (Z or an offset)',
);

// The interface shows text; anything else for the flag is a contract break.
const FLAG = /^(true|false|1|0)$/i;
const TRUE = /^(true|1)$/i;
const successFlag = z
  .string()
  .regex(FLAG, 'expected "true" or "false"')
  .transform((s) => TRUE.test(s));

export const CashInResponse = z
  .object({
    transactionId: z.number().int(),
    externalId: z.string(),
    // Echoed back; a cash-in created without one may come back empty or null.
    orderId: z.string().nullable().optional(),
    qrCode: text,
    qrCodeBase64: text,
  })
  .transform((r) => ({
    transactionId: r.transactionId,
    externalId: r.externalId,
    orderId: r.orderId || null,
    paymentCode: r.qrCode,
    qrPngBase64: r.qrCodeBase64,
  }));
export type CashIn = z.output<typeof CashInResponse>;

const CashOutWire = z.object({
  transactionId: z.number().int(),
  orderId: z.string(),
  gross: z.number().int(),
  tax: z.string(),
  liquid: z.string(),
  status: z.string(),
  createdAt: zonedTimestamp,
  success: successFlag,
  description: z.string().nullable(),
});

function toCashOut(r: z.output<typeof CashOutWire>) {
  return {
    transactionId: r.transactionId,
    orderId: r.orderId,
    grossCents: r.gross,
    // Numeric text of unspecified unit: recorded and reported, never computed with.
    fee: r.tax,
    net: r.liquid,
    status: mapStatus(r.status),
    statusRaw: r.status,
    // Written with a UTC designator, so it can be normalised safely.
    createdAt: new Date(r.createdAt).toISOString(),
    success: r.success,
    description: r.description,
  };
}

export const CashOutResponse = CashOutWire.transform(toCashOut);
export type CashOut = z.output<typeof CashOutResponse>;

/**
 * CashOutResponse's checks written out (see quickCashOutRequest): the answer as the
 * schema reads it, or undefined for anything else, which the schema then judges.
 */
export function quickCashOutAnswer(input: unknown): CashOut | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { transactionId, orderId, gross, tax, liquid, status, createdAt, success, description } =
    input as Record<string, unknown>;
  const typed =
    Number.isSafeInteger(transactionId) &&
    typeof orderId === 'string' &&
    Number.isSafeInteger(gross) &&
    typeof tax === 'string' &&
    typeof liquid === 'string' &&
    typeof status === 'string' &&
    typeof createdAt === 'string' &&
    !Number.isNaN(Date.parse(createdAt)) &&
    ZONED.test(createdAt) &&
    typeof success === 'string' &&
    FLAG.test(success) &&
    (description === null || typeof description === 'string');
  if (!typed) return undefined;
  return toCashOut({
    transactionId: transactionId as number,
    orderId,
    gross: gross as number,
    tax,
    liquid,
    status,
    createdAt,
    success: TRUE.test(success),
    description,
  });
}

export const TransactionResponse = z
  .object({
    transactionId: z.number().int(),
    orderId: z.string().nullable().optional(),
    object: z.string(),
    status: z.string(),
    method: z.string(),
    value: z.number().int(),
    // The interface shows both as text; a transaction not yet processed may lack them.
    endToEndId: z.string().nullable().optional(),
    processedAt: timestamp.nullable().optional(),
  })
  .transform((r) => ({
    transactionId: r.transactionId,
    orderId: r.orderId || null,
    object: r.object,
    method: r.method,
    valueCents: r.value,
    status: mapStatus(r.status),
    statusRaw: r.status,
    endToEndId: r.endToEndId || null,
    // No zone designator on the wire: kept verbatim rather than guessing one.
    processedAt: r.processedAt || null,
  }));
export type Transaction = z.output<typeof TransactionResponse>;

/** Section 2.7. Unit and meaning not shown: reported as the gateway gives them. */
export const BalanceResponse = z.object({
  balance: z.number().int(),
  retention: z.number().int(),
  toAnticipate: z.number().int(),
  finalBalance: z.number().int(),
});
export type Balance = z.output<typeof BalanceResponse>;

export const ErrorBody = z.object({ message: z.string() });

/** Names the first field of a failed parse, e.g. `status: expected string, received number`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const field = issue.path.length > 0 ? issue.path.join('.') : '(body)';
  return `${field}: ${issue.message}`;
}
