/** Shared set-up for tests that talk to the sandbox over real HTTP on loopback. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
} from '../../src/gateway/client.js';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import type { Sandbox } from '../../src/sandbox/server.js';

export const TOKEN = 'test-token-5f2c';

export function clientFor(
  baseUrl: string,
  overrides: Partial<GatewayClientOptions> = {},
): GatewayClient {
  return createGatewayClient({
    baseUrl,
    token: TOKEN,
    authScheme: '',
    getTransactionMethod: 'GET',
    connectTimeoutMs: 2000,
    requestTimeoutMs: 2000,
    connections: 8,
    ...overrides,
  });
}

export function cashOutRequest(
  orderId: string,
  overrides: Partial<CashOutRequest> = {},
): CashOutRequest {
  return {
    value: 1234,
    pixKeyType: 0,
    pixKey: '52998224725',
    cpfCnpj: '52998224725',
    person: { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' },
    orderId,
    ...overrides,
  };
}

export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

/** A plain HTTP server on 127.0.0.1 and a free port, for answers no honest gateway gives. */
export async function startLoopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port that was free a moment ago and has nothing listening on it now. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** orderId -> how many transactions the sandbox created for it: the gateway's truth. */
export function ledgerCounts(sandbox: Sandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of sandbox.ledger()) {
    counts.set(entry.orderId ?? '', (counts.get(entry.orderId ?? '') ?? 0) + 1);
  }
  return counts;
}

/** Pix key and amount -> how many cash-outs the sandbox created paying it. */
export function paidByKey(sandbox: Sandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of sandbox.ledger()) {
    if (entry.object !== 'cashout') continue;
    const key = `${entry.pixKey ?? ''} ${entry.valueCents}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Adds to the balance as a payer would: a cash-in, paid; waits until the balance shows it. */
export async function topUp(baseUrl: string, cents: number): Promise<void> {
  const gateway = clientFor(baseUrl);
  try {
    const before = (await gateway.getBalance()).balance;
    await gateway.createCashIn({
      payerName: 'Empresa',
      payerDocument: '11222333000181',
      payerEmail: 'financeiro@example.com',
      payerPhone: '+5511987654321',
      productName: 'aporte',
      productDescription: 'aporte de saldo',
      value: cents,
    });
    for (let wait = 0; (await gateway.getBalance()).balance < before + cents; wait++) {
      if (wait > 500) throw new Error('the top-up never reached the balance');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await gateway.close();
  }
}
