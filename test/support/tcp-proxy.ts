/**
 * A TCP proxy on 127.0.0.1 and a free port in front of one loopback server, which a test
 * cuts and mends: a host that reaches PostgreSQL or the gateway only through it is cut
 * off from that server while the test says so. Run as root, the issue allows a network
 * namespace instead (`ip netns`); the proxy cuts the same way without root: bytes stop
 * in both directions and new connections are accepted and never answered, as a network
 * that drops packets leaves them, and neither end hears of it.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Bytes passed so far from clients to the server: a host's traffic through it. */
  forwarded(): number;
  /**
   * From now on nothing passes, either way, on open connections or new ones. With `only`,
   * nothing passes on the open connections whose client has sent bytes matching it (a
   * `LISTEN`), and everything else passes still.
   */
  cut(only?: RegExp): void;
  /**
   * Passes again. The connections held through the cut are closed, as their peers'
   * time-outs would end them; new ones reach the server.
   */
  mend(): void;
  /**
   * Passes again, on the connections held through the cut too, with what was held
   * meanwhile: a network back before either end's TCP gave up.
   */
  resume(): void;
  close(): Promise<void>;
}

/** What a connection's client sent is kept this far, enough for a statement's first words. */
const SENT_KEPT = 64 * 1024;

interface Link {
  client: Socket;
  upstream: Socket | undefined;
  sent: string;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let cut = false;
  let forwarded = 0;
  const open = new Set<Socket>();
  const links = new Set<Link>();
  const held = new Set<Link>();
  const track = (socket: Socket) => {
    open.add(socket);
    // A reset by either side is the end of that connection, nothing to report.
    socket.on('error', () => socket.destroy());
    socket.once('close', () => open.delete(socket));
  };
  const hold = (link: Link) => {
    for (const socket of [link.client, link.upstream]) {
      socket?.unpipe();
      socket?.pause();
    }
    held.add(link);
  };
  const pass = (link: Link) => {
    held.delete(link);
    const { client } = link;
    // Held before it reached the server: it does now.
    const upstream = (link.upstream ??= createConnection({ host: '127.0.0.1', port: targetPort }));
    if (!open.has(upstream)) {
      track(upstream);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = createServer((client) => {
    track(client);
    const link: Link = { client, upstream: undefined, sent: '' };
    links.add(link);
    client.once('close', () => {
      links.delete(link);
      held.delete(link);
    });
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.length;
      if (link.sent.length < SENT_KEPT) link.sent += chunk.toString('latin1');
    });
    if (cut) hold(link);
    else pass(link);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    forwarded: () => forwarded,
    cut: (only) => {
      cut ||= only === undefined;
      for (const link of links) if (only === undefined || only.test(link.sent)) hold(link);
    },
    mend: () => {
      cut = false;
      for (const { client } of held) client.destroy();
    },
    resume: () => {
      cut = false;
      for (const link of [...held]) pass(link);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
