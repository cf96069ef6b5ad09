/** A payouts home folder for a command run by a test, pointed at a sandbox. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { useTempFolder } from './files.js';
import { TOKEN } from './gateway.js';

/** Short time-outs make short leases and grace periods, so a test need not wait long. */
export const QUICK_TIMEOUTS = {
  PAYOUTS_REQUEST_TIMEOUT: '1s',
  PAYOUTS_CONNECT_TIMEOUT: '1s',
  PAYOUTS_RESEND_GRACE: '1s',
  // On PostgreSQL the resend grace grows by twice this; one machine's clock is the database's.
  PAYOUTS_MAX_CLOCK_SKEW: '3s',
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

/**
 * For each test, a sandbox that leaves its payouts pending and a home on it whose runs
 * take files at once and do not follow: made before the test, closed after it.
 */
export function usePendingSandboxHome(): () => {
  sandbox: Sandbox;
  home: string;
  env: Record<string, string>;
} {
  const folder = useTempFolder();
  let made: { sandbox: Sandbox; home: string; env: Record<string, string> } | undefined;
  beforeEach(async () => {
    const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    made = {
      sandbox,
      ...sandboxHome(folder(), sandbox.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
      }),
    };
  });
  afterEach(async () => {
    await made?.sandbox.close();
    made = undefined;
  });
  return () => {
    if (!made) throw new Error('usePendingSandboxHome: no home outside a test');
    return made;
  };
}
