/**
 * The package a server installs carries the versions CI tested. npm reads no lockfile
 * from a tarball it installs globally, so the package bundles its dependencies, as
 * `npm install` put them in node_modules from package-lock.json.
 */
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

const versionIn = (manifest: string): string =>
  (JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as { version: string }).version;

// From a node_modules linked to another checkout's, npm bundles the direct dependencies
// only: the packing is judged in a checkout of its own, as CI's and a server's are.
const LINKED = lstatSync(join(ROOT, 'node_modules')).isSymbolicLink();

describe.skipIf(LINKED)('the package', () => {
  it('carries every package it runs with, at the version package-lock.json locks', async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['pack', '--dry-run', '--json', '--ignore-scripts'],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const files = new Set(packed.files.map((file) => file.path));
    const locked = (
      JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { version: string; dev?: boolean }>;
      }
    ).packages;
    const runtime = Object.entries(locked).filter(([path, entry]) => path !== '' && !entry.dev);
    expect(runtime.length).toBeGreaterThan(0);
    const missing = runtime
      .filter(([path]) => !files.has(`${path}/package.json`))
      .map(([path]) => path);
    expect(missing).toEqual([]);
    const otherVersion = runtime
      .filter(([path, entry]) => versionIn(`${path}/package.json`) !== entry.version)
      .map(([path]) => path);
    expect(otherVersion).toEqual([]);
    // npm packs every file of the package: 9 s of CPU here, far longer on a busy machine.
  }, 180_000);
});
