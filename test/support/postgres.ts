/**
 * A throwaway PostgreSQL cluster for the tests of a file: `initdb` and `pg_ctl` of the
 * machine (on PATH, or under /usr/lib/postgresql/<version>/bin), its data in a temp folder,
 * listening on a free loopback port and a socket in that folder only, fsync off (nothing
 * of it outlives the file). PostgreSQL refuses to run as root: as root, the cluster runs
 * as the `postgres` user, who owns the folder. `PAYOUTS_TEST_DATABASE_URL` names a server
 * to use instead; without either, the tests that need one skip, saying how to run them,
 * unless `PAYOUTS_REQUIRE_POSTGRES=1` (CI), where they fail.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** How long the cluster may take to accept connections once started, on a busy machine. */
const READY_BOUND_MS = 60_000;

/** Where initdb, pg_ctl and pg_isready are, if PostgreSQL is installed. */
export function postgresBinaries(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const installed = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => join('/usr/lib/postgresql', version, 'bin'))
    : [];
  return [...onPath, ...installed].find((folder) =>
    ['initdb', 'pg_ctl', 'pg_isready'].every((tool) => existsSync(join(folder, tool))),
  );
}

/** Why the PostgreSQL tests skip here, or undefined when they can run. */
export function postgresMissing(): string | undefined {
  if (process.env.PAYOUTS_TEST_DATABASE_URL || postgresBinaries()) return undefined;
  const why =
    'PostgreSQL is not installed: install postgresql-15 (Debian) or set PAYOUTS_TEST_DATABASE_URL to a server the tests may create databases on';
  if (process.env.PAYOUTS_REQUIRE_POSTGRES === '1') throw new Error(why);
  return why;
}

export interface Cluster {
  /** A URL of a database of the cluster (`postgres` when none is named). */
  url(database?: string): string;
  /** The cluster's data folder, or undefined for a server the environment named. */
  folder: string | undefined;
  /** The postmaster's process id, or undefined for a server the environment named. */
  readonly pid: number | undefined;
  /**
   * Restarts the server (`pg_ctl restart`, fast: open sessions are ended) on the same port
   * and settings, its data kept, and waits until it accepts connections again.
   */
  restart(): Promise<void>;
  stop(): void;
}

const asRoot = userInfo().uid === 0;
/** A PostgreSQL tool, run as the user who owns the cluster. */
function run(tool: string, args: readonly string[]): string {
  const command = asRoot ? 'runuser' : tool;
  const argv = asRoot ? ['-u', 'postgres', '--', tool, ...args] : [...args];
  return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `run`, without blocking the test's process meanwhile (its servers keep answering). */
async function runAsync(tool: string, args: readonly string[]): Promise<void> {
  const command = asRoot ? 'runuser' : tool;
  const argv = asRoot ? ['-u', 'postgres', '--', tool, ...args] : [...args];
  await promisify(execFile)(command, argv, { encoding: 'utf8' });
}

/** Waits until the server on `port` accepts connections (pg_isready), within READY_BOUND_MS. */
async function ready(bin: string, port: number): Promise<void> {
  const until = Date.now() + READY_BOUND_MS;
  for (;;) {
    try {
      await runAsync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '5']);
      return;
    } catch (error) {
      if (Date.now() >= until) throw error;
    }
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return address.port;
}

/** Starts a cluster and waits until it accepts connections (pg_isready), within a bound. */
export async function startCluster(): Promise<Cluster> {
  const given = process.env.PAYOUTS_TEST_DATABASE_URL;
  if (given) {
    return {
      url: (database = 'postgres') =>
        Object.assign(new URL(given), { pathname: `/${database}` }).href,
      folder: undefined,
      pid: undefined,
      restart: () => Promise.reject(new Error('cannot restart a server the environment named')),
      stop: () => undefined,
    };
  }
  const bin = postgresBinaries();
  if (!bin) throw new Error(postgresMissing());
  const folder = mkdtempSync(join(tmpdir(), 'payouts-postgres-'));
  if (asRoot) {
    const postgres = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    chownSync(folder, postgres, postgres);
  }
  const data = join(folder, 'data');
  const port = await freePort();
  try {
    run(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    const settings = [
      `-c listen_addresses=127.0.0.1`,
      `-c port=${port}`,
      `-c unix_socket_directories=${folder}`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
    ].join(' ');
    run(join(bin, 'pg_ctl'), [
      'start',
      '-D',
      data,
      '-l',
      join(folder, 'log'),
      '-o',
      settings,
      '-w',
      '-t',
      '60',
    ]);
    await ready(bin, port);
  } catch (error) {
    const log = existsSync(join(folder, 'log')) ? readFileSync(join(folder, 'log'), 'utf8') : '';
    stopAt(bin, data);
    rmSync(folder, { recursive: true, force: true });
    throw new Error(`the test cluster did not start: ${String(error)}\n${log}`);
  }
  // The first line of postmaster.pid is the postmaster's pid.
  const pidNow = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let pid = pidNow();
  return {
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    folder,
    get pid() {
      return pid;
    },
    restart: async () => {
      // pg_ctl restart starts the server with the options it was started with (postmaster.opts).
      const args = ['restart', '-D', data, '-l', join(folder, 'log'), '-m', 'fast', '-w'];
      await runAsync(join(bin, 'pg_ctl'), [...args, '-t', '60']);
      pid = pidNow();
      await ready(bin, port);
    },
    stop: () => {
      stopAt(bin, data);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Stops the cluster of `data` (immediate: nothing of it is kept), if it runs. */
function stopAt(bin: string, data: string): void {
  if (!existsSync(join(data, 'postmaster.pid'))) return;
  run(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '60']);
}

/** A new, empty database of the cluster (one of the same name dropped first): its URL. */
export async function freshDatabase(cluster: Cluster, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: cluster.url() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${database}`);
    await client.query(`CREATE DATABASE ${database}`);
  } finally {
    await client.end();
  }
  return cluster.url(database);
}

/**
 * A cluster for this test file, started before its tests and stopped after them, and
 * databases of each test's own: `url(name)` names one, `made(name)` makes it (once).
 */
export function usePostgres(): {
  cluster: () => Cluster;
  url: (name: string) => string;
  made: (name: string) => Promise<string>;
} {
  let cluster: Cluster | undefined;
  let test = 0;
  const made = new Set<string>();
  beforeAll(async () => {
    cluster = await startCluster();
  }, READY_BOUND_MS + 30_000);
  afterAll(() => {
    cluster?.stop();
  });
  beforeEach(() => {
    test += 1;
  });
  const current = (): Cluster => {
    if (!cluster) throw new Error('usePostgres: no cluster outside its tests');
    return cluster;
  };
  const nameOf = (name: string): string =>
    `t${test}_${name.replace(/[^a-z0-9]/gi, '_')}`.toLowerCase();
  return {
    cluster: current,
    url: (name) => current().url(nameOf(name)),
    made: async (name) => {
      const database = nameOf(name);
      if (!made.has(database)) {
        await freshDatabase(current(), database);
        made.add(database);
      }
      return current().url(database);
    },
  };
}
