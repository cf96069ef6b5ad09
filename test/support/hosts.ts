/**
 * Hosts of one home on one journal on PostgreSQL, against one sandbox gateway: `payouts
 * watch` started as a child process per host name (`PAYOUTS_HOST_NAME`), each with its log
 * and its output gathered, and killed after each test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeEach } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, stopChild } from './cli.js';
import { useTempFolder } from './files.js';
import { TOKEN } from './gateway.js';
import { QUICK_TIMEOUTS, sandboxHome } from './home.js';
import { usePostgres } from './postgres.js';

export interface WatchHost {
  child: ChildProcess;
  /** What it has logged so far (stderr). */
  log(): string;
  /** What it has printed so far (stdout). */
  printed(): string;
}

export function useHostsOfOneHome(): {
  sandbox(): Sandbox;
  /** A home whose journal is the database `database`, and its hosts' environment. */
  home(
    database: string,
    settings?: Record<string, string>,
  ): Promise<{ home: string; env: Record<string, string> }>;
  /** `payouts watch` as the host `hostName` with `env`. */
  start(env: Record<string, string>, hostName: string): WatchHost;
} {
  const folder = useTempFolder();
  const postgres = usePostgres();
  let sandbox: Sandbox | undefined;
  const daemons: ChildProcess[] = [];
  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 200, faults: { latencyMs: 30 } });
  });
  afterEach(async () => {
    await Promise.all(daemons.splice(0).map((child) => stopChild(child, 'SIGKILL')));
    await sandbox?.close();
  });
  const current = (): Sandbox => {
    if (!sandbox) throw new Error('useHostsOfOneHome: no sandbox outside its tests');
    return sandbox;
  };
  return {
    sandbox: current,
    home: async (database, settings = {}) =>
      sandboxHome(folder(), current().url, {
        PAYOUTS_JOURNAL: await postgres.made(database),
        PAYOUTS_LOG_LEVEL: 'info',
        PAYOUTS_INBOX_SETTLE: '300ms',
        PAYOUTS_INBOX_RESCAN: '300ms',
        ...QUICK_TIMEOUTS,
        ...settings,
      }),
    start: (env, hostName) => {
      const child = spawn(process.execPath, [BIN, 'watch'], {
        env: cleanEnv({ ...env, PAYOUTS_HOST_NAME: hostName }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      let printed = '';
      child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
      child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      daemons.push(child);
      return { child, log: () => log, printed: () => printed };
    },
  };
}
