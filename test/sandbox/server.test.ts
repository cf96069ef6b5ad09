import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import {
  TOKEN,
  cashOutRequest,
  startLoopbackServer,
  topUp,
  type LoopbackServer,
} from '../support/gateway.js';

/** What `curl` would see: status and parsed JSON body. */
async function call(
  sandbox: Sandbox,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  authorization: string | null = TOKEN,
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== null) headers['authorization'] = authorization;
  const response = await request(sandbox.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    body: await response.body.json(),
    headers: response.headers,
  };
}

describe('sandbox gateway, as curl sees it', () => {
  let sandbox: Sandbox;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 30, initialBalanceCents: 100_000 });
  });
  afterEach(() => sandbox.close());

  it('listens on loopback', () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("answers a cash-out in the interface's shapes", async () => {
    const { status, body } = await call(
      sandbox,
      'POST',
      '/transaction/cashout',
      cashOutRequest('shape-1'),
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      transactionId: expect.any(Number),
      orderId: 'shape-1',
      gross: 1234,
      tax: expect.stringMatching(/^\d+\.\d+$/),
      liquid: expect.stringMatching(/^\d+\.\d+$/),
      status: '0',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      success: 'true',
      description: null,
    });
  });

  it('answers lookups by id and by orderId, with GET and POST', async () => {
    // Its own sandbox, whose payouts stay pending: the shared one settles them in 30 ms,
    // which a busy machine can take between two lookups.
    const slow = await startSandbox({ token: TOKEN, settleDelayMs: 600_000 });
    try {
      await lookUpBothWays(slow);
    } finally {
      await slow.close();
    }
  });

  async function lookUpBothWays(sandbox: Sandbox): Promise<void> {
    const created = await call(
      sandbox,
      'POST',
      '/transaction/cashout',
      cashOutRequest('look/up 1'),
    );
    for (const method of ['GET', 'POST'] as const) {
      const byId = await call(
        sandbox,
        method,
        `/transaction/get/by/id/${created.body.transactionId}`,
      );
      const byOrder = await call(
        sandbox,
        method,
        `/transaction/get/by/orderId/${encodeURIComponent('look/up 1')}`,
      );
      expect(byId.status).toBe(200);
      expect(byOrder.body).toEqual(byId.body);
      expect(byId.body).toEqual({
        transactionId: created.body.transactionId,
        orderId: 'look/up 1',
        object: 'cashout',
        status: 'pending',
        method: 'pix',
        value: 1234,
        endToEndId: expect.stringMatching(/^E/),
        processedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/),
      });
    }
  }

  it.each([
    ['value'],
    ['pixKeyType'],
    ['pixKey'],
    ['cpfCnpj'],
    ['person'],
    ['person.name'],
    ['person.email'],
    ['person.phone'],
    ['orderId'],
  ])('refuses a cash-out without %s: Validation Failed - %s is required', async (field) => {
    const body: any = cashOutRequest('missing');
    const [head, tail] = field.split('.') as [string, string | undefined];
    if (tail) delete body[head][tail];
    else delete body[head];
    const answer = await call(sandbox, 'POST', '/transaction/cashout', body);
    expect(answer).toMatchObject({
      status: 400,
      body: { message: `Validation Failed - ${field} is required` },
    });
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('refuses a field of the wrong type, naming it', async () => {
    const answer = await call(sandbox, 'POST', '/transaction/cashout', {
      ...cashOutRequest('typed'),
      pixKeyType: 9,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^Validation Failed - pixKeyType is invalid/);
  });

  it('refuses a body that is not JSON', async () => {
    const response = await request(`${sandbox.url}/transaction/cashout`, {
      method: 'POST',
      headers: { authorization: TOKEN },
      body: '{"value": 12',
    });
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toEqual({
      message: 'Validation Failed - body is not valid JSON',
    });
  });

  it.each([
    ['no Authorization', null],
    ['a wrong token', 'nope'],
    ['a wrong token behind a scheme', 'Bearer nope'],
  ])('answers 401 {message} to %s on every endpoint', async (_name, authorization) => {
    for (const [method, path] of [
      ['GET', '/transaction/get/balance'],
      ['POST', '/transaction/cashout'],
      ['POST', '/transaction/qrcode/cashin'],
      ['GET', '/transaction/get/by/id/1'],
      ['GET', '/transaction/get/by/orderId/x'],
      ['GET', '/sandbox/ledger'],
    ] as const) {
      const answer = await call(
        sandbox,
        method,
        path,
        method === 'POST' ? cashOutRequest('a') : undefined,
        authorization,
      );
      expect(answer, `${method} ${path}`).toMatchObject({
        status: 401,
        body: { message: 'Unauthorized' },
      });
    }
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('accepts the token bare or behind a scheme word', async () => {
    expect((await call(sandbox, 'GET', '/transaction/get/balance', undefined, TOKEN)).status).toBe(
      200,
    );
    expect(
      (await call(sandbox, 'GET', '/transaction/get/balance', undefined, `Bearer ${TOKEN}`)).status,
    ).toBe(200);
  });

  it('answers 404 Transaction not found for unknown transactions', async () => {
    expect(await call(sandbox, 'GET', '/transaction/get/by/id/99999')).toMatchObject({
      status: 404,
      body: { message: 'Transaction not found' },
    });
    expect((await call(sandbox, 'GET', '/transaction/get/by/orderId/nope')).body.message).toBe(
      'Transaction not found',
    );
  });

  it('debits the balance and refuses a payout it cannot cover', async () => {
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('a', { value: 60_000 }));
    expect((await call(sandbox, 'GET', '/transaction/get/balance')).body).toEqual({
      balance: 40_000,
      retention: 0,
      toAnticipate: 0,
      finalBalance: 40_000,
    });
    const refused = await call(
      sandbox,
      'POST',
      '/transaction/cashout',
      cashOutRequest('b', { value: 40_001 }),
    );
    expect(refused).toMatchObject({ status: 400, body: { message: 'Insufficient balance' } });
  });

  it.each([
    ['ana@example.com', ['paid']],
    ['fail@example.com', ['failed']],
    ['fail+7@example.com', ['failed']],
    ['cancel@example.com', ['canceled']],
    ['refund@example.com', ['paid', 'refund']],
  ])('settles a payout to %s through %j', async (pixKey, words) => {
    const created = await call(
      sandbox,
      'POST',
      '/transaction/cashout',
      cashOutRequest('s', { pixKeyType: 2, pixKey }),
    );
    const path = `/transaction/get/by/id/${created.body.transactionId}`;
    const seen: string[] = [];
    await vi.waitFor(
      async () => {
        const status: string = (await call(sandbox, 'GET', path)).body.status;
        if (status !== 'pending' && seen.at(-1) !== status) seen.push(status);
        expect(seen).toEqual(words);
      },
      { timeout: 3000, interval: 5 },
    );
  });

  it('pays a repeated orderId again: duplicates are visible in the ledger', async () => {
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('twice'));
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('twice'));
    const { body } = await call(sandbox, 'GET', '/sandbox/ledger');
    expect(body.transactions.map((t: { orderId: string }) => t.orderId)).toEqual([
      'twice',
      'twice',
    ]);
  });

  it('refuses unknown endpoints and oversized bodies', async () => {
    expect((await call(sandbox, 'GET', '/transaction/nothing')).status).toBe(404);
    // Its own sandbox, to see the 413 even when the connection is cut while we still write.
    const answered: number[] = [];
    const small = await startSandbox({ token: TOKEN, onRequest: (e) => answered.push(e.status) });
    try {
      await call(small, 'POST', '/transaction/cashout', { pad: 'x'.repeat(1024 * 1024) }).catch(
        () => undefined,
      );
      expect(answered).toEqual([413]);
      expect(small.ledger()).toHaveLength(0);
    } finally {
      await small.close();
    }
  });
});

