// `payouts watch` processes of the several-hosts benchmarks (takeover, postgres-hosts), each
// a host by its name on one home, their logs' lines kept, and waits on a state they reach.
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/payouts.js', import.meta.url));

/** Polls `condition` every 50 ms until it holds, within `boundMs`, else throws naming `what`. */
export async function waitFor(what, condition, boundMs) {
  const until = performance.now() + boundMs;
  while (!(await condition())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

/** The environment of hosts of one home against `gatewayUrl`: ours alone, none inherited. */
export function hostsEnv({ gatewayUrl, token, home, ...settings }) {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUTS_'))),
    NO_COLOR: '1',
    PAYOUTS_BASE_URL: gatewayUrl,
    PAYOUTS_TOKEN: token,
    PAYOUTS_HOME: home,
    PAYOUTS_LOG_LEVEL: 'info',
    ...settings,
  };
}

/** `payouts watch` as `hostName` (undefined: the machine's), its log's lines kept. */
export function startHost(env, hostName) {
  const child = spawn(process.execPath, [BIN, 'watch'], {
    env: { ...env, ...(hostName !== undefined && { PAYOUTS_HOST_NAME: hostName }) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = [];
  let rest = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop();
    lines.push(...parts);
  });
  return { child, lines };
}
