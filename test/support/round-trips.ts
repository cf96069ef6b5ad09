/**
 * A loopback proxy in front of a PostgreSQL server that counts the round trips its
 * clients make: each simple query ('Q') and each Sync ('S') of the extended protocol
 * waits for the server's ReadyForQuery before the client goes on.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface RoundTripProxy {
  /** `url` with the proxy in the server's place. */
  url: string;
  /** Round trips since the last call (or since the proxy started). */
  take(): number;
  /**
   * From now on each message reaches the server `ms` later: a database across a network.
   * Only ever raised, so that messages never pass one another.
   */
  slow(ms: number): void;
  close(): Promise<void>;
}

export async function roundTripProxy(url: string): Promise<RoundTripProxy> {
  const server = new URL(url);
  let count = 0;
  let latencyMs = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(server.port), server.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    upstream.pipe(client);
    // The first message (startup) has no type byte; every later one is a byte and a length.
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      if (latencyMs > 0) setTimeout(() => upstream.write(chunk), latencyMs);
      else upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const head = started ? 1 : 0;
        if (pending.length < head + 4) break;
        const length = pending.readInt32BE(head);
        if (pending.length < head + length) break;
        if (started && (pending[0] === 0x51 || pending[0] === 0x53)) count += 1;
        pending = pending.subarray(head + length);
        started = true;
      }
    });
    client.on('close', () => upstream.end());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((proxy.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    take: () => {
      const taken = count;
      count = 0;
      return taken;
    },
    slow: (ms) => {
      latencyMs = Math.max(latencyMs, ms);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
