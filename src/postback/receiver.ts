/**
 * The postback receiver (docs/operations.md, "Postbacks"): a small HTTP server whose only door is
 * POST /postback/<secret> (and GET /healthz for the daemon's health). The gateway's postback payload, kinds and signing are not
 * published, so nothing in it is trusted: it may only name a transaction (by
 * transactionId or orderId) whose poll is then brought forward. Any other path or
 * method gets 404, a body over 16 KiB gets 413, and a slow sender is cut off.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MAX_BODY_BYTES = 16 * 1024;
const PATH_PREFIX = '/postback/';

/** What a postback may name; either may be missing or wrong: it is only a hint. */
export interface PostbackHint {
  transactionId?: number;
  orderId?: string;
}

export interface PostbackReceiver {
  /** The address the receiver listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  close(): Promise<void>;
}

export interface PostbackReceiverOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  secret: string;
  /** Told of every postback that came through the secret door; answered once it is taken. */
  onPostback: (hint: PostbackHint) => void | Promise<void>;
  /** When given, GET /healthz answers it as JSON (no secret needed: it names no payout). */
  health?: () => Promise<unknown>;
}

export async function startPostbackReceiver(
  options: PostbackReceiverOptions,
): Promise<PostbackReceiver> {
  const door = Buffer.from(`${PATH_PREFIX}${options.secret}`);
  const isDoor = (path: string) => {
    const given = Buffer.from(path);
    return given.length === door.length && timingSafeEqual(given, door);
  };

  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    if (options.health && request.method === 'GET' && path === '/healthz') {
      options.health().then(
        (health) => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(health));
        },
        // Our side could not say it now (the journal busy): asked again, it may.
        () => answer(response, 503, 'try again later'),
      );
      return;
    }
    if (request.method !== 'POST' || !isDoor(path)) return answer(response, 404, 'not found');
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return answer(response, 413, 'too large', true);
    readBody(request).then(
      async (body) => {
        if (body === undefined) return answer(response, 413, 'too large', true);
        try {
          await options.onPostback(hintOf(body));
        } catch {
          // Our side could not take it now (the journal busy): the sender may try again,
          // and the poll schedule covers it if it does not.
          return answer(response, 503, 'try again later');
        }
        answer(response, 204);
      },
      () => answer(response, 400, 'unreadable', true),
    );
  });
  // A sender that never finishes must not hold a connection open.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(response: ServerResponse, status: number, text?: string, close = false): void {
  if (close) response.setHeader('connection', 'close');
  response.writeHead(status, text ? { 'content-type': 'text/plain' } : {});
  response.end(text);
}

/** The body as text, or undefined when it grows past the limit. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What the body names, read defensively: anything else in it is ignored. */
export function hintOf(body: string): PostbackHint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  const fields = parsed as Record<string, unknown>;
  const hint: PostbackHint = {};
  const id = fields['transactionId'];
  if (typeof id === 'number' && Number.isSafeInteger(id)) hint.transactionId = id;
  if (typeof id === 'string' && /^\d{1,15}$/.test(id)) hint.transactionId = Number(id);
  const orderId = fields['orderId'];
  if (typeof orderId === 'string' && orderId.length <= 200) hint.orderId = orderId;
  return hint;
}
