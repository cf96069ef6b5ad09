/**
 * The sandbox gateway: a real HTTP server implementing the whole interface, with
 * settlement on a timer, postbacks, seeded faults and a ledger for tests to count
 * duplicates and misses. It validates with the same contract the client uses.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import QRCode from 'qrcode';
import { Agent, request } from 'undici';
import type { z } from 'zod';
import { CashInRequest, CashOutRequest, type CashInResponse } from '../gateway/contract.js';
import type { Operation } from '../gateway/errors.js';
import { buildPaymentCode } from './emv.js';
import {
  NO_FAULTS,
  appliesTo,
  createRandom,
  drawAfter,
  drawBefore,
  drawLatency,
  type Faults,
} from './faults.js';
import {
  cashOutAnswer,
  createLedger,
  plannedStatuses,
  type SettlementStep,
  transactionAnswer,
  type LedgerEntry,
} from './ledger.js';

export interface SandboxOptions {
  /** The access token every request must carry in `Authorization`. */
  token: string;
  /** Loopback by default: the sandbox is for this machine. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Time from creation to each next status of a transaction. */
  settleDelayMs?: number;
  initialBalanceCents?: number;
  /** Debited with each cash-out beside its value, as a contract's fee would be; default 0. */
  feeDebitCents?: number;
  /** Answer a repeated cash-out orderId with the existing transaction. Off: a duplicate is paid. */
  dedupeOrderIds?: boolean;
  /** When false, cash-in answers `No active acquirer`. */
  cashInEnabled?: boolean;
  faults?: Partial<Faults>;
  /** Called once per answered request, for logs. */
  onRequest?: (entry: { method: string; path: string; status: number; fault: string }) => void;
}

export interface Sandbox {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  port: number;
  /** Every transaction created, in order of creation. */
  ledger(): readonly LedgerEntry[];
  /** Changes faults from now on; the random sequence restarts from the new seed if given. */
  setFaults(faults: Partial<Faults>): void;
  setToken(token: string): void;
  /** A Pix return: the paid cash-out under this orderId becomes refunded (false: none). */
  refund(orderId: string): boolean;
  /**
   * How the cash-outs created from now on settle: as their Pix key says (the default),
   * all failed, or all left pending; leaving `pending` settles the ones it held the new way.
   */
  settleAs(outcome: Settlement): void;
  close(): Promise<void>;
}

export type Settlement = 'by-key' | 'failed' | 'pending';

export const SANDBOX_DEFAULTS = {
  token: 'sandbox-token',
  settleDelayMs: 1000,
  initialBalanceCents: 100_000_000_00,
} as const;

