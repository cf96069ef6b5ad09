// A gateway of the benchmarks as a process of its own, as a real gateway would be elsewhere:
// the sandbox (`payouts sandbox`) or the lean stand-in (lean-gateway.mjs), with its ledger's
// size and the CPU time it used.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { cpuMicrosOf } from './postgres.mjs';

export const TOKEN = 'bench-token';

async function ledgerOf(url) {
  const response = await request(`${url}/sandbox/ledger`, { headers: { authorization: TOKEN } });
  return response.body.json();
}

/**
 * The gateway as a child process (`payouts sandbox` whose payouts settle after `settleDelay`,
 * with `faults` its fault flags, or with `lean` the stand-in); its address read from its
 * first line.
 */
export async function startGatewayProcess(
  latencyMs,
  { lean: leanGateway = false, settleDelay = '1h', faults = [] } = {},
) {
  const bin = fileURLToPath(new URL('../../../bin/payouts.js', import.meta.url));
  const lean = fileURLToPath(new URL('./lean-gateway.mjs', import.meta.url));
  const args = leanGateway
    ? [lean, String(latencyMs), TOKEN]
    : [
        bin,
        'sandbox',
        '--port',
        '0',
        '--latency',
        `${latencyMs}ms`,
        '--settle-delay',
        settleDelay,
        '--balance',
        '1000000000000',
        ...faults,
      ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PAYOUTS_TOKEN: TOKEN, PAYOUTS_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  while (!/listening on (\S+)/.test(output)) {
    const [chunk] = await Promise.race([
      once(child.stdout, 'data'),
      once(child, 'exit').then(() => {
        throw new Error('sandbox exited');
      }),
    ]);
    output += chunk;
  }
  const url = /listening on (\S+)/.exec(output)[1];
  return {
    url,
    async ledgerSize() {
      const ledger = await ledgerOf(url);
      return leanGateway ? ledger.created : ledger.transactions.length;
    },
    /** The sandbox's transactions, each with its orderId. */
    transactions: async () => (await ledgerOf(url)).transactions,
    pid: child.pid,
    /** CPU time the gateway's process has used, in µs (Linux: /proc, in clock ticks). */
    cpuMicros: () => cpuMicrosOf(child.pid),
    close: () => child.kill('SIGTERM'),
  };
}
