import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import jsQRModule from 'jsqr';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { GatewayClient } from '../../src/gateway/client.js';
import { GatewayError, type GatewayErrorKind } from '../../src/gateway/errors.js';
import { crc16 } from '../../src/sandbox/emv.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import {
  TOKEN,
  cashOutRequest,
  clientFor,
  closedPort,
  startLoopbackServer,
  type LoopbackServer,
} from '../support/gateway.js';

// jsqr is CommonJS whose typings claim an ES default export; at runtime both are the function.
const jsQR = jsQRModule.default;

const BALANCE = 1_000_000;

async function failureOf(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

async function expectKind(
  promise: Promise<unknown>,
  kind: GatewayErrorKind,
): Promise<GatewayError> {
  const error = await failureOf(promise);
  expect(error.kind, error.message).toBe(kind);
  return error;
}

describe('gateway client against the sandbox over HTTP', () => {
  let sandbox: Sandbox;
  let client: GatewayClient;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 40, initialBalanceCents: BALANCE });
    client = clientFor(sandbox.url);
  });

  afterEach(async () => {
    await client.close();
    await sandbox.close();
  });

  it('creates a cash-out and reads it back normalised', async () => {
    const cashOut = await client.createCashOut(cashOutRequest('order-1'));
    expect(cashOut).toMatchObject({
      orderId: 'order-1',
      grossCents: 1234,
      fee: '0.50',
      net: '11.84',
      status: 'pending',
      statusRaw: '0',
      success: true,
      description: null,
    });
    expect(cashOut.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(sandbox.ledger()).toHaveLength(1);

    const byId = await client.getTransactionById(cashOut.transactionId);
    expect(byId).toMatchObject({
      transactionId: cashOut.transactionId,
      orderId: 'order-1',
      object: 'cashout',
      method: 'pix',
      valueCents: 1234,
    });

    await vi.waitFor(
      async () => expect((await client.getTransactionByOrderId('order-1')).status).toBe('paid'),
      {
        timeout: 3000,
        interval: 20,
      },
    );
    const settled = await client.getTransactionByOrderId('order-1');
    expect(settled.statusRaw).toBe('paid');
    expect(settled.endToEndId).toMatch(/^E\d{20}\w{11}$/);
    expect(settled.processedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
  });

  it('follows a payout to a test key that fails, and the balance comes back', async () => {
    // Its own sandbox, slow enough to read the debited balance before the payout fails.
    const slow = await startSandbox({
      token: TOKEN,
      settleDelayMs: 500,
      initialBalanceCents: BALANCE,
    });
    const slowClient = clientFor(slow.url);
    try {
      const cashOut = await slowClient.createCashOut(
        cashOutRequest('order-fail', { pixKeyType: 2, pixKey: 'fail@example.com', value: 5000 }),
      );
      expect((await slowClient.getBalance()).balance).toBe(BALANCE - 5000);
      await vi.waitFor(
        async () =>
          expect((await slowClient.getTransactionById(cashOut.transactionId)).status).toBe(
            'failed',
          ),
        { timeout: 3000, interval: 20 },
      );
      expect(await slowClient.getBalance()).toEqual({
        balance: BALANCE,
        retention: 0,
        toAnticipate: 0,
        finalBalance: BALANCE,
      });
    } finally {
      await slowClient.close();
      await slow.close();
    }
  });

  it('looks transactions up with POST when configured so', async () => {
    const post = clientFor(sandbox.url, { getTransactionMethod: 'POST' });
    try {
      const cashOut = await post.createCashOut(cashOutRequest('order-post'));
      expect((await post.getTransactionById(cashOut.transactionId)).orderId).toBe('order-post');
      expect((await post.getTransactionByOrderId('order-post')).transactionId).toBe(
        cashOut.transactionId,
      );
    } finally {
      await post.close();
    }
  });

  it('sends a scheme prefix when configured', async () => {
    const bearer = clientFor(sandbox.url, { authScheme: 'Bearer' });
    try {
      expect((await bearer.getBalance()).balance).toBe(BALANCE);
    } finally {
      await bearer.close();
    }
  });

  it('creates a cash-in whose QR image decodes to its payment code', async () => {
    const cashIn = await client.createCashIn({
      payerName: 'Loja Exemplo',
      payerDocument: '11222333000181',
      payerEmail: 'fin@example.com',
      payerPhone: '+5511912345678',
      productName: 'Invoice 42',
      productDescription: 'November services',
      value: 150_000,
      orderId: 'invoice-42',
    });
    expect(cashIn.orderId).toBe('invoice-42');
    const code = cashIn.paymentCode;
    expect(code.slice(-8, -4)).toBe('6304');
    expect(code.slice(-4)).toBe(crc16(code.slice(0, -4)));
    expect(code).toContain('54071500.00');

    const png = PNG.sync.read(Buffer.from(cashIn.qrPngBase64, 'base64'));
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(decoded?.data).toBe(code);
  });

  it('answers many requests in flight under one caller signal without a listener-leak warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const run = new AbortController();
      const orderIds = Array.from({ length: 32 }, (_, i) => `shared-signal-${i}`);
      await Promise.all(
        orderIds.map((orderId) =>
          client.createCashOut(cashOutRequest(orderId), { signal: run.signal }),
        ),
      );
      expect(sandbox.ledger()).toHaveLength(32);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  describe('failure kinds', () => {
    it('rejected: the gateway refuses with a message', async () => {
      const error = await expectKind(
        client.createCashOut(cashOutRequest('too-big', { value: BALANCE + 1 })),
        'rejected',
      );
      expect(error.message).toContain('Insufficient balance');
      expect(error.httpStatus).toBe(400);
      expect(sandbox.ledger()).toHaveLength(0);
    });

    it('rejected: a request outside the interface is not sent at all', async () => {
      const error = await expectKind(
        client.createCashOut(cashOutRequest('half-cent', { value: 12.5 })),
        'rejected',
      );
      expect(error.message).toMatch(/not sent.*value/);
      expect(sandbox.ledger()).toHaveLength(0);
    });

    it('auth: a wrong token is refused on every operation, and nothing is created', async () => {
      const wrong = clientFor(sandbox.url, { token: 'wrong' });
      try {
        await expectKind(wrong.getBalance(), 'auth');
        await expectKind(wrong.createCashOut(cashOutRequest('x')), 'auth');
        await expectKind(wrong.getTransactionByOrderId('x'), 'auth');
        const error = await expectKind(wrong.getTransactionById(1), 'auth');
        expect(error.message).not.toContain('wrong');
        expect(sandbox.ledger()).toHaveLength(0);
      } finally {
        await wrong.close();
      }
    });

    it('not-found: unknown orderId and transactionId', async () => {
      await expectKind(client.getTransactionByOrderId('never-sent'), 'not-found');
      const error = await expectKind(client.getTransactionById(424242), 'not-found');
      expect(error.httpStatus).toBe(404);
    });

    it('rate-limited: 429 read with its Retry-After delay, nothing created', async () => {
      sandbox.setFaults({ rateLimitRate: 1, retryAfterSeconds: 7 });
      const error = await expectKind(
        client.createCashOut(cashOutRequest('limited')),
        'rate-limited',
      );
      expect(error.retryAfterMs).toBe(7000);
      expect(sandbox.ledger()).toHaveLength(0);
    });

    it('unavailable: connection refused', async () => {
      const nowhere = clientFor(`http://127.0.0.1:${await closedPort()}`);
      try {
        await expectKind(nowhere.createCashOut(cashOutRequest('refused')), 'unavailable');
      } finally {
        await nowhere.close();
      }
    });

    it('ambiguous: the payout is created, then the connection is dropped', async () => {
      sandbox.setFaults({ dropAfterCommitRate: 1, operations: ['createCashOut'] });
      await expectKind(client.createCashOut(cashOutRequest('dropped')), 'ambiguous');
      expect(sandbox.ledger().map((e) => e.orderId)).toEqual(['dropped']);
      // The lookup the engine will make finds it.
      expect((await client.getTransactionByOrderId('dropped')).orderId).toBe('dropped');
    });

    it('ambiguous: 5xx after the payout was created', async () => {
      sandbox.setFaults({ serverErrorAfterCommitRate: 1 });
      const error = await expectKind(
        client.createCashOut(cashOutRequest('after-commit')),
        'ambiguous',
      );
      expect(error.httpStatus).toBe(502);
      expect(sandbox.ledger()).toHaveLength(1);
    });

    it('ambiguous: 5xx before anything was created looks the same to us', async () => {
      sandbox.setFaults({ serverErrorRate: 1 });
      await expectKind(client.createCashOut(cashOutRequest('before-commit')), 'ambiguous');
      expect(sandbox.ledger()).toHaveLength(0);
    });

    it('ambiguous: no answer before the request time-out', async () => {
      sandbox.setFaults({ hangRate: 1 });
      const impatient = clientFor(sandbox.url, { requestTimeoutMs: 150 });
      try {
        const error = await expectKind(
          impatient.createCashOut(cashOutRequest('hung')),
          'ambiguous',
        );
        expect(error.message).toContain('UND_ERR_HEADERS_TIMEOUT');
      } finally {
        await impatient.close();
      }
    });

    it('wrong-endpoint: a base URL with a path the gateway does not have', async () => {
      const misrouted = clientFor(`${sandbox.url}/v2`);
      try {
        const error = await expectKind(
          misrouted.createCashOut(cashOutRequest('misrouted')),
          'wrong-endpoint',
        );
        expect(error.request).toBe('POST /v2/transaction/cashout');
        await expectKind(misrouted.getTransactionByOrderId('misrouted'), 'wrong-endpoint');
        expect(sandbox.ledger()).toHaveLength(0);
      } finally {
        await misrouted.close();
      }
    });

    it('refuses to look up an orderId a URL would fold into a path step', async () => {
      for (const orderId of ['.', '..', '']) {
        const error = await expectKind(client.getTransactionByOrderId(orderId), 'rejected');
        expect(error.message).toContain('not sent');
      }
      await expectKind(client.getTransactionByOrderId('a.b/c d'), 'not-found');
    });

    it('a create for a run already stopped never leaves, even on a kept-alive connection', async () => {
      await client.createCashOut(cashOutRequest('before-stop'));
      const stopped = AbortSignal.abort();
      const error = await expectKind(
        client.createCashOut(cashOutRequest('after-stop'), { signal: stopped }),
        'ambiguous',
      );
      expect(error.message).toContain('abandoned without an answer: the run is stopping');
      expect(sandbox.ledger().map((entry) => entry.orderId)).toEqual(['before-stop']);
    });

    it('ambiguous: the caller aborts mid-flight', async () => {
      let arrived: () => void = () => undefined;
      const atTheGateway = new Promise<void>((resolve) => (arrived = resolve));
      // A gateway that reads the create and never answers: in flight until the abort.
      const silent = await startLoopbackServer(() => arrived());
      const holding = clientFor(silent.url);
      try {
        const controller = new AbortController();
        const call = holding.createCashOut(cashOutRequest('aborted'), {
          signal: controller.signal,
        });
        await atTheGateway;
        controller.abort();
        await expectKind(call, 'ambiguous');
      } finally {
        await holding.close();
        await silent.close();
      }
    });
  });
});

describe('answers that do not match the interface', () => {
  let server: LoopbackServer;
  let client: GatewayClient;
  let reply: { status: number; body: string };

  beforeEach(async () => {
    server = await startLoopbackServer((_req, res) => {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body);
    });
    client = clientFor(server.url);
  });

  afterEach(async () => {
    await client.close();
    await server.close();
  });

  const goodCashOut = {
    transactionId: 7,
    orderId: 'o',
    gross: 100,
    tax: '0.50',
    liquid: '0.50',
    status: '0',
    createdAt: '2026-11-23T12:00:00.000Z',
    success: 'true',
    description: null,
  };

  it('reads a well-formed answer from a foreign server', async () => {
    reply = { status: 200, body: JSON.stringify(goodCashOut) };
    expect((await client.createCashOut(cashOutRequest('o', { value: 100 }))).status).toBe(
      'pending',
    );
  });

  it.each([
    ['status as a number', { ...goodCashOut, status: 0 }, 'status'],
    ['tax as a number', { ...goodCashOut, tax: 0.5 }, 'tax'],
    ['missing transactionId', { ...goodCashOut, transactionId: undefined }, 'transactionId'],
    ['createdAt not a time', { ...goodCashOut, createdAt: 'yesterday' }, 'createdAt'],
    ['success not a flag', { ...goodCashOut, success: 'maybe' }, 'success'],
  ])('a cash-out answer with %s is ambiguous and names the field', async (_name, body, field) => {
    reply = { status: 200, body: JSON.stringify(body) };
    const error = await expectKind(client.createCashOut(cashOutRequest('o')), 'ambiguous');
    expect(error.message).toContain(`${field}:`);
  });

  it('a cash-out answer about another orderId is ambiguous, never adopted', async () => {
    reply = { status: 200, body: JSON.stringify({ ...goodCashOut, orderId: 'someone-else' }) };
    const error = await expectKind(client.createCashOut(cashOutRequest('o')), 'ambiguous');
    expect(error.message).toContain('answered for orderId "someone-else", not "o"');
  });

  it('a cash-out answer with another amount is ambiguous', async () => {
    reply = { status: 200, body: JSON.stringify({ ...goodCashOut, gross: 99 }) };
    await expectKind(client.createCashOut(cashOutRequest('o', { value: 100 })), 'ambiguous');
  });

  const transaction = {
    transactionId: 7,
    orderId: 'o',
    object: 'cashout',
    status: 'paid',
    method: 'pix',
    value: 100,
    endToEndId: 'E1',
    processedAt: '2026-11-23T12:00:00.000',
  };

  it('a lookup answering for another orderId or id is ambiguous', async () => {
    reply = { status: 200, body: JSON.stringify(transaction) };
    expect((await client.getTransactionByOrderId('o')).status).toBe('paid');
    await expectKind(client.getTransactionByOrderId('p'), 'ambiguous');
    expect((await client.getTransactionById(7)).orderId).toBe('o');
    await expectKind(client.getTransactionById(8), 'ambiguous');
    reply = { status: 200, body: JSON.stringify({ ...transaction, orderId: null }) };
    await expectKind(client.getTransactionByOrderId('o'), 'ambiguous');
  });

  it('a createdAt without its zone is refused rather than read as local time', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({ ...goodCashOut, createdAt: '2026-11-23T12:00:00.000' }),
    };
    const error = await expectKind(client.createCashOut(cashOutRequest('o')), 'ambiguous');
    expect(error.message).toContain('createdAt:');
  });

  it('a 200 that is not JSON is ambiguous', async () => {
    reply = { status: 200, body: '<html>ok</html>' };
    const error = await expectKind(client.createCashOut(cashOutRequest('o')), 'ambiguous');
    expect(error.message).toContain('not JSON');
  });

  it('a balance with a field of the wrong type names it', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({ balance: '10', retention: 0, toAnticipate: 0, finalBalance: 0 }),
    };
    const error = await expectKind(client.getBalance(), 'ambiguous');
    expect(error.message).toContain('balance:');
  });

  it('a not-found answered with 422 and the words is still not-found', async () => {
    reply = { status: 422, body: JSON.stringify({ message: 'Transaction not found' }) };
    await expectKind(client.getTransactionByOrderId('o'), 'not-found');
  });

  it('an oversized answer is ambiguous, not a crash', async () => {
    reply = { status: 200, body: JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) }) };
    await expectKind(client.getBalance(), 'ambiguous');
  });
});

describe('a connection reset while a create is in flight', () => {
  it('is ambiguous, and the request reached the server exactly once (no retry by the transport)', async () => {
    let posts = 0;
    const server = createNetServer((socket) => {
      let buffer = '';
      socket.on('error', () => undefined);
      socket.on('data', (data: Buffer) => {
        buffer += data.toString('utf8');
        for (;;) {
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buffer.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < end + 4 + length) return;
          buffer = buffer.slice(end + 4 + length);
          if (head.startsWith('POST')) {
            posts++;
            socket.destroy();
            return;
          }
          const body = JSON.stringify({
            balance: 1,
            retention: 0,
            toAnticipate: 0,
            finalBalance: 1,
          });
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
          );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = clientFor(`http://127.0.0.1:${port}`, { connections: 1 });
    try {
      await client.getBalance(); // leaves a kept-alive connection for the POST to reuse
      await expectKind(client.createCashOut(cashOutRequest('reset')), 'ambiguous');
      expect(posts).toBe(1);
    } finally {
      await client.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
      });
    }
  });
});
