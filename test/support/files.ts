/** A temp folder per test, removed afterwards. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** Registers hooks creating a fresh folder before each test; returns a getter for it. */
export function useTempFolder(prefix = 'payouts-test-'): () => string {
  let folder: string | undefined;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
    folder = undefined;
  });
  return () => {
    if (!folder) throw new Error('useTempFolder: no folder outside a test');
    return folder;
  };
}

export function writeFile(folder: string, name: string, content: string | Uint8Array): string {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
}
