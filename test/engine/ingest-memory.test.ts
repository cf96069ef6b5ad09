/**
 * What a big file's admission and its approval report leave dead is given back as they
 * go (issue 34): V8 collects its old generation only once it has grown to about four
 * times what lived after its last full collection, so a million rows ended admission
 * with the reader's dead tables and tens of MB of dead rows held, and the report stacked
 * its own on top (`payouts run` of a million rows peaked at 171–180 MB against 150).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { useTranspiledSrc } from '../support/transpiled.js';

const moduleUrl = useTranspiledSrc();
const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n';
const ROWS = 250_000;
/** Array buffers still held once a reading ended, at most, MB. */
const BUFFERS_MB = 8;
/** How long their freeing is waited for: V8 idle that long may collect by itself. */
const WAIT_MS = 2_000;

interface Held {
  kind: string;
  /** Array buffers held once ingestFile returned (the reader's tables are), MB. */
  buffersAfterIngest: number;
  /** The old generation's growth from the start to the end of each, uncollected, MB. */
  oldGrownByIngest: number;
  oldGrownByReport: number;
}

/**
 * In a child process of its own, as `payouts run` runs (no --expose-gc, nothing collected
 * by the measurement): the file journaled for approval, then its report written, and
 * what V8 holds, dead or alive, right after each.
 */
function heldAfter(home: string, file: string): Promise<Held> {
  const script = `
    const { getHeapSpaceStatistics } = await import('node:v8');
    const { loadConfig } = await import(${JSON.stringify(moduleUrl('config/load.js'))});
    const { ingestFile } = await import(${JSON.stringify(moduleUrl('engine/ingest.js'))});
    const { openJournal, sqliteJournalAt } = await import(${JSON.stringify(moduleUrl('journal/open.js'))});
    const { writeReport } = await import(${JSON.stringify(moduleUrl('inbox/approval.js'))});
    const old = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size / 1e6;
    const { config } = loadConfig({ env: { PAYOUTS_HOME: ${JSON.stringify(home)} } });
    const journal = await openJournal(sqliteJournalAt(${JSON.stringify(join(home, 'journal.db'))}));
    const startOld = old();
    const ingested = await ingestFile(${JSON.stringify(file)}, journal, { ...config, now: Date.now() },
      'awaiting-approval');
    const ingestOld = old();
    // Dead buffers are freed by a thread of V8's own after a collection: moments later,
    // not at once (and never, uncollected). Waited for, at most ${WAIT_MS} ms.
    const waitedFrom = Date.now();
    while (process.memoryUsage().arrayBuffers > ${BUFFERS_MB} * 1e6 && Date.now() - waitedFrom < ${WAIT_MS})
      await new Promise((resolve) => setTimeout(resolve, 10));
    const buffersAfterIngest = process.memoryUsage().arrayBuffers / 1e6;
    await writeReport(journal, ${JSON.stringify(file)}, ingested.batchId);
    const reportOld = old();
    await journal.close();
    process.stdout.write(JSON.stringify({ kind: ingested.kind, buffersAfterIngest,
      oldGrownByIngest: ingestOld - startOld, oldGrownByReport: reportOld - ingestOld }));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: 280_000, maxBuffer: 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Held)),
    );
  });
}

describe('a big file admitted and reported leaves nothing dead behind for long', () => {
  const folder = useTempFolder();

  // Before: the reader's tables (a 53 MB region, 15 MB of it touched at a million rows)
  // were still held when the report began, and the old generation grew by 2.5 MB on this
  // file's admission and 5.6 on its report, never collected (1M rows: 11 and 23 MB).
  it(
    `of ${ROWS} payees, after its admission and after its report`,
    { timeout: 300_000 },
    async () => {
      const rows = Array.from({ length: ROWS }, (_, i) => {
        const cpf = withCheckDigits(String(100_000_000 + i * 7).slice(0, 9));
        return `o-${i},Pessoa ${i},p${i}@example.com,11987654321,${cpf},EMAIL,p${i}@x.com,"1,00"\n`;
      });
      const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
      const held = await heldAfter(folder(), file);
      expect(held.kind).toBe('awaiting-approval');
      expect(held.buffersAfterIngest).toBeLessThan(BUFFERS_MB);
      expect(held.oldGrownByIngest).toBeLessThan(3);
      expect(held.oldGrownByReport).toBeLessThan(3);
    },
  );
});
