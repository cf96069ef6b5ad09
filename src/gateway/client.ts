/**
 * The typed client for the whole gateway interface, on undici's Pool (bounded
 * connections, no automatic retries: a retry is the engine's decision, never the
 * transport's). Every failure is a GatewayError with a kind; every answer is parsed
 * against the shared contract.
 */
import { Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  BalanceResponse,
  CashInRequest,
  CashOutRequest,
  CashOutResponse,
  CashInResponse,
  TransactionResponse,
  describeIssue,
  quickCashOutAnswer,
  quickCashOutRequest,
  type Balance,
  type CashIn,
  type CashOut,
  type Transaction,
} from './contract.js';
import type { Clock } from '../runtime/clock.js';
import { systemClock } from '../runtime/clock.js';
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
  /**
   * Time allowed for the whole answer, headers and body, once connected: a request ends
   * at the latest `connectTimeoutMs + requestTimeoutMs` after it starts (its deadline),
   * however slowly the bytes come.
   */
  requestTimeoutMs: number;
  /** Upper bound on open connections to the gateway. */
  connections: number;
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

/** `clock` reads a Retry-After given as a date against our time (tests move it). */
export function createGatewayClient(
  options: GatewayClientOptions,
  clock: Pick<Clock, 'now'> = systemClock,
): GatewayClient {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: options.connections,
    connect: { timeout: options.connectTimeoutMs },
  });
  const authorization = options.authScheme
    ? `${options.authScheme} ${options.token}`
    : options.token;

  async function call<S extends z.ZodType>(
    operation: Operation,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    schema: S,
    callOptions: CallOptions | undefined,
    /** Says what is wrong when a well-formed answer is not about what was asked. */
    mismatch: (answer: z.output<S>) => string | undefined = () => undefined,
    /** The schema's checks written out for a hot path: undefined leaves the answer to the schema. */
    quick: (json: unknown) => z.output<S> | undefined = () => undefined,
  ): Promise<z.output<S>> {
    const request = `${method} ${basePath}${path}`;
    const headers: Record<string, string> = { authorization, accept: 'application/json' };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    let statusCode: number;
    let retryAfter: string | undefined;
    let text: string;
    // undici's time-outs restart at every byte: a body trickling in just under them would
    // keep the request open for ever. The deadline ends it whatever the rate: a timer
    // cleared at the end, not AbortSignal.timeout and .any, which cost more a request
    // and leave a live timer per request for the whole deadline (docs/benchmarks.md).
    const deadlineMs = requestDeadlineMs(options);
    const caller = callOptions?.signal;
    // Never started for a run already stopping, whatever undici would do with a socket at hand.
    if (caller?.aborted) throw abandoned(operation, request, caller.reason);
    let pastDeadline = false;
    const exchange = startExchange(pool, {
      method,
      path: basePath + path,
      headers,
      body: payload,
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    });
    const timer = setTimeout(() => {
      pastDeadline = true;
      exchange.end(new Error(`past its ${deadlineMs} ms deadline`));
    }, deadlineMs);
    const abandon = () => exchange.end(new Error('abandoned: the run is stopping'));
    if (caller) endedWith(caller).add(abandon);
    try {
      ({ statusCode, retryAfter, text } = await exchange.reply);
    } catch (error) {
      // Cut by our deadline, or abandoned by a run that stops: no answer, so ambiguous (a
      // create may have landed), resolved by lookup like any other.
      if (!pastDeadline && caller?.aborted) throw abandoned(operation, request, error);
      const failure = pastDeadline
        ? {
            kind: 'ambiguous' as const,
            message: `no complete answer within its ${deadlineMs} ms deadline`,
          }
        : classifyTransportError(error);
      throw new GatewayError(failure.kind, operation, `${operation}: ${failure.message}`, {
        request,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      if (caller) endedWith(caller).delete(abandon);
    }

    const failure = classifyResponse(statusCode, text, retryAfter, clock.now());
    if (failure) {
      const details = { request, httpStatus: statusCode, ...pickRetryAfter(failure.retryAfterMs) };
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
        { request, httpStatus: statusCode, cause: error },
      );
    }
    const parsed = quickly(quick, schema, json);
    if (!parsed.success) {
      throw new GatewayError(
        'ambiguous',
        operation,
        `${operation}: the answer does not match the interface: ${describeIssue(parsed.error)}`,
        { request, httpStatus: statusCode, cause: parsed.error },
      );
    }
    // An answer about another transaction must never be adopted as this one.
    const wrong = mismatch(parsed.data);
    if (wrong !== undefined) {
      throw new GatewayError('ambiguous', operation, `${operation}: ${wrong}`, {
        request,
        httpStatus: statusCode,
      });
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
        checkRequest('createCashOut', CashOutRequest, request, quickCashOutRequest),
        CashOutResponse,
        callOptions,
        (answer) =>
          answer.orderId !== request.orderId
            ? `answered for orderId "${answer.orderId}", not "${request.orderId}"`
            : answer.grossCents !== request.value
              ? `answered gross ${answer.grossCents} for value ${request.value}`
              : undefined,
        quickCashOutAnswer,
      ),
    getTransactionById: (transactionId, callOptions) =>
      call(
        'getTransactionById',
        options.getTransactionMethod,
        `/transaction/get/by/id/${pathSegment(String(transactionId))}`,
        undefined,
        TransactionResponse,
        callOptions,
        (answer) =>
          answer.transactionId !== transactionId
            ? `answered with transaction ${answer.transactionId}, not ${transactionId}`
            : undefined,
      ),
    getTransactionByOrderId: async (orderId, callOptions) =>
      call(
        'getTransactionByOrderId',
        options.getTransactionMethod,
        `/transaction/get/by/orderId/${lookupSegment(orderId)}`,
        undefined,
        TransactionResponse,
        callOptions,
        (answer) =>
          answer.orderId !== orderId
            ? `answered for orderId "${answer.orderId ?? ''}", not "${orderId}"`
            : undefined,
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

/**
 * The longest any request may take, from its start to the last byte of its answer:
 * leases and grace periods are sized from it (see engineFor).
 */
export function requestDeadlineMs(
  options: Pick<GatewayClientOptions, 'connectTimeoutMs' | 'requestTimeoutMs'>,
): number {
  return options.connectTimeoutMs + options.requestTimeoutMs;
}

/** Percent-encoded for a URL path. */
function pathSegment(value: string): string {
  return encodeURIComponent(value);
}

/**
 * URL parsers fold `.` and `..` (even as `%2E`) into path steps, so such an orderId
 * would be asked about as something else: refused before sending.
 */
function lookupSegment(orderId: string): string {
  if (orderId === '' || orderId === '.' || orderId === '..') {
    throw new GatewayError(
      'rejected',
      'getTransactionByOrderId',
      `getTransactionByOrderId: not sent, "${orderId}" cannot be looked up in a URL path`,
    );
  }
  return pathSegment(orderId);
}

/** The quick reading when it answers, the schema's otherwise (and always for a failure). */
function quickly<S extends z.ZodType>(
  quick: (input: unknown) => z.output<S> | undefined,
  schema: S,
  input: unknown,
): z.ZodSafeParseResult<z.output<S>> {
  const data = quick(input);
  return data === undefined ? schema.safeParse(input) : { success: true, data };
}

/** A request outside the interface never leaves the process: rejected, nothing sent. */
function checkRequest<S extends z.ZodType>(
  operation: Operation,
  schema: S,
  request: unknown,
  quick: (input: unknown) => z.output<S> | undefined = () => undefined,
) {
  const parsed = quickly(quick, schema, request);
  if (parsed.success) return parsed.data;
  const message = `${operation}: not sent, the request does not match the interface: ${describeIssue(parsed.error)}`;
  throw new GatewayError('rejected', operation, message, { cause: parsed.error });
}

function pickRetryAfter(retryAfterMs: number | undefined): { retryAfterMs?: number } {
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}

/** What came back for a request: its status, its Retry-After, its body as text. */
interface Reply {
  statusCode: number;
  retryAfter: string | undefined;
  text: string;
}

/**
 * One request through undici's dispatch with a handler of our own, rather than
 * `request`'s: no AbortSignal with its listener, body stream or async scope a request,
 * less CPU and garbage (docs/benchmarks.md). `end` cuts it
 * with that error, at once or as soon as it is given a connection; so does an answer over
 * MAX_RESPONSE_BYTES.
 */
function startExchange(
  pool: Pool,
  request: Dispatcher.DispatchOptions,
): { reply: Promise<Reply>; end: (why: Error) => void } {
  let controller: Dispatcher.DispatchController | undefined;
  let endedBy: Error | undefined;
  const reply = new Promise<Reply>((resolve, reject) => {
    let statusCode = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    pool.dispatch(request, {
      onRequestStart: (started) => {
        if (endedBy) started.abort(endedBy);
        else controller = started;
      },
      onResponseStart: (_, status, headers) => {
        statusCode = status;
        const header = headers['retry-after'];
        retryAfter = Array.isArray(header) ? header[0] : header;
      },
      onResponseData: (answering, chunk) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
        else answering.abort(new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`));
      },
      onResponseEnd: () =>
        resolve({ statusCode, retryAfter, text: Buffer.concat(chunks, size).toString('utf8') }),
      onResponseError: (_, error) => reject(error),
    });
  });
  return {
    reply,
    end: (why) => {
      endedBy ??= why;
      controller?.abort(why);
    },
  };
}

/** A request cut, or never started, because the run stops: ambiguous, resolved by lookup. */
function abandoned(operation: Operation, request: string, cause: unknown): GatewayError {
  return new GatewayError(
    'ambiguous',
    operation,
    `${operation}: abandoned without an answer: the run is stopping`,
    { request, cause },
  );
}

/**
 * What ends each request in flight under a caller's signal: one listener a signal (a
 * run's one signal is shared by all its requests), not one a request.
 */
const endings = new WeakMap<AbortSignal, Set<() => void>>();
function endedWith(signal: AbortSignal): Set<() => void> {
  let ends = endings.get(signal);
  if (!ends) {
    const all = new Set<() => void>();
    signal.addEventListener('abort', () => all.forEach((end) => end()), { once: true });
    endings.set(signal, all);
    ends = all;
  }
  return ends;
}
