/**
 * A cron `payouts run` beside `payouts watch` (issue 35): the daemon holding the home is
 * named as such, and one that has held it for more than an hour is a setup to mend (exit
 * 1, with the fix), not "run again later" for ever.
 */
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { homeLockName } from '../../src/inbox/lock.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { JOURNAL_STORES } from '../support/journal-stores.js';
import { TOKEN } from '../support/gateway.js';

const HOUR = 60 * 60 * 1000;

describe.each(JOURNAL_STORES)('a cron run beside the daemon, the journal in %s', (_, store) => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  /**
   * A home whose lock is held by a running process of this host (this one, under another
   * name) as `command`, taken `heldForMs` ago and renewed now.
   */
  async function heldHome(command: 'run' | 'watch', heldForMs: number) {
    sandbox = await startSandbox({ token: TOKEN });
    const { home, env } = store.home(folder(), sandbox.url);
    expect((await runCli(['run'], { env })).code).toBe(0);
    const me = { holder: 'the other one', host: hostname(), pid: process.pid, command };
    const lock = homeLockName(me.host, store.hostsAtOnce);
    const then = await store.open(home, { now: () => Date.now() - heldForMs });
    try {
      expect(await then.takeLock(lock, me, 30_000, () => true)).toEqual({ taken: true });
    } finally {
      await then.close();
    }
    const now = await store.open(home);
    try {
      expect(await now.renewLock(lock, me.holder)).toBe(true);
    } finally {
      await now.close();
    }
    return env;
  }

  it('the daemon holding the home for more than an hour: exit 1, naming it and the fix, even with --quiet', async () => {
    const env = await heldHome('watch', 2 * HOUR);
    const beside = await runCli(['run', '--quiet'], { env });
    expect(beside.code).toBe(1);
    expect(beside.stderr).toMatch(
      /^payouts run: another payouts process \(the daemon, payouts watch, pid \d+ on .*, since .*\) has worked on this home folder for 2h 00m: a cron payouts run never works beside the daemon\. Use one of the two: remove the cron line, or stop the daemon\. Nothing done\.$/m,
    );
  });

  it('the daemon holding the home for less than an hour: exit 3, named as the daemon', async () => {
    const env = await heldHome('watch', 5 * 60 * 1000);
    const beside = await runCli(['run', '--quiet'], { env });
    expect(beside.code).toBe(3);
    expect(beside.stderr).toMatch(
      /^payouts run: another payouts process \(the daemon, payouts watch, pid \d+ on .*\) is still working on this home folder: nothing done\. Run again later, or use --wait\.$/m,
    );
  });

  it('another run working for more than an hour: exit 3, run again later', async () => {
    const env = await heldHome('run', 2 * HOUR);
    const beside = await runCli(['run', '--quiet'], { env });
    expect(beside.code).toBe(3);
    expect(beside.stderr).toMatch(
      /^payouts run: another payouts process \(payouts run, pid \d+ on .*\) is still working on this home folder: nothing done\. Run again later, or use --wait\.$/m,
    );
  });

  it('a holder is judged by its pid on its own host only (hostName); another host waits for it, or works beside it', async () => {
    sandbox = await startSandbox({ token: TOKEN });
    const { home, env } = store.home(folder(), sandbox.url);
    expect((await runCli(['run'], { env })).code).toBe(0);
    // A run on host pay-2 that died just now: its heartbeat is fresh, its pid gone.
    const dead = spawnSync('true').pid;
    const holder = { holder: 'the dead run', host: 'pay-2', pid: dead, command: 'run' };
    const journal = await store.open(home);
    try {
      const lock = homeLockName(holder.host, store.hostsAtOnce);
      expect(await journal.takeLock(lock, holder, 30_000, () => true)).toEqual({ taken: true });
    } finally {
      await journal.close();
    }
    const elsewhere = await runCli(['run'], { env: { ...env, PAYOUTS_HOST_NAME: 'pay-3' } });
    if (store.hostsAtOnce) expect(elsewhere.code, elsewhere.stderr).toBe(0);
    else {
      // One host works at a time: the holder, of another host, is judged by its heartbeat.
      expect(elsewhere.code).toBe(3);
      expect(elsewhere.stderr).toContain(`(payouts run, pid ${dead} on pay-2, since `);
    }
    const sameHost = await runCli(['run'], { env: { ...env, PAYOUTS_HOST_NAME: 'pay-2' } });
    expect(sameHost.code, sameHost.stderr).toBe(0);
  });
});
