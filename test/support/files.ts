/** A temp folder per test, removed afterwards. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { batchDay } from '../../src/results/names.js';

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

/**
 * A file's name in archive/ (`pay.csv` -> `pay.2026-11-23.csv`) or its result's in
 * results/ (`pay.2026-11-23.result.csv`) for a batch received today (São Paulo's day);
 * `n` for the n-th batch of that name that day (`pay.2026-11-23 [2].csv`).
 */
export function dated(name: string, kind: 'archive' | 'result' = 'archive', n = 1): string {
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const base = `${stem}.${batchDay(Date.now())}${n === 1 ? '' : ` [${n}]`}`;
  return kind === 'result' ? `${base}.result.csv` : `${base}${extension}`;
}
