/**
 * The approval report of a big file is written as it is read (issue 34): what it holds at
 * any moment is a page of the journal, whatever the file holds, not its lines or payees.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { useTranspiledSrc } from '../support/transpiled.js';

const moduleUrl = useTranspiledSrc();
const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n';
const ROWS = 100_000;

/**
 * The start of a child's script: `file` journaled into `home` as `payouts run` takes it for
 * approval, with `journal`, `ingested` and `writeReport` in scope.
 */
const journaledForApproval = (home: string, file: string) => `
    const { loadConfig } = await import(${JSON.stringify(moduleUrl('config/load.js'))});
    const { ingestFile } = await import(${JSON.stringify(moduleUrl('engine/ingest.js'))});
    const { openJournal, sqliteJournalAt } = await import(${JSON.stringify(moduleUrl('journal/open.js'))});
    const { writeReport } = await import(${JSON.stringify(moduleUrl('inbox/approval.js'))});
    const { config } = loadConfig({ env: { PAYOUTS_HOME: ${JSON.stringify(home)} } });
    const journal = await openJournal(sqliteJournalAt(${JSON.stringify(join(home, 'journal.db'))}));
    const ingested = await ingestFile(${JSON.stringify(file)}, journal, { ...config, now: Date.now() },
      'awaiting-approval');`;

/**
 * How much more heap is in use (after a full collection) at the most the report held than
 * before it began, in MB, measured in a child process of its own (--expose-gc): the file
 * journaled as `payouts run` takes it for approval, then its report written while every
 * answer of the journal is weighed as it arrives, held alive (the journal is the real
 * one; only looked at).
 */
function reportHeapGrowth(home: string, file: string): Promise<number> {
  const script = `
${journaledForApproval(home, file)}
    let before = 0;
    let most = 0;
    const weighed = new Proxy(journal, {
      get: (target, name) => typeof target[name] !== 'function' ? target[name]
        : async (...args) => {
            const answer = await target[name](...args);
            globalThis.gc();
            most = Math.max(most, process.memoryUsage().heapUsed - before);
            return answer;
          },
    });
    globalThis.gc();
    before = process.memoryUsage().heapUsed;
    await writeReport(weighed, ${JSON.stringify(file)}, ingested.batchId);
    await journal.close();
    process.stdout.write(JSON.stringify({ kind: ingested.kind, grownMb: most / 1e6 }));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 280_000, maxBuffer: 1024 * 1024 },
      (error, stdout) => {
        if (error) return reject(error);
        const { kind, grownMb } = JSON.parse(stdout) as { kind: string; grownMb: number };
        expect(kind).toBe('awaiting-approval');
        resolve(grownMb);
      },
    );
  });
}

/**
 * Whether the event loop took a turn while the report of `file` was written (a signal's
 * handler, a daemon's health line wait for one): a setImmediate queued as it begins runs
 * before it ends, in a child process of its own over the real journal.
 */
function loopTurnsDuringReport(home: string, file: string): Promise<boolean> {
  const script = `
${journaledForApproval(home, file)}
    let ended = false;
    const writing = writeReport(journal, ${JSON.stringify(file)}, ingested.batchId).then(() => { ended = true; });
    const turned = await new Promise((resolve) => setImmediate(() => resolve(!ended)));
    await writing;
    await journal.close();
    process.stdout.write(JSON.stringify({ kind: ingested.kind, turned }));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: 280_000, maxBuffer: 1024 * 1024 },
      (error, stdout) => {
        if (error) return reject(error);
        const { kind, turned } = JSON.parse(stdout) as { kind: string; turned: boolean };
        expect(kind).toBe('awaiting-approval');
        resolve(turned);
      },
    );
  });
}

/**
 * What a person opening the report of `file` while it is written would read: each time
 * the event loop turns during the write, the report as it stands then (its length, or -1
 * while there is none), and its length once written.
 */
