import { describe, expect, it } from 'vitest';
import {
  classifyResponse,
  classifyTransportError,
  parseRetryAfter,
} from '../../src/gateway/errors.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const body = (message: string) => JSON.stringify({ message });

describe('classifyResponse', () => {
  it.each([
    [200, '{}', undefined],
    [204, '', undefined],
    [400, body('Validation Failed - value is required'), 'rejected'],
    [422, body('Validation Failed - pixKey is invalid'), 'rejected'],
    [400, body('No active acquirer'), 'rejected'],
    [400, body('Transaction not found'), 'not-found'],
    [404, body('Transaction not found'), 'not-found'],
    [422, body('transaction NOT found'), 'not-found'],
    // A 404 without the gateway's words could be a wrong base URL: never "not found".
    [404, '<html>Not Found</html>', 'wrong-endpoint'],
    [404, body('Cannot GET /x'), 'wrong-endpoint'],
    [405, '', 'wrong-endpoint'],
    [301, '', 'wrong-endpoint'],
    [302, '', 'wrong-endpoint'],
    // A gateway that deduplicates says the orderId exists: the earlier send landed.
    [409, '', 'ambiguous'],
    [400, body('Duplicate orderId'), 'ambiguous'],
    [422, body('orderId already exists'), 'ambiguous'],
    [400, body('Pedido já existe'), 'ambiguous'],
    [401, body('Unauthorized'), 'auth'],
    [403, '', 'auth'],
    [429, body('Too Many Requests'), 'rate-limited'],
    [408, '', 'ambiguous'],
    [500, body('Internal Server Error'), 'ambiguous'],
    [502, '<html>Bad Gateway</html>', 'ambiguous'],
    [503, '', 'ambiguous'],
    // A 5xx saying "not found" may still have created something on the way.
    [500, body('Transaction not found'), 'ambiguous'],
  ])('HTTP %i %s -> %s', (status, text, kind) => {
    expect(classifyResponse(status, text, undefined, NOW)?.kind).toBe(kind);
  });

  it("keeps the gateway's message and the status in the text", () => {
    expect(
      classifyResponse(400, body('Validation Failed - value is required'), undefined, NOW)?.message,
    ).toBe('Validation Failed - value is required (HTTP 400)');
    expect(classifyResponse(502, 'oops', undefined, NOW)?.message).toBe('HTTP 502 with no message');
  });

  it('reads Retry-After on a 429', () => {
    expect(classifyResponse(429, '', '7', NOW)?.retryAfterMs).toBe(7000);
    expect(classifyResponse(429, '', undefined, NOW)?.retryAfterMs).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['7', 7000],
    [' 120 ', 120_000],
    ['Mon, 23 Nov 2026 12:00:30 GMT', 30_000],
    ['Mon, 23 Nov 2026 11:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('%j -> %j ms', (header, expected) => {
    expect(parseRetryAfter(header, NOW)).toBe(expected);
  });
});

describe('classifyTransportError', () => {
  const withCode = (code: string, more: { cause?: unknown; syscall?: string } = {}) =>
    Object.assign(new Error(code), { code, ...more });
  it.each([
    [withCode('ECONNREFUSED', { syscall: 'connect' }), 'unavailable'],
    [withCode('ENOTFOUND', { syscall: 'getaddrinfo' }), 'unavailable'],
    [withCode('EAI_AGAIN', { syscall: 'getaddrinfo' }), 'unavailable'],
    [withCode('EHOSTUNREACH', { syscall: 'connect' }), 'unavailable'],
    [withCode('UND_ERR_CONNECT_TIMEOUT'), 'unavailable'],
    // On an open connection these prove nothing: the body may have been read.
    [withCode('EHOSTUNREACH', { syscall: 'read' }), 'ambiguous'],
    [withCode('ETIMEDOUT'), 'ambiguous'],
    [withCode('UND_ERR_SOCKET', { cause: withCode('ECONNREFUSED') }), 'ambiguous'],
    [withCode('UND_ERR_INVALID_ARG'), 'rejected'],
    [withCode('ECONNRESET'), 'ambiguous'],
    [withCode('UND_ERR_SOCKET', { cause: withCode('ECONNRESET') }), 'ambiguous'],
    [withCode('UND_ERR_SOCKET'), 'ambiguous'],
    [withCode('UND_ERR_HEADERS_TIMEOUT'), 'ambiguous'],
    [withCode('UND_ERR_BODY_TIMEOUT'), 'ambiguous'],
    [new DOMException('aborted', 'AbortError'), 'ambiguous'],
    ['a string', 'ambiguous'],
  ])('%s -> %s', (error, kind) => {
    expect(classifyTransportError(error).kind).toBe(kind);
  });
});
