/**
 * A gateway that answers creates slowly on purpose: the headers at once, then the body
 * one byte every `gapMs`, each gap shorter than the client's time-out, so that only an
 * overall deadline ends the request. Balance and lookups answer at once. Loopback only;
 * every timer and connection ends with close().
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TrickleServer {
  url: string;
  /** Creates whose answer has begun, and how many body bytes each got before it ended. */
  creates: { orderId: string; bytes: number; ended: 'cut' | 'complete' | 'open' }[];
  /** Resolves once `n` creates have begun to trickle. */
  startedCreates(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startTrickleServer(gapMs: number): Promise<TrickleServer> {
  const timers = new Set<NodeJS.Timeout>();
  const creates: TrickleServer['creates'] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.endsWith('/transaction/get/balance')) {
        json(res, 200, { balance: 1e12, retention: 0, toAnticipate: 0, finalBalance: 1e12 });
        return;
      }
      if (req.url?.includes('/transaction/get/by/')) {
        json(res, 404, { message: 'Transaction not found' });
        return;
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        orderId: string;
        value: number;
      };
      const body = Buffer.from(
        JSON.stringify({
          transactionId: 1000 + creates.length,
          orderId: request.orderId,
          gross: request.value,
          tax: '0.00',
          liquid: String(request.value),
          status: '0',
          createdAt: new Date().toISOString(),
          success: 'true',
          description: null,
        }),
      );
      const entry = {
        orderId: request.orderId,
        bytes: 0,
        ended: 'open' as TrickleServer['creates'][number]['ended'],
      };
      creates.push(entry);
      for (const waiter of waiters.filter((w) => creates.length >= w.n)) waiter.resolve();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      const next = () => {
        if (entry.ended !== 'open') return;
        res.write(body.subarray(entry.bytes, entry.bytes + 1));
        entry.bytes++;
        if (entry.bytes >= body.length) {
          entry.ended = 'complete';
          res.end();
          return;
        }
        const timer = setTimeout(() => {
          timers.delete(timer);
          next();
        }, gapMs);
        timers.add(timer);
      };
      res.on('close', () => {
        if (entry.ended === 'open') entry.ended = 'cut';
      });
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    creates,
    startedCreates: (n) =>
      new Promise((resolve) => {
        if (creates.length >= n) resolve();
        else waiters.push({ n, resolve });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const entry of creates) if (entry.ended === 'open') entry.ended = 'cut';
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
