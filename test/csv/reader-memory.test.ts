import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempFolder, writeFile } from '../support/files.js';
import { useTranspiledSrc } from '../support/transpiled.js';

const moduleUrl = useTranspiledSrc();
const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n';

/**
 * How much more heap is still in use (after a full collection) when the reader hands over
 * line `atLine` than before it began, measured in a child process of its own
 * (--expose-gc), in MB. Against its own start, so Node's own heap (larger on 24) is not
 * counted.
 */
function liveHeapGrowthAt(file: string, atLine: number): Promise<number> {
  const script = `
    const { readPayoutFile } = await import(${JSON.stringify(moduleUrl('csv/reader.js'))});
    globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    let live;
    await readPayoutFile(${JSON.stringify(file)},
      { encoding: 'auto', maxPayoutCents: 1e7, maxFileCents: 1e9, maxFileBytes: 1e9 },
      (row) => { if (row.line === ${atLine}) { globalThis.gc(); live = process.memoryUsage().heapUsed; } });
    process.stdout.write(String((live - before) / 1e6));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 60_000 },
      (error, stdout) => (error ? reject(error) : resolve(Number(stdout))),
    );
  });
}

describe('the reader holds no more than a slice of the file, whatever the file holds', () => {
  const folder = useTempFolder();

  // Both are blank lines to the reader (its guard stops at 100,000 in a row). They are the
  // worst case: one record per byte or so. Before, csv-parse turned each 256 KiB read into
  // 262,144 records at once, ~600 bytes each, all alive until read: 49 MB more at line
  // 90,000 of blank lines. Now the records ahead are a few slices of 1,024 lines: about
  // 1 MB on Node 20, 13 MB on Node 24 (whose streams let more slices through before a read).
  it.each([
    ['blank lines', '\n'],
    ['lines of delimiters only', ',,,,,,,\n'],
  ])('%s: the live heap stays small', async (_, line) => {
    const file = writeFile(folder(), 'f.csv', HEADER + line.repeat(250_000));
    const grownMb = await liveHeapGrowthAt(join(file), 90_000);
    expect(grownMb).toBeLessThan(32);
  });
});
