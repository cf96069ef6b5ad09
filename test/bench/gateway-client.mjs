// Cost of our client per request (contract checks, classification) against a bare undici
// request loop, both creating cash-outs on the same in-process sandbox with no latency.
// Prints one JSON line; the ratio is what to watch, the absolute numbers follow the machine.
import { Pool } from 'undici';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { startSandbox } from '../../dist/sandbox/server.js';

const TOKEN = 'bench-token';
const CONCURRENCY = 16;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

function body(orderId) {
  return {
    value: 100,
    pixKeyType: 2,
    pixKey: 'bench@example.com',
    cpfCnpj: '52998224725',
    person: { name: 'Bench', email: 'bench@example.com', phone: '+5511987654321' },
    orderId,
  };
}

async function drive(label, send) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) await send(`${label}-${next++}`);
    }),
  );
  return REQUESTS / ((performance.now() - started) / 1000);
}

const sandbox = await startSandbox({
  token: TOKEN,
  settleDelayMs: 3_600_000,
  initialBalanceCents: 1e12,
});
try {
  const pool = new Pool(sandbox.url, { connections: CONCURRENCY });
  const bare = await drive('bare', async (orderId) => {
    const response = await pool.request({
      method: 'POST',
      path: '/transaction/cashout',
      headers: { authorization: TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify(body(orderId)),
    });
    await response.body.json();
  });
  await pool.close();

  const client = createGatewayClient({
    baseUrl: sandbox.url,
    token: TOKEN,
    authScheme: '',
    getTransactionMethod: 'GET',
    connectTimeoutMs: 5000,
    requestTimeoutMs: 30_000,
    connections: CONCURRENCY,
  });
  const ours = await drive('client', (orderId) => client.createCashOut(body(orderId)));
  await client.close();

  const created = sandbox.ledger().length;
  console.log(
    JSON.stringify({
      bench: 'gateway-client',
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      bareUndiciPerSec: Math.round(bare),
      clientPerSec: Math.round(ours),
      clientToBareRatio: Number((ours / bare).toFixed(3)),
      ledgerEntries: created,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
  if (created !== 2 * REQUESTS)
    throw new Error(`expected ${2 * REQUESTS} ledger entries, got ${created}`);
} finally {
  await sandbox.close();
}
