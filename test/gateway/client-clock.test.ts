import { afterEach, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../src/gateway/client.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { TOKEN, startLoopbackServer, type LoopbackServer } from '../support/gateway.js';

describe('the gateway client reads time from the clock it is given', () => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a Retry-After given as a date is a wait from our clock, not the machine time', async () => {
    const retryAt = 'Wed, 21 Oct 2015 07:28:00 GMT';
    server = await startLoopbackServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAt });
      res.end(JSON.stringify({ message: 'Too Many Requests' }));
    });
    const client = createGatewayClient(
      {
        baseUrl: server.url,
        token: TOKEN,
        authScheme: '',
        getTransactionMethod: 'GET',
        connectTimeoutMs: 2000,
        requestTimeoutMs: 2000,
        connections: 1,
      },
      { now: () => Date.parse(retryAt) - 90_000 },
    );
    try {
      const error = await client.getBalance().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ kind: 'rate-limited', retryAfterMs: 90_000 });
    } finally {
      await client.close();
    }
  });
});
