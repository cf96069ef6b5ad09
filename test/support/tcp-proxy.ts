/**
 * A TCP proxy on 127.0.0.1 and a free port in front of one loopback server, which a test
 * cuts and mends: a host that reaches PostgreSQL or the gateway only through it is cut
 * off from that server while the test says so. Run as root, the issue allows a network
 * namespace instead (`ip netns`); the proxy cuts the same way without root: bytes stop
 * in both directions and new connections are accepted and never answered, as a network
 * that drops packets leaves them.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Bytes passed so far from clients to the server: a host's traffic through it. */
  forwarded(): number;
  /** From now on nothing passes, either way, on open connections or new ones. */
  cut(): void;
  /**
   * Passes again. The connections held through the cut are closed, as their peers'
   * time-outs would end them; new ones reach the server.
   */
  mend(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let cut = false;
  let forwarded = 0;
  const open = new Set<Socket>();
  const held = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    // A reset by either side is the end of that connection, nothing to report.
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      open.delete(socket);
      held.delete(socket);
    });
  };
  const hold = (socket: Socket) => {
    socket.unpipe();
    socket.pause();
    held.add(socket);
  };
  const server = createServer((client) => {
    track(client);
    if (cut) return hold(client);
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    track(upstream);
    client.on('data', (chunk: Buffer) => (forwarded += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    forwarded: () => forwarded,
    cut: () => {
      cut = true;
      for (const socket of open) hold(socket);
    },
    mend: () => {
      cut = false;
      for (const socket of held) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
