/**
 * A home folder belongs to the user that runs payouts: a command run as another user
 * (root, say) would leave what it writes to that user, and the owner's next run would fail
 * on it. Such a command is refused, with both users and what fixes it; doctor says the same.
 * Needs root, to give a folder to another user (`nobody`).
 */
import { chmodSync, chownSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { IS_ROOT, NOBODY, nobodyReachesCheckout } from '../support/nobody.js';

describe.runIf(IS_ROOT)('a home folder that belongs to another user', { timeout: 30_000 }, () => {
  const folder = useTempFolder();

  /** A home of `nobody`'s, reachable by it, with a file waiting in its inbox. */
  const nobodysHome = () => {
    chmodSync(folder(), 0o755);
    const home = join(folder(), 'home');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFile(join(home, 'inbox'), 'payroll.csv', 'Nome;CPF;Chave Pix;Valor\n');
    for (const path of [home, join(home, 'inbox'), join(home, 'inbox', 'payroll.csv')])
      chownSync(path, NOBODY.uid, NOBODY.gid);
    return home;
  };

  it.each([
    [['run', '--sandbox'], 'run'],
    [['watch', '--sandbox'], 'watch'],
    [['reconcile', '--days', '3', '--sandbox'], 'reconcile'],
  ])(
    '%j as root: exit 1, naming both users and the runuser that fixes it; nothing written',
    async (args, verb) => {
      const home = nobodysHome();
      const result = await runCli(args, { env: { PAYOUTS_HOME: home } });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        `payouts ${verb}: the home folder ${home} belongs to nobody (uid 65534), but this command runs as root (uid 0): what it wrote would be root's, and nobody's next run would fail on it. Run it as nobody: runuser -u nobody -- payouts ${verb} … (or, for root to own the home, chown -R root: ${home}). Nothing was done.`,
      );
      expect(readdirSync(home)).toEqual(['inbox']);
    },
  );

  it('doctor as root: the home check fails with the same', async () => {
    const home = nobodysHome();
    const result = await runCli(['doctor', '--sandbox'], { env: { PAYOUTS_HOME: home } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL {2}home: the home folder .* belongs to nobody \(uid 65534\), but this command runs as root \(uid 0\): .*runuser -u nobody -- payouts doctor/m,
    );
  });

  // As root in a checkout `nobody` cannot reach, nobody's run could not even start.
  it.skipIf(!nobodyReachesCheckout())(
    'what root left in the home: the owner is told to chown it back, not to join a group',
    async () => {
      const home = nobodysHome();
      const left = join(home, 'processing');
      mkdirSync(left); // root's, as a run as root leaves it
      const result = await runCli(['run', '--sandbox'], {
        env: { PAYOUTS_HOME: home, PAYOUTS_SHARED_GROUP: 'nogroup', PAYOUTS_LOG_LEVEL: 'silent' },
        user: NOBODY,
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        `${left} belongs to root (uid 0), not to nobody (uid 65534), who runs this command: a command run as root left it. As root: chown -R nobody: ${home}`,
      );
      expect(result.stderr).not.toContain('usermod');
    },
  );
});
