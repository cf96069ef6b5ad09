import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresMissing, startCluster } from './postgres.js';

const absent = postgresMissing();
const asRoot = userInfo().uid === 0;

/** The user id a process runs as, from /proc. */
const uidOf = (pid: number): number =>
  Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
/** Whether a process runs (a zombie nobody reaped yet has ended). */
const running = (pid: number): boolean =>
  existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

(absent ? describe.skip : describe)(`the test cluster${absent ? ` (${absent})` : ''}`, () => {
  it('listens on loopback only with fsync off, as postgres when run as root; stopped, it leaves no process and no folder', async () => {
    const cluster = await startCluster();
    const { pid, folder } = cluster;
    try {
      const client = new pg.Client({ connectionString: cluster.url() });
      await client.connect();
      try {
        const setting = async (name: string) =>
          (await client.query<{ setting: string }>(`SELECT current_setting($1) AS setting`, [name]))
            .rows[0]?.setting;
        expect(await setting('listen_addresses')).toBe('127.0.0.1');
        expect(await setting('fsync')).toBe('off');
        expect(await setting('unix_socket_directories')).toBe(folder);
        expect(await setting('server_version_num')).toMatch(/^\d{6}$/);
      } finally {
        await client.end();
      }
      expect(new URL(cluster.url('x')).hostname).toBe('127.0.0.1');
      if (pid !== undefined && asRoot) {
        expect(uidOf(pid)).toBe(
          Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
        );
      }
    } finally {
      cluster.stop();
    }
    if (pid !== undefined) expect(running(pid)).toBe(false);
    if (folder !== undefined) expect(existsSync(folder)).toBe(false);
  });

  it('restarted, it listens on the same port with its data kept, a new postmaster, the old sessions ended', async () => {
    const cluster = await startCluster();
    try {
      if (cluster.pid === undefined) return;
      const before = cluster.pid;
      const old = new pg.Client({ connectionString: cluster.url() });
      await old.connect();
      const ended = new Promise<void>((resolve) => old.on('error', () => resolve()));
      await old.query('CREATE TABLE kept (n integer); INSERT INTO kept VALUES (7)');
      await cluster.restart();
      await ended;
      await old.end();
      expect(running(before)).toBe(false);
      expect(cluster.pid).not.toBe(before);
      const client = new pg.Client({ connectionString: cluster.url() });
      await client.connect();
      try {
        expect((await client.query<{ n: number }>('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
      } finally {
        await client.end();
      }
    } finally {
      cluster.stop();
    }
  });
});
