/**
 * A pass against the sandbox, in this process: what a stop does while the pass waits on
 * the gateway.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { passHome } from '../support/pass-home.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';

describe('a pass', () => {
  it('stopped while it reads the balance ends at once: nothing funded, held or sent', async () => {
    const stop = new AbortController();
    // The stop comes once the balance read has reached a gateway that will never answer.
    const home = await passHome({
      onRequest: ({ path, fault }) => {
        if (fault === 'hang' && path.endsWith('/balance')) stop.abort();
      },
    });
    home.sandbox.setFaults({ hangRate: 1, operations: ['getBalance'] });
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', 2)]);
    // Without the stop reaching the read, the pass would wait out this minute (and the
    // test its 30 s time-out).
    const { files } = await home.run(
      { requestTimeout: 60_000 },
      { signal: stop.signal, requestTimeoutMs: 60_000 },
    );
    expect(stop.signal.aborted).toBe(true);
    expect(files.map((file) => file.state)).toEqual(['taken']);
    expect(home.sandbox.ledger()).toEqual([]);
    const counts = await home.withJournal((journal) => journal.countsByState());
    expect(counts).toEqual({ queued: { count: 2, cents: 200 } });
  });

  it("whose temp folder cannot hold a big file's repeat keys keeps the file and pays it once the folder is mended", async () => {
    const home = await passHome();
    const rows = 2_100;
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', rows)]);
    // The reader's in-memory limit, made small so this file spills past its first chunk of
    // 2,000 rows journaled (two keys a row with an orderId column): a file of millions of
    // rows reaches the real one. Not a setting; the pass hands its config to the reader.
    const smallLimit = { memoryKeys: 4_100, concurrency: 64 } as Partial<Config>;
    const missing = join(home.folders.home, 'no-such-tmp');
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = missing;
    let first;
    try {
      first = await home.run(smallLimit);
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
    expect(first.files).toMatchObject([
      {
        file: 'folha.csv',
        fileNeedsAPerson: true,
        outcome: expect.stringContaining('stays in processing/'),
        problems: [
          {
            text: expect.stringContaining(
              `finding repeated rows needs room in the temp folder ${missing} (ENOENT`,
            ),
          },
        ],
      },
    ]);
    expect(first.exit).toBe(2);
    expect(readdirSync(home.folders.rejected)).toEqual([]);
    expect(existsSync(join(home.folders.processing, 'folha.csv'))).toBe(true);
    expect(home.sandbox.ledger()).toEqual([]);

    // Following 2,100 payouts outlasts the usual 10 s on a machine busy with other tests.
    const second = await home.run(smallLimit, { followMs: 40_000 });
    expect(second.files.map((file) => [file.file, file.state, file.rows])).toEqual([
      ['folha.csv', 'archived', { paid: rows }],
    ]);
    expect(second.exit).toBe(0);
    const ledger = home.sandbox.ledger();
    expect(ledger).toHaveLength(rows);
    expect(new Set(ledger.map((entry) => entry.orderId)).size).toBe(rows);
  }, 60_000);

  it('that follows writes each result before it follows, and again once it is done', async () => {
    // What the result said when following asked its first question of the gateway.
    let atFirstPoll: string[] | undefined;
    const home = await passHome({
      settleDelayMs: 500,
      onRequest: ({ path }) => {
        if (atFirstPoll === undefined && path.startsWith('/transaction/get/by/id/')) {
          atFirstPoll = readdirSync(home.folders.results).map((name) =>
            readFileSync(join(home.folders.results, name), 'utf8'),
          );
        }
      },
    });
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', 3)]);
    const { files, exit } = await home.run({ resultDialect: 'rfc4180' }, { followMs: 30_000 });
    const statuses = (text: string) =>
      (parse(text, { columns: true, bom: true }) as Record<string, string>[]).map(
        (row) => row.status,
      );
    expect(atFirstPoll?.map(statuses)).toEqual([['pending', 'pending', 'pending']]);
    expect(files.map((file) => [file.file, file.state, file.rows])).toEqual([
      ['folha.csv', 'archived', { paid: 3 }],
    ]);
    expect(exit).toBe(0);
    const [result] = readdirSync(home.folders.results);
    expect(statuses(readFileSync(join(home.folders.results, result!), 'utf8'))).toEqual([
      'paid',
      'paid',
      'paid',
    ]);
  });

  it('stopped while it follows leaves the result written before following', async () => {
    const stop = new AbortController();
    // The stop comes with the first poll: the payouts are sent and pending (they settle
    // in an hour), and a result of a large batch would take the stop that long to end.
    const home = await passHome({
      settleDelayMs: 3_600_000,
      onRequest: ({ path }) => {
        if (path.startsWith('/transaction/get/by/id/')) stop.abort();
      },
    });
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', 3)]);
    const first = await home.run({}, { signal: stop.signal, followMs: 30_000 });
    expect(stop.signal.aborted).toBe(true);
    expect(first.files.map((file) => [file.file, file.rows])).toEqual([
      ['folha.csv', { pending: 3 }],
    ]);
    expect(readdirSync(home.folders.results)).toEqual([
      expect.stringMatching(/^folha\..*\.result\.csv$/),
    ]);
    expect(existsSync(join(home.folders.processing, 'folha.csv'))).toBe(true);
  });
});