const MAX_BODY_BYTES = 1024 * 1024;
const POSTBACK_TIMEOUT_MS = 5000;
const SANDBOX_PIX_KEY = '7d9f0335-8dcc-4054-9bf9-0c5f4e1a1b8e';

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  let token = options.token;
  let faults: Faults = { ...NO_FAULTS, ...options.faults };
  let random = createRandom(faults.seed);
  const settleDelayMs = options.settleDelayMs ?? SANDBOX_DEFAULTS.settleDelayMs;
  const cashInEnabled = options.cashInEnabled ?? true;
  const ledger = createLedger({
    initialBalanceCents: options.initialBalanceCents ?? SANDBOX_DEFAULTS.initialBalanceCents,
    feeDebitCents: options.feeDebitCents ?? 0,
    dedupeOrderIds: options.dedupeOrderIds ?? false,
    random: createRandom(faults.seed ^ 0x5eed),
  });
  const timers = new Set<NodeJS.Timeout>();
  let settlement: Settlement = 'by-key';
  const heldPending: LedgerEntry[] = [];
  const postbacks = new Agent({ connections: 8 });
  let closed = false;

  function later(ms: number, run: () => void): void {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  }

  const sleepers = new Set<() => void>();
  /** Resolves after `ms`, or at close (the caller then checks `closed` and gives up). */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        sleepers.delete(wake);
        resolve();
      };
      sleepers.add(wake);
      later(ms, wake);
    });

  function scheduleSettlement(entry: LedgerEntry, statuses: readonly SettlementStep[]): void {
    const [next, ...rest] = statuses;
    if (!next) return;
    later(settleDelayMs, () => {
      ledger.settle(entry, next, new Date());
      sendPostback(entry);
      scheduleSettlement(entry, rest);
    });
  }

  function settleNew(entry: LedgerEntry): void {
    if (settlement === 'pending') heldPending.push(entry);
    else if (settlement === 'failed') scheduleSettlement(entry, ['failed']);
    else scheduleSettlement(entry, plannedStatuses(entry.pixKey ?? ''));
  }

  function sendPostback(entry: LedgerEntry): void {
    if (!entry.postbackUrl || closed) return;
    request(entry.postbackUrl, {
      dispatcher: postbacks,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(transactionAnswer(entry)),
      headersTimeout: POSTBACK_TIMEOUT_MS,
      bodyTimeout: POSTBACK_TIMEOUT_MS,
    })
      .then((response) => response.body.dump())
      // The receiver's troubles are its own; the gateway's GET stays the truth.
      .catch(() => undefined);
  }

  function authorized(header: string | undefined): boolean {
    if (!header) return false;
    if (header === token) return true;
    const match = /^\S+ (.+)$/.exec(header);
    return match?.[1] === token;
  }

  async function cashOut(body: unknown): Promise<HttpAnswer> {
    const request = validate(CashOutRequest, body);
    const outcome = ledger.createCashOut(request, new Date());
    if ('refused' in outcome) return new HttpAnswer(400, { message: outcome.refused });
    if (outcome.created) settleNew(outcome.entry);
    return new HttpAnswer(200, cashOutAnswer(outcome.entry));
  }

  async function cashIn(body: unknown): Promise<HttpAnswer> {
    if (!cashInEnabled) return new HttpAnswer(400, { message: 'No active acquirer' });
    const request = validate(CashInRequest, body);
    const entry = ledger.createCashIn(request, new Date());
    // The payer "pays" after the settle delay, crediting the balance.
    scheduleSettlement(entry, ['paid']);
    const paymentCode = buildPaymentCode({
      pixKey: SANDBOX_PIX_KEY,
      amountCents: request.value,
      merchantName: 'PAYOUTS SANDBOX',
      merchantCity: 'SAO PAULO',
      txid: `TX${entry.transactionId}`,
    });
    const png = await QRCode.toBuffer(paymentCode, { type: 'png', errorCorrectionLevel: 'M' });
    const answer: z.input<typeof CashInResponse> = {
      transactionId: entry.transactionId,
      externalId: entry.externalId,
      orderId: entry.orderId ?? '',
      qrCode: paymentCode,
      qrCodeBase64: png.toString('base64'),
    };
    return new HttpAnswer(200, answer);
  }

  function lookup(entry: LedgerEntry | undefined): HttpAnswer {
    if (!entry) return new HttpAnswer(404, { message: 'Transaction not found' });
    return new HttpAnswer(200, transactionAnswer(entry));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    // Not through URL(): it would fold `%2E%2E` into a path step.
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routeOf(method, path);
    const answer = (result: HttpAnswer, fault = 'none') => {
      send(res, result);
      options.onRequest?.({ method, path, status: result.status, fault });
    };

    if (!authorized(req.headers.authorization)) {
      answer(new HttpAnswer(401, { message: 'Unauthorized' }));
      return;
    }
    if (!route) {
      answer(new HttpAnswer(404, { message: `No such endpoint: ${method} ${path}` }));
      return;
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (error) {
      answer(error instanceof HttpAnswer ? error : new HttpAnswer(400, { message: 'Bad request' }));
      return;
    }

    const faulty = route.operation !== undefined && appliesTo(faults, route.operation);
    if (faulty) {
      const latency = drawLatency(faults, random);
      if (latency > 0) await sleep(latency);
      if (closed) return;
      const before = drawBefore(faults, random);
      if (before === 'hang') {
        options.onRequest?.({ method, path, status: 0, fault: before });
        return;
      }
      if (before === 'rate-limit') {
        const headers = { 'retry-after': String(faults.retryAfterSeconds) };
        answer(new HttpAnswer(429, { message: 'Too Many Requests' }, headers), before);
        return;
      }
      if (before === 'server-error') {
        answer(new HttpAnswer(500, { message: 'Internal Server Error' }), before);
        return;
      }
    }

    let result: HttpAnswer;
    try {
      result = await route.run(body);
    } catch (error) {
      result =
        error instanceof HttpAnswer ? error : new HttpAnswer(500, { message: String(error) });
    }

    const isCreate = route.operation === 'createCashOut' || route.operation === 'createCashIn';
    if (faulty && isCreate && result.status === 200) {
      const after = drawAfter(faults, random);
      if (after === 'drop') {
        // The transaction exists; the caller never hears of it.
        options.onRequest?.({ method, path, status: 0, fault: 'drop-after-commit' });
        req.socket.destroy();
        return;
      }
      if (after === 'server-error') {
        answer(new HttpAnswer(502, { message: 'Bad Gateway' }), 'server-error-after-commit');
        return;
      }
    }
    answer(result);
  }

  interface Route {
    operation?: Operation;
    run(body: unknown): Promise<HttpAnswer> | HttpAnswer;
  }

  function routeOf(method: string, path: string): Route | undefined {
    const lookupMethod = method === 'GET' || method === 'POST';
    const byId = /^\/transaction\/get\/by\/id\/([^/]+)$/.exec(path);
    if (byId && lookupMethod) {
      const id = Number(decodeURIComponent(byId[1] ?? ''));
      return {
        operation: 'getTransactionById',
        run: () => lookup(Number.isInteger(id) ? ledger.findById(id) : undefined),
      };
    }
    const byOrderId = /^\/transaction\/get\/by\/orderId\/([^/]+)$/.exec(path);
    if (byOrderId && lookupMethod) {
      const orderId = decodeURIComponent(byOrderId[1] ?? '');
      return {
        operation: 'getTransactionByOrderId',
        run: () => lookup(ledger.findByOrderId(orderId)),
      };
    }
    if (method === 'POST' && path === '/transaction/cashout') {
      return { operation: 'createCashOut', run: cashOut };
    }
    if (method === 'POST' && path === '/transaction/qrcode/cashin') {
      return { operation: 'createCashIn', run: cashIn };
    }
    if (method === 'GET' && path === '/transaction/get/balance') {
      return { operation: 'getBalance', run: () => new HttpAnswer(200, ledger.balance()) };
    }
    if (method === 'GET' && path === '/sandbox/ledger') {
      return { run: () => new HttpAnswer(200, { transactions: ledger.entries() }) };
    }
    return undefined;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, new HttpAnswer(500, { message: String(error) }));
    });
  });
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    ledger: () => ledger.entries(),
    setFaults(change) {
      faults = { ...faults, ...change };
      if (change.seed !== undefined) random = createRandom(change.seed);
    },
    setToken(next) {
      token = next;
    },
    refund(orderId) {
      const entry = ledger
        .entries()
        .find((candidate) => candidate.orderId === orderId && candidate.object === 'cashout');
      if (entry?.status !== 'paid') return false;
      ledger.settle(entry, 'refunded', new Date());
      sendPostback(entry);
      return true;
    },
    settleAs(outcome) {
      settlement = outcome;
      if (outcome !== 'pending') for (const entry of heldPending.splice(0)) settleNew(entry);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const wake of [...sleepers]) wake();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // Hung requests and idle keep-alive sockets would hold close() forever.
      server.closeAllConnections();
      await stopped;
      await postbacks.destroy();
    },
  };
}

function send(res: ServerResponse, answer: HttpAnswer): void {
  const payload = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...answer.headers,
  });
  res.end(payload);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new HttpAnswer(413, { message: `Request body larger than ${MAX_BODY_BYTES} bytes` });
    }
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpAnswer(400, { message: 'Validation Failed - body is not valid JSON' });
  }
}

/** Validates as the interface words it: `Validation Failed - value is required`. */
function validate<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path ?? [];
  const field = path.length > 0 ? path.join('.') : 'body';
  const missing = valueAt(body, path) === undefined;
  const message = missing
    ? `Validation Failed - ${field} is required`
    : `Validation Failed - ${field} is invalid (${issue?.message ?? 'invalid'})`;
  throw new HttpAnswer(400, { message });
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
