/**
 * Every gateway failure becomes a GatewayError with a kind the caller acts on. The
 * interface gives no HTTP status codes for its errors, so the reading of status class
 * and message lives here and nowhere else.
 */

export const GATEWAY_ERROR_KINDS = [
  /** The gateway refused the request (4xx with a message); not retried. */
  'rejected',
  /** 401/403: the token is wrong or lacks rights; stop sending. */
  'auth',
  /** The looked-up transaction does not exist (`Transaction not found`). */
  'not-found',
  /** 429: nothing was created; retry after `retryAfterMs` when given. */
  'rate-limited',
  /** Nothing reached the gateway (refused, DNS, connect time-out); safe to retry. */
  'unavailable',
  /** The request may have been processed: resolve by lookup, never re-send blindly. */
  'ambiguous',
] as const;
export type GatewayErrorKind = (typeof GATEWAY_ERROR_KINDS)[number];

export const OPERATIONS = [
  'createCashIn',
  'createCashOut',
  'getTransactionById',
  'getTransactionByOrderId',
  'getBalance',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly kind: GatewayErrorKind;
  readonly operation: Operation;
  readonly httpStatus: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: GatewayErrorKind,
    operation: Operation,
    message: string,
    details: { httpStatus?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.kind = kind;
    this.operation = operation;
    this.httpStatus = details.httpStatus;
    this.retryAfterMs = details.retryAfterMs;
  }
}

export interface Failure {
  kind: GatewayErrorKind;
  message: string;
  retryAfterMs?: number;
}

const NOT_FOUND = /transaction not found/i;

/**
 * Reads a non-2xx answer. `bodyText` is the raw body; `retryAfter` the raw header.
 * Returns undefined for a 2xx answer, which the caller parses against its schema.
 */
export function classifyResponse(
  httpStatus: number,
  bodyText: string,
  retryAfter: string | undefined,
  nowMs: number,
): Failure | undefined {
  if (httpStatus >= 200 && httpStatus < 300) return undefined;
  const said = gatewayMessage(bodyText);
  const message = said ? `${said} (HTTP ${httpStatus})` : `HTTP ${httpStatus} with no message`;
  if (httpStatus === 429) {
    const retryAfterMs = parseRetryAfter(retryAfter, nowMs);
    return retryAfterMs === undefined
      ? { kind: 'rate-limited', message }
      : { kind: 'rate-limited', message, retryAfterMs };
  }
  if (httpStatus === 401 || httpStatus === 403) return { kind: 'auth', message };
  // A 404 page without the gateway's words may be a wrong base URL: reading it as
  // "not found" would let a caller re-send a payout that exists, so it is not.
  if (said && NOT_FOUND.test(said) && httpStatus >= 400 && httpStatus < 500) {
    return { kind: 'not-found', message };
  }
  // 408: a proxy may already have forwarded the request.
  if (httpStatus >= 400 && httpStatus < 500 && httpStatus !== 408) {
    return { kind: 'rejected', message };
  }
  // 5xx, 408 and anything unexpected (1xx, 3xx): the request may have been processed.
  return { kind: 'ambiguous', message };
}

/** The gateway's `{message}`, or undefined when the body is not one. */
function gatewayMessage(bodyText: string): string | undefined {
  try {
    const body: unknown = JSON.parse(bodyText);
    if (typeof body === 'object' && body !== null && 'message' in body) {
      const { message } = body as { message: unknown };
      if (typeof message === 'string' && message.trim() !== '') return message.trim();
    }
  } catch {
    // Not JSON: an HTML error page from a proxy, say. The status alone speaks.
  }
  return undefined;
}

/** `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its weekday and month; bare numbers like "-5" are not dates.
  const at = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

// Errors raised before a single byte of the request could reach the gateway.
const NOTHING_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Reads an error thrown by the HTTP layer (no answer came back). */
export function classifyTransportError(error: unknown): Failure {
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code !== undefined && NOTHING_SENT.has(code)) {
    return { kind: 'unavailable', message: `could not reach the gateway (${code}: ${detail})` };
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return { kind: 'ambiguous', message: `no complete answer in time (${code})` };
  }
  // Resets, closed sockets, aborts and anything unknown: the request may have landed.
  return {
    kind: 'ambiguous',
    message: `the connection failed before an answer (${code ?? 'error'}: ${detail})`,
  };
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  // undici wraps socket errors; the useful code may sit one or two causes down.
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    if (typeof code === 'string' && cause === undefined) return code;
    current = cause;
  }
  return undefined;
}
