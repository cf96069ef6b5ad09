/**
 * The typed client for the whole gateway interface, on undici's Pool (bounded
 * connections, no automatic retries: a retry is the engine's decision, never the
 * transport's). Every failure is a GatewayError with a kind; every answer is parsed
 * against the shared contract.
 */
import { Pool } from 'undici';
import type { z } from 'zod';
import {
  BalanceResponse,
  CashInRequest,
  CashOutRequest,
  CashOutResponse,
  CashInResponse,
  TransactionResponse,
  describeIssue,
  type Balance,
  type CashIn,
  type CashOut,
  type Transaction,
} from './contract.js';
import {
  GatewayError,
  classifyResponse,
  classifyTransportError,
  type Operation,
} from './errors.js';

export interface GatewayClientOptions {
  /** Base address of the service, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  /** Access token, sent in `Authorization` on every request. */
  token: string;
  /** Optional scheme prefix (`Bearer`); empty sends the bare token. */
  authScheme: string;
  /** The interface names POST for lookups but shows GET; GET is our default. */
  getTransactionMethod: 'GET' | 'POST';
  connectTimeoutMs: number;
  /** Time allowed for the answer's headers, and again for each gap in its body. */
  requestTimeoutMs: number;
  /** Upper bound on open connections to the gateway. */
  connections: number;
  /** Injected for tests of Retry-After dates. */
  now?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface GatewayClient {
  createCashIn(request: CashInRequest, options?: CallOptions): Promise<CashIn>;
  createCashOut(request: CashOutRequest, options?: CallOptions): Promise<CashOut>;
  getTransactionById(transactionId: number, options?: CallOptions): Promise<Transaction>;
  getTransactionByOrderId(orderId: string, options?: CallOptions): Promise<Transaction>;
  getBalance(options?: CallOptions): Promise<Balance>;
  close(): Promise<void>;
}

// An answer larger than this is not one the interface describes.
const MAX_RESPONSE_BYTES = 1024 * 1024;

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: options.connections,
    connect: { timeout: options.connectTimeoutMs },
  });
  const authorization = options.authScheme
    ? `${options.authScheme} ${options.token}`
    : options.token;
  const now = options.now ?? Date.now;

  async function call<S extends z.ZodType>(
    operation: Operation,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    schema: S,
    callOptions: CallOptions | undefined,
  ): Promise<z.output<S>> {
    const headers: Record<string, string> = { authorization, accept: 'application/json' };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    let statusCode: number;
    let retryAfter: string | undefined;
    let text: string;
    try {
      const response = await pool.request({
        method,
        path: basePath + path,
        headers,
        body: payload,
        headersTimeout: options.requestTimeoutMs,
        bodyTimeout: options.requestTimeoutMs,
        signal: callOptions?.signal,
      });
      statusCode = response.statusCode;
      const header = response.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
      text = await readLimited(response.body, MAX_RESPONSE_BYTES);
    } catch (error) {
      const failure = classifyTransportError(error);
      throw new GatewayError(failure.kind, operation, `${operation}: ${failure.message}`, {
        cause: error,
      });
    }

    const failure = classifyResponse(statusCode, text, retryAfter, now());
    if (failure) {
      const details = { httpStatus: statusCode, ...pickRetryAfter(failure.retryAfterMs) };
      throw new GatewayError(failure.kind, operation, `${operation}: ${failure.message}`, details);
    }

    // A 2xx we cannot read may still mean the gateway acted: ambiguous, never a crash.
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new GatewayError(
        'ambiguous',
        operation,
        `${operation}: HTTP ${statusCode} answer is not JSON`,
        { httpStatus: statusCode, cause: error },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new GatewayError(
        'ambiguous',
        operation,
        `${operation}: the answer does not match the interface: ${describeIssue(parsed.error)}`,
        { httpStatus: statusCode, cause: parsed.error },
      );
    }
    return parsed.data;
  }

  return {
    createCashIn: async (request, callOptions) =>
      call(
        'createCashIn',
        'POST',
        '/transaction/qrcode/cashin',
        checkRequest('createCashIn', CashInRequest, request),
        CashInResponse,
        callOptions,
      ),
    createCashOut: async (request, callOptions) =>
      call(
        'createCashOut',
        'POST',
        '/transaction/cashout',
        checkRequest('createCashOut', CashOutRequest, request),
        CashOutResponse,
        callOptions,
      ),
    getTransactionById: (transactionId, callOptions) =>
      call(
        'getTransactionById',
        options.getTransactionMethod,
        `/transaction/get/by/id/${encodeURIComponent(String(transactionId))}`,
        undefined,
        TransactionResponse,
        callOptions,
      ),
    getTransactionByOrderId: (orderId, callOptions) =>
      call(
        'getTransactionByOrderId',
        options.getTransactionMethod,
        `/transaction/get/by/orderId/${encodeURIComponent(orderId)}`,
        undefined,
        TransactionResponse,
        callOptions,
      ),
    getBalance: (callOptions) =>
      call(
        'getBalance',
        'GET',
        '/transaction/get/balance',
        undefined,
        BalanceResponse,
        callOptions,
      ),
    close: () => pool.close(),
  };
}

/** A request outside the interface never leaves the process: rejected, nothing sent. */
function checkRequest<S extends z.ZodType>(operation: Operation, schema: S, request: unknown) {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const message = `${operation}: not sent, the request does not match the interface: ${describeIssue(parsed.error)}`;
  throw new GatewayError('rejected', operation, message, { cause: parsed.error });
}

function pickRetryAfter(retryAfterMs: number | undefined): { retryAfterMs?: number } {
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}

async function readLimited(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`answer larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
