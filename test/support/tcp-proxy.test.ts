import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';

/** A client of `port` and everything it has read so far. */
async function connect(port: number): Promise<{ socket: Socket; read: () => string }> {
  const socket = createConnection({ host: '127.0.0.1', port });
  let read = '';
  socket.on('data', (chunk: Buffer) => (read += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, read: () => read };
}

/** Waits (bounded) until `condition` holds. */
const until = (what: string, condition: () => boolean) => waitFor(what, condition, 10_000);

describe('the TCP proxy a test cuts', () => {
  const echoes: Socket[] = [];
  let echo: ReturnType<typeof createServer>;
  let proxy: TcpProxy;
  let received = '';
  beforeEach(async () => {
    received = '';
    echo = createServer((socket) => {
      echoes.push(socket);
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        socket.write(chunk);
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await startTcpProxy((echo.address() as AddressInfo).port);
  });
  afterEach(async () => {
    await proxy.close();
    for (const socket of echoes.splice(0)) socket.destroy();
    await new Promise((resolve) => echo.close(resolve));
  });

  it('passes bytes both ways; cut, passes none on old or new connections; mended, closes the held ones and passes again', async () => {
    const before = await connect(proxy.port);
    before.socket.write('one');
    await until('the echo of one', () => before.read() === 'one');

    proxy.cut();
    before.socket.write('two');
    const during = await connect(proxy.port);
    during.socket.write('three');
    // Bytes written before the cut came back; a ping written after it is the state waited for.
    const pinged = await connect((echo.address() as AddressInfo).port);
    pinged.socket.write('ping');
    await until('the direct ping', () => pinged.read() === 'ping');
    expect(received).toBe('oneping');
    expect(before.read()).toBe('one');
    expect(during.read()).toBe('');
    expect(proxy.forwarded()).toBe('one'.length);

    const closed = Promise.all(
      [before, during].map(
        ({ socket }) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
      ),
    );
    proxy.mend();
    await closed;
    const after = await connect(proxy.port);
    after.socket.write('four');
    await until('the echo of four', () => after.read() === 'four');
    for (const { socket } of [after, pinged]) socket.destroy();
  });

  it('resumed after a cut, passes what was held both ways on the held connections, and new ones', async () => {
    const before = await connect(proxy.port);
    before.socket.write('one');
    await until('the echo of one', () => before.read() === 'one');
    proxy.cut();
    before.socket.write('two');
    const during = await connect(proxy.port);
    during.socket.write('three');
    proxy.resume();
    await until('the echo of two', () => before.read() === 'onetwo');
    await until('the echo of three', () => during.read() === 'three');
    const after = await connect(proxy.port);
    after.socket.write('four');
    await until('the echo of four', () => after.read() === 'four');
    expect(proxy.forwarded()).toBe('onetwothreefour'.length);
    for (const { socket } of [before, during, after]) socket.destroy();
  });

  it('cut only where the client sent what it names, passes on the other connections and new ones', async () => {
    const listening = await connect(proxy.port);
    listening.socket.write('LISTEN x');
    const other = await connect(proxy.port);
    other.socket.write('one');
    await until('both echoed', () => listening.read() === 'LISTEN x' && other.read() === 'one');
    proxy.cut(/LISTEN/);
    listening.socket.write('two');
    other.socket.write('three');
    const after = await connect(proxy.port);
    after.socket.write('four');
    await until('the echo of three', () => other.read() === 'onethree');
    await until('the echo of four', () => after.read() === 'four');
    expect(received).not.toContain('two');
    expect(listening.read()).toBe('LISTEN x');
    proxy.resume();
    await until('the echo of two', () => listening.read() === 'LISTEN xtwo');
    for (const { socket } of [listening, other, after]) socket.destroy();
  });
});
