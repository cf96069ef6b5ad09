/** A payouts home folder for a command run by a test, pointed at a sandbox. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TOKEN } from './gateway.js';

/** Short time-outs make short leases and grace periods, so a test need not wait long. */
export const QUICK_TIMEOUTS = {
  PAYOUTS_REQUEST_TIMEOUT: '1s',
  PAYOUTS_CONNECT_TIMEOUT: '1s',
  PAYOUTS_RESEND_GRACE: '1s',
};

/** `<folder>/home` with its inbox, and the environment of a run on it against `gatewayUrl`. */
export function sandboxHome(
  folder: string,
  gatewayUrl: string,
  settings: Record<string, string> = {},
): { home: string; env: Record<string, string> } {
  const home = join(folder, 'home');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  return {
    home,
    env: {
      PAYOUTS_BASE_URL: gatewayUrl,
      PAYOUTS_TOKEN: TOKEN,
      PAYOUTS_HOME: home,
      PAYOUTS_LOG_LEVEL: 'silent',
      ...settings,
    },
  };
}
