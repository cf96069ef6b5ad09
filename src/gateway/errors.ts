/**
 * Every gateway failure becomes a GatewayError with a kind the caller acts on. The
 * interface gives no HTTP status codes for its errors, so the reading of status class
 * and message lives here and nowhere else.
 */
import { PayoutsError } from '../errors.js';

const GATEWAY_ERROR_KINDS = [
  /** The gateway refused the request (4xx with a message), or it was refused before sending; not retried. */
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
  /**
   * The address answered, but not as the gateway does (a 404 or 405 without the
   * gateway's words, a redirect): `baseUrl` is likely wrong. Stop sending; a create that
   * got this answer is treated as ambiguous, since a proxy's page proves nothing.
   */
  'wrong-endpoint',
] as const;
export type GatewayErrorKind = (typeof GATEWAY_ERROR_KINDS)[number];

/**
 * A refused token or a wrong address: no retry mends it, so whatever meets one stops
 * and says what to check.
 */
export function needsTheOperator(error: GatewayError): boolean {
  return error.kind === 'auth' || error.kind === 'wrong-endpoint';
}

const OPERATIONS = [
  'createCashIn',
  'createCashOut',
  'getTransactionById',
  'getTransactionByOrderId',
  'getBalance',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface GatewayErrorDetails {
  /** `POST /transaction/cashout`: what was being asked. */
  request?: string;
  httpStatus?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

export class GatewayError extends PayoutsError {
  override readonly name = 'GatewayError';
  readonly kind: GatewayErrorKind;
  readonly operation: Operation;
  readonly request: string | undefined;
  readonly httpStatus: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: GatewayErrorKind,
    operation: Operation,
    message: string,
    details: GatewayErrorDetails = {},
  ) {
    super('gateway', message, { cause: details.cause });
    this.kind = kind;
    this.operation = operation;
    this.request = details.request;
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
// A gateway that deduplicates orderIds may refuse a repeat: the payout exists.
const DUPLICATE = /duplicat|already (exists|used|registered)|j[aá] (existe|cadastrad|utilizad)/i;

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
  const clientError = httpStatus >= 400 && httpStatus < 500;
  if (httpStatus === 429) {
    const retryAfterMs = parseRetryAfter(retryAfter, nowMs);
    return retryAfterMs === undefined
      ? { kind: 'rate-limited', message }
      : { kind: 'rate-limited', message, retryAfterMs };
  }
  if (httpStatus === 401 || httpStatus === 403) return { kind: 'auth', message };
  if (clientError && said && NOT_FOUND.test(said)) return { kind: 'not-found', message };
  // 409, or words saying the orderId exists: whatever was sent before did land.
  if (httpStatus === 409 || (clientError && said && DUPLICATE.test(said))) {
    return { kind: 'ambiguous', message };
  }
  // The gateway's endpoints exist: a 404 or 405 that is not about a transaction is a wrong
  // baseUrl, and reading it as "rejected" would misjudge every row for one config mistake.
  if (httpStatus === 404 || httpStatus === 405) return { kind: 'wrong-endpoint', message };
  if (httpStatus >= 300 && httpStatus < 400) return { kind: 'wrong-endpoint', message };
  // 408: a proxy may already have forwarded the request.
  if (clientError && httpStatus !== 408) return { kind: 'rejected', message };
  // 5xx, 408 and anything unexpected (1xx): the request may have been processed.
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

interface ErrorFacts {
  code?: unknown;
  syscall?: unknown;
  message?: unknown;
}

/**
 * Reads an error thrown by the HTTP layer (no answer came back). Only failures that
 * happen before a connection exists prove nothing was sent; anything on an open
 * socket (`UND_ERR_SOCKET`, resets, unreachable after retransmits) may have landed.
 */
export function classifyTransportError(error: unknown): Failure {
  const facts = (typeof error === 'object' && error !== null ? error : {}) as ErrorFacts;
  const code = typeof facts.code === 'string' ? facts.code : undefined;
  const detail = typeof facts.message === 'string' ? facts.message : String(error);
  const said = code ? `${code}: ${detail}` : detail;
  const beforeConnect =
    code === 'ECONNREFUSED' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    facts.syscall === 'getaddrinfo' ||
    (facts.syscall === 'connect' && code !== undefined);
  if (beforeConnect) return { kind: 'unavailable', message: `no connection (${said})` };
  // undici refused the request itself (a header it will not send): nothing left.
  if (code === 'UND_ERR_INVALID_ARG') return { kind: 'rejected', message: `not sent (${said})` };
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return { kind: 'ambiguous', message: `no complete answer in time (${code})` };
  }
  return { kind: 'ambiguous', message: `the connection failed before an answer (${said})` };
}
