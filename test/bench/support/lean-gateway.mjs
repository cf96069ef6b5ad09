// A lean stand-in for the gateway, for the engine and following benchmarks only: a bare
// node:http server that answers each cash-out as the contract says (pending, its orderId
// and value echoed) after the latency asked for; any transaction polled by id as a
// cash-out still pending, of 100 cents and no orderId (the payouts
// test/bench/support/old-payouts.mjs makes); any looked up by orderId, not found. It counts
// what it created and the polls it answered (`GET /sandbox/ledger`). The sandbox does much more a
// request (validation, a ledger, balances, settlement timers): on two cores its CPU is
// taken from the engine measured beside it, which a real gateway, elsewhere, is not.
// Run as its own process: `node lean-gateway.mjs LATENCY_MS TOKEN [MINUTES]`, which prints
// "listening on URL" and serves until killed, or MINUTES (15) have passed. Its ledger says
// how many cash-outs it created, and when the first and the last were asked for (epoch ms).
import { createServer } from 'node:http';

const latencyMs = Number(process.argv[2] ?? 0);
const token = process.argv[3] ?? '';
const minutes = Number(process.argv[4] ?? 15);
let created = 0;
let firstAt = null;
let lastAt = null;
let polls = 0;

const answer = (response, status, body) => {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
};

const server = createServer((req, response) => {
  if (req.headers.authorization !== token) return answer(response, 401, { message: 'token' });
  if (req.method === 'GET' && req.url === '/sandbox/ledger') {
    return answer(response, 200, { created, polls, firstAt, lastAt });
  }
  const polled = /^\/transaction\/get\/by\/id\/(\d+)$/.exec(req.url ?? '');
  if (req.method === 'GET' && polled) {
    polls++;
    const pending = { transactionId: Number(polled[1]), orderId: null, object: 'cashout' };
    const reply = () =>
      answer(response, 200, { ...pending, status: '0', method: 'pix', value: 100 });
    if (latencyMs > 0) setTimeout(reply, latencyMs);
    else reply();
    return;
  }
  // Asked before a batch's first send (checkFirstSends): it keeps no orderIds, and those were never sent.
  if (req.method === 'GET' && req.url?.startsWith('/transaction/get/by/orderId/')) {
    return answer(response, 404, { message: 'Transaction not found' });
  }
  if (req.method !== 'POST' || req.url !== '/transaction/cashout') {
    return answer(response, 404, { message: 'not found' });
  }
  lastAt = Date.now();
  firstAt ??= lastAt;
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const { orderId, value } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const transactionId = ++created;
    const reply = () =>
      answer(response, 200, {
        transactionId,
        orderId,
        gross: value,
        tax: '0',
        liquid: String(value),
        status: '0',
        createdAt: new Date().toISOString(),
        success: 'true',
        description: null,
      });
    if (latencyMs > 0) setTimeout(reply, latencyMs);
    else reply();
  });
});
server.keepAliveTimeout = 60_000;
// Bounded even if the benchmark that started it dies without killing it.
setTimeout(() => process.exit(0), minutes * 60_000).unref();
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