function reportSeenWhileWritten(
  home: string,
  file: string,
): Promise<{ seen: number[]; whole: number }> {
  const script = `
    const { existsSync, readFileSync } = await import('node:fs');
${journaledForApproval(home, file)}
    const report = ${JSON.stringify(`${file}.report.txt`)};
    let ended = false;
    const writing = writeReport(journal, ${JSON.stringify(file)}, ingested.batchId).then(() => { ended = true; });
    const seen = [];
    // Bounded: a look a turn of the loop, while the write lasts.
    for (let look = 0; !ended && look < 100_000; look++) {
      seen.push(existsSync(report) ? readFileSync(report).length : -1);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writing;
    await journal.close();
    process.stdout.write(JSON.stringify({ seen, whole: readFileSync(report).length }));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
    );
  });
}

describe('the approval report of 100,000 rows holds a page of them at a time', () => {
  const folder = useTempFolder();

  // Before, the report read every invalid line at once: 100,000 lines repeating an
  // orderId grew it by 34 MB (0.6 now), and `payouts run` peaked at 459 MB on 200,000.
  it('of rows repeating one orderId (each an invalid line)', { timeout: 300_000 }, async () => {
    const rows = Array.from(
      { length: ROWS },
      (_, i) =>
        `o-1,Pessoa ${i},p${i}@example.com,11987654321,52998224725,EMAIL,p${i}@x.com,"1,00"\n`,
    );
    const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
    expect(await reportHeapGrowth(folder(), file)).toBeLessThan(16);
    const report = readFileSync(`${file}.report.txt`, 'utf8');
    expect(report).toContain('99999 invalid');
  });

  it('of 100,000 payees, each listed', { timeout: 300_000 }, async () => {
    // A document each: one payee's 100,000 rows would measure the rules on who is paid.
    const rows = Array.from({ length: ROWS }, (_, i) => {
      const cpf = withCheckDigits(String(100_000_000 + i * 7).slice(0, 9));
      return `o-${i},Pessoa ${i},p${i}@example.com,11987654321,${cpf},EMAIL,p${i}@x.com,"1,00"\n`;
    });
    const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
    expect(await reportHeapGrowth(folder(), file)).toBeLessThan(16);
    const report = readFileSync(`${file}.report.txt`, 'utf8');
    expect(report).toContain(`line ${ROWS + 1}: Pessoa ${ROWS - 1}`);
  });

  // Before, the report read every held row to list those held by themselves: 100,000
  // identical rows of one payee grew it by 84 MB; now the first of them and their count.
  it("of one payee's identical rows (each held by itself)", { timeout: 300_000 }, async () => {
    const rows = Array.from(
      { length: ROWS },
      (_, i) => `o-${i},Pessoa,p@example.com,11987654321,52998224725,EMAIL,p@x.com,"1,00"\n`,
    );
    const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
    expect(await reportHeapGrowth(folder(), file)).toBeLessThan(16);
    const report = readFileSync(`${file}.report.txt`, 'utf8');
    expect(report).toContain(`line ${ROWS + 1}: Pessoa`);
  });

  it('lets the event loop turn between its pages', { timeout: 300_000 }, async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => {
      const cpf = withCheckDigits(String(100_000_000 + i * 7).slice(0, 9));
      return `o-${i},Pessoa ${i},p${i}@example.com,11987654321,${cpf},EMAIL,p${i}@x.com,"1,00"\n`;
    });
    const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
    expect(await loopTurnsDuringReport(folder(), file)).toBe(true);
    expect(readFileSync(`${file}.report.txt`, 'utf8')).toContain('line 5001: Pessoa 4999');
  });

  // An approver who opens the report as it is written reads it whole or not at all: a
  // half-written report would show some payees and totals as if they were all.
  it('is never seen half-written', { timeout: 300_000 }, async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => {
      const cpf = withCheckDigits(String(100_000_000 + i * 7).slice(0, 9));
      return `o-${i},Pessoa ${i},p${i}@example.com,11987654321,${cpf},EMAIL,p${i}@x.com,"1,00"\n`;
    });
    const file = writeFile(folder(), 'folha.csv', HEADER + rows.join(''));
    const { seen, whole } = await reportSeenWhileWritten(folder(), file);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.filter((length) => length !== -1 && length !== whole)).toEqual([]);
  });
});
