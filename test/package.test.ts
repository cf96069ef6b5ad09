/**
 * The package a server installs carries the versions CI tested: `npm pack` ships
 * npm-shrinkwrap.json, which `npm install -g` of the tarball honours (a package-lock.json
 * never leaves the checkout). scripts/check-install.sh installs the tarball and compares.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

interface Lockfile {
  packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
}

const json = <T>(file: string): T => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as T;

describe('the package', () => {
  it('ships npm-shrinkwrap.json, the one lockfile', async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['pack', '--dry-run', '--json', '--ignore-scripts'],
      { cwd: ROOT },
    );
    const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    expect(packed.files.map((file) => file.path)).toContain('npm-shrinkwrap.json');
    expect(existsSync(join(ROOT, 'package-lock.json'))).toBe(false);
  });

  it('locks every dependency package.json names, at the range it names', () => {
    const manifest = json<{
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    }>('package.json');
    const locked = json<Lockfile>('npm-shrinkwrap.json').packages;
    const root = locked[''] as { dependencies: object; devDependencies: object };
    expect(root.dependencies).toEqual(manifest.dependencies);
    expect(root.devDependencies).toEqual(manifest.devDependencies);
    const named = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
    const unlocked = named.filter((name) => locked[`node_modules/${name}`]?.version === undefined);
    expect(unlocked).toEqual([]);
  });
});