describe('sandbox options', () => {
  const sandboxes: Sandbox[] = [];
  const receivers: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.close()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  async function open(options: Parameters<typeof startSandbox>[0]): Promise<Sandbox> {
    const sandbox = await startSandbox(options);
    sandboxes.push(sandbox);
    return sandbox;
  }

  it('answers a repeated orderId with the existing transaction when asked to deduplicate', async () => {
    const sandbox = await open({ token: TOKEN, dedupeOrderIds: true });
    const first = await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('once'));
    const second = await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('once'));
    expect(second.body.transactionId).toBe(first.body.transactionId);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('leaves cash-outs pending, or fails them, as told, whatever their Pix key', async () => {
    const sandbox = await open({ token: TOKEN, settleDelayMs: 1 });
    const statusOf = (orderId: string) =>
      sandbox.ledger().find((entry) => entry.orderId === orderId)?.status;
    sandbox.settleAs('pending');
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('held'));
    // The cash-in's settlement is timed after the held cash-out's would have been.
    await topUp(sandbox.url, 5_000);
    expect(statusOf('held')).toBe('pending');
    sandbox.settleAs('failed');
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('failing'));
    await vi.waitFor(() =>
      expect([statusOf('held'), statusOf('failing')]).toEqual(['failed', 'failed']),
    );
    sandbox.settleAs('by-key');
    await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('paying'));
    await vi.waitFor(() => expect(statusOf('paying')).toBe('paid'));
  });

  it('answers No active acquirer when cash-in is off', async () => {
    const sandbox = await open({ token: TOKEN, cashInEnabled: false });
    const answer = await call(sandbox, 'POST', '/transaction/qrcode/cashin', {});
    expect(answer).toMatchObject({ status: 400, body: { message: 'No active acquirer' } });
  });

  it('posts each status change to the postbackUrl', async () => {
    const received: any[] = [];
    const receiver = await startLoopbackServer((_req, res, body) => {
      received.push(JSON.parse(body));
      res.end();
    });
    receivers.push(receiver);
    const sandbox = await open({ token: TOKEN, settleDelayMs: 20 });
    const postbackUrl = `${receiver.url}/hook/secret`;
    await call(
      sandbox,
      'POST',
      '/transaction/cashout',
      cashOutRequest('pb', { pixKeyType: 2, pixKey: 'refund@example.com', postbackUrl }),
    );
    await vi.waitFor(() => expect(received.map((r) => r.status)).toEqual(['paid', 'refund']), {
      timeout: 3000,
      interval: 10,
    });
    expect(received[0]).toMatchObject({
      orderId: 'pb',
      object: 'cashout',
      method: 'pix',
      value: 1234,
    });
  });

  it('draws the same faults from the same seed', async () => {
    const faults = { seed: 42, rateLimitRate: 0.3, serverErrorRate: 0.3 };
    const statuses = async () => {
      const sandbox = await open({ token: TOKEN, faults });
      const seen: number[] = [];
      for (let i = 0; i < 30; i++)
        seen.push((await call(sandbox, 'GET', '/transaction/get/balance')).status);
      return seen;
    };
    const first = await statuses();
    expect(await statuses()).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 429, 500]));
  });

  it('applies faults only to the operations named', async () => {
    const sandbox = await open({
      token: TOKEN,
      faults: { serverErrorRate: 1, operations: ['createCashOut'] },
    });
    expect((await call(sandbox, 'GET', '/transaction/get/balance')).status).toBe(200);
    expect((await call(sandbox, 'POST', '/transaction/cashout', cashOutRequest('f'))).status).toBe(
      500,
    );
  });

  it('adds latency and sends Retry-After with a 429', async () => {
    const sandbox = await open({
      token: TOKEN,
      faults: { latencyMs: 60, rateLimitRate: 1, retryAfterSeconds: 3 },
    });
    const started = performance.now();
    const answer = await call(sandbox, 'GET', '/transaction/get/balance');
    // A lower bound only: a timer never fires early, and a busy machine only adds to it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('3');
  });

  it('closes promptly with a request hanging', async () => {
    let arrived: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (arrived = resolve));
    const sandbox = await open({
      token: TOKEN,
      faults: { hangRate: 1 },
      onRequest: ({ fault }) => fault === 'hang' && arrived(),
    });
    const hanging = call(sandbox, 'GET', '/transaction/get/balance').catch(
      (error: unknown) => error,
    );
    await held;
    await sandbox.close();
    expect(await hanging).toBeInstanceOf(Error);
  });
});
