import { request } from 'node:http';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  hintOf,
  startPostbackReceiver,
  type PostbackHint,
  type PostbackReceiver,
} from '../../src/postback/receiver.js';
import { postbackSecret } from '../../src/postback/secret.js';
import { useTempFolder } from '../support/files.js';

const SECRET = 'a-test-secret-of-enough-length-0123456789';

describe('postback receiver over HTTP on loopback', () => {
  let receiver: PostbackReceiver;
  let hints: PostbackHint[];

  beforeEach(async () => {
    hints = [];
    receiver = await startPostbackReceiver({
      host: '127.0.0.1',
      port: 0,
      secret: SECRET,
      onPostback: (hint) => {
        hints.push(hint);
      },
    });
  });
  afterEach(() => receiver.close());

  const post = (path: string, body: string, method = 'POST') =>
    fetch(`${receiver.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(method === 'GET' ? {} : { body }),
    });

  it('takes a postback through the secret path and passes on only what it names', async () => {
    const answer = await post(
      `/postback/${SECRET}`,
      JSON.stringify({ transactionId: 1001, orderId: 'p-1', status: 'paid', value: 1 }),
    );
    expect(answer.status).toBe(204);
    expect(hints).toEqual([{ transactionId: 1001, orderId: 'p-1' }]);
  });

  it.each([
    ['/postback/wrong-secret-of-the-same-length-012345678', 'POST'],
    ['/postback/', 'POST'],
    ['/', 'POST'],
    ['/healthz', 'POST'],
    [`/postback/${SECRET}x`, 'POST'],
    [`/postback/${SECRET}`, 'GET'],
    [`/postback/${SECRET}`, 'PUT'],
  ])('answers 404 to %s (%s), and passes nothing on', async (path, method) => {
    const answer = await post(path, '{"transactionId":1}', method);
    expect(answer.status).toBe(404);
    expect(hints).toEqual([]);
  });

  it('refuses a body over 16 KiB with 413, declared or streamed', async () => {
    const big = JSON.stringify({ transactionId: 1, pad: 'x'.repeat(20_000) });
    expect((await post(`/postback/${SECRET}`, big)).status).toBe(413);
    // Streamed without a length: counted as it arrives.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${receiver.url}/postback/${SECRET}`);
      const sent = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST' },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      sent.on('error', reject);
      for (let i = 0; i < 40; i++) sent.write('x'.repeat(1024));
      sent.end();
    });
    expect(status).toBe(413);
    expect(hints).toEqual([]);
  });

  it('answers 503 when our side cannot take the postback now, and keeps serving', async () => {
    const failing = await startPostbackReceiver({
      host: '127.0.0.1',
      port: 0,
      secret: SECRET,
      onPostback: () => {
        throw new Error('database is locked');
      },
    });
    try {
      const answer = await fetch(`${failing.url}/postback/${SECRET}`, {
        method: 'POST',
        body: '{"transactionId":1}',
      });
      expect(answer.status).toBe(503);
      const again = await fetch(`${failing.url}/postback/${SECRET}`, {
        method: 'POST',
        body: '{}',
      });
      expect(again.status).toBe(503);
    } finally {
      await failing.close();
    }
  });

  it('a body that is not JSON names nothing, and is still answered', async () => {
    expect((await post(`/postback/${SECRET}`, 'not json')).status).toBe(204);
    expect(hints).toEqual([{}]);
  });
});

describe('hintOf', () => {
  it.each([
    ['{"transactionId":7}', { transactionId: 7 }],
    ['{"transactionId":"7"}', { transactionId: 7 }],
    ['{"orderId":"p-1"}', { orderId: 'p-1' }],
    ['{"transactionId":7.5}', {}],
    ['{"transactionId":"7; DROP"}', {}],
    ['{"transactionId":{"$gt":0}}', {}],
    ['[1,2]', {}],
    ['null', {}],
    ['', {}],
  ])('%s -> %j', (body, hint) => {
    expect(hintOf(body)).toEqual(hint);
  });
});

describe('postbackSecret', () => {
  const folder = useTempFolder();
  it('is made once, owner-only, and read back the same', () => {
    const first = postbackSecret(folder());
    expect(first).toMatch(/^[\w-]{43}$/);
    expect(postbackSecret(folder())).toBe(first);
    expect(statSync(join(folder(), 'postback.secret')).mode & 0o777).toBe(0o600);
  });
});
