/**
 * `payouts journal compact --before DAY`: the history of finished batches moved into a
 * dated archive CSV, on homes made by real runs against the sandbox, the journal in each
 * store; status, reconcile and the rules on who is paid say the same of the compacted
 * journal; a compaction killed by its pid and run again moves each entry once; a daemon
 * pays a file while one runs.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { batchDay } from '../../src/results/names.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv, runCli, stopChild } from '../support/cli.js';
import { useTempFolder, writeFile } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { JOURNAL_STORES, type JournalStore } from '../support/journal-stores.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';
import { waitFor } from '../support/wait.js';

const DAY_MS = 86_400_000;
/** Ten days ago: the clock the earlier files were run on. */
const tenDaysAgo: Clock = { now: () => Date.now() - 10 * DAY_MS, sleep: systemClock.sleep };
/** A PostgreSQL journal's hosts allow a clock that far from the database's (the past runs'). */
const PAST_SKEW = { PAYOUTS_MAX_CLOCK_SKEW: '11d' };
const BEFORE = batchDay(Date.now() - 5 * DAY_MS);
const FAILING = `fail-0,Pessoa F,fail@example.com,11987654321,${withCheckDigits('123456789')},EMAIL,fail@example.com,"7,00"`;

/** Every audit entry's id, with its batch. */
const auditOf = (store: JournalStore, home: string) =>
  store.select<{ id: number; batch: number }>(
    home,
    `SELECT a.id, p.batch_id AS batch FROM audit a JOIN payouts p ON p.id = a.payout_id
     ORDER BY a.id`,
  );

/** The entry numbers of every archive file's lines, in order. */
function archived(home: string): number[] {
  const folder = join(home, 'archive', 'journal-history');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .sort()
    .flatMap((name) => readFileSync(join(folder, name), 'utf8').split(/\r?\n/).slice(1))
    .filter((line) => line !== '')
    .map((line) => Number(/^(\d+);/.exec(line)?.[1]));
}

describe.each(JOURNAL_STORES)('payouts journal compact, the journal in %s', (_, store) => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: { home: string; env: Record<string, string> };
  const journal = () => auditOf(store, home.home);
  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
    home = store.home(folder(), sandbox.url, {
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_FOLLOW_TIMEOUT: '10s',
    });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  const cli = (args: string[], options: { env?: Record<string, string>; clock?: Clock } = {}) =>
    runCli(args, {
      env: { ...home.env, ...options.env },
      ...(options.clock && { clock: options.clock }),
    });
  const drop = (name: string, lines: readonly string[]) =>
    writeFile(join(home.home, 'inbox'), name, `${lines.join('\n')}\n`);
  const compact = (before = BEFORE) => cli(['journal', 'compact', '--before', before]);

  /** folha.csv paid ten days ago (3 paid, 1 failed, 1 invalid line). */
  async function paidTenDaysAgo(): Promise<string[]> {
    const paid = payrollRows('paid', 3, (row) => `${row + 1}0,00`);
    const invalid = paid[1]!.replace(/^paid-1/, 'bad-1').replace(/,\d{11},/, ',12345678900,');
    drop('folha.csv', [PAYROLL_HEADER, ...paid, FAILING, invalid]);
    expect((await cli(['run'], { clock: tenDaysAgo, env: PAST_SKEW })).code).toBe(2);
    return paid;
  }

  it('moves only finished batches before the day into the archive; status, reconcile and the rules say the same', async () => {
    const paid = await paidTenDaysAgo();
    // Waiting for a person, ten days ago too: not finished, never touched.
    drop('aprovar.csv', [PAYROLL_HEADER, ...payrollRows('wait', 2, () => '3,00')]);
    const waiting = await cli(['run'], {
      clock: tenDaysAgo,
      env: { ...PAST_SKEW, PAYOUTS_REQUIRE_APPROVAL: 'true' },
    });
    expect(waiting.code).toBe(2);
    // What the rules would make of three files: an orderId seen before, a repeat of a paid
    // payout (its document and amount, another orderId), and the same file name again,
    // rehearsed against the journal (`run --dry-run` moves, writes and sends nothing).
    drop('outro.csv', [PAYROLL_HEADER, paid[1]!]);
    drop('repete.csv', [PAYROLL_HEADER, paid[0]!.replace(/^paid-0/, 'again-0')]);
    drop('folha.csv', [PAYROLL_HEADER, ...paid]);
    const said = async () => ({
      status: (await cli(['status'])).stdout,
      file: (await cli(['status', 'folha.csv', '--json'])).stdout,
      payout: (await cli(['status', 'paid-0'])).stdout
        .split('\n')
        .filter((line) => !/->|history/i.test(line)),
      rules: (await cli(['run', '--dry-run'])).stdout,
    });
    const before = await said();
    expect(before.rules).toMatch(/outro\.csv: would send 0 .*\n.*held \(orderId of another file\)/);
    expect(before.rules).toMatch(/repete\.csv: would send 0 .*\n.*held \(possible duplicate\)/);
    const entries = await journal();
    const folha = entries.filter((entry) => entry.batch === 1).map((entry) => entry.id);
    expect(folha.length).toBeGreaterThan(8);

    const compacted = await compact();
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout).toMatch(/Moved: \d+ audit entries of 1 batch/);
    expect(compacted.stdout).toMatch(/Journal .* before, .* after/);
    // SQLite's file and WAL, checkpointed; PostgreSQL's tables, the audit vacuumed.
    expect(compacted.stdout).toMatch(
      store.name === 'SQLite'
        ? /Journal .* \+ WAL .* before, .* \+ WAL 0 bytes after; /
        : /Journal tables .* \(audit .*\) before, .* after, by pg_total_relation_size; VACUUM made/,
    );

    // The archive holds exactly what left: folha's entries, once, in file order (line by
    // line, each payout's entries in order); the waiting batch's stay.
    expect(archived(home.home).sort((a, b) => a - b)).toEqual(folha);
    const left = await journal();
    expect(left.filter((entry) => entry.batch === 1)).toEqual([]);
    expect(left).toEqual(entries.filter((entry) => entry.batch !== 1));
    expect(await said()).toEqual(before);

    const again = await compact();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Nothing to compact/);
    expect(archived(home.home).sort((a, b) => a - b)).toEqual(folha);

    // reconcile finds a return of a compacted batch's payout, and its result says so.
    expect(sandbox.refund('paid-0')).toBe(true);
    const reconciled = await cli(['reconcile', '--days', '30']);
    expect(reconciled.code, reconciled.stderr).toBe(2);
    expect((await cli(['status', 'paid-0'])).stdout).toMatch(/refunded/);
    const results = readdirSync(join(home.home, 'results')).filter((name) =>
      name.startsWith('folha'),
    );
    expect(readFileSync(join(home.home, 'results', results[0]!), 'utf8')).toMatch(
      /paid-0.*refunded/i,
    );
  });

  it('status of a compacted payout and of its file says what the journal knows and where its history went', async () => {
    await paidTenDaysAgo();
    expect((await compact()).code).toBe(0);
    const [archive] = readdirSync(join(home.home, 'archive', 'journal-history'));
    const path = join(home.home, 'archive', 'journal-history', archive!);

    const payout = await cli(['status', 'paid-0']);
    expect(payout.code, payout.stderr).toBe(0);
    expect(payout.stdout).toMatch(/orderId\s+paid-0/);
    expect(payout.stdout).toMatch(/folha\.csv \(batch 1\), line 2/);
    expect(payout.stdout).toMatch(/value\s+R\$ 10,00/);
    expect(payout.stdout).toMatch(/status\s+paid/);
    expect(payout.stdout).toContain(`moved out of the journal into ${path}`);
    const json = JSON.parse((await cli(['status', 'paid-0', '--json'])).stdout) as {
      history: unknown[];
      historyMovedTo: string[];
    };
    // Its moves are in the archive; the journal's newest entry, if its, stays.
    expect(json.history.length).toBeLessThanOrEqual(1);
    expect(json.historyMovedTo).toEqual([path]);
    expect(readFileSync(path, 'utf8')).toMatch(/;paid-0;1;folha\.csv;2;/);

    const file = await cli(['status', 'folha.csv']);
    expect(file.stdout).toContain(`moved out of the journal into ${path}`);
  });

  it('keeps the newest entry, so a home whose every batch was compacted still finds its journal', async () => {
    await paidTenDaysAgo();
    const newest = (await journal()).at(-1)!.id;
    expect((await compact()).code).toBe(0);
    const run = await cli(['run']);
    expect(run.stderr).not.toMatch(/older/);
    expect(run.code, run.stderr).toBe(0);
    expect((await journal()).map((entry) => entry.id)).toEqual([newest]);
  });

  it('says a day in the future and a day that is not one, and changes nothing', async () => {
    await paidTenDaysAgo();
    const entries = await journal();
    const future = await compact(batchDay(Date.now() + 2 * DAY_MS));
    expect(future.code).toBe(64);
    expect(future.stderr).toMatch(/Expected a day up to today/);
    const bad = await compact('2026-02-30');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/Expected a day as YYYY-MM-DD/);
    const portuguese = await cli(['journal', 'compact', '--before', '30/01/2026'], {
      env: { PAYOUTS_LANGUAGE: 'pt-BR' },
    });
    expect(portuguese.code).toBe(64);
    expect(portuguese.stderr).toMatch(/Esperava um dia como AAAA-MM-DD/);
    expect(await journal()).toEqual(entries);
  });

  /** A home that has run once, and `count` payouts paid long ago with their history. */
  async function longHistory(count: number): Promise<number[]> {
    expect((await cli(['run'])).code).toBe(0);
    await store.addPaidHistory(home.home, count);
    return (await journal()).map((entry) => entry.id);
  }

  it('killed by its pid midway and run again, moves every entry once', async () => {
    const ids = await longHistory(20_000);
    const archive = join(home.home, 'archive', 'journal-history');
    const child = spawn(process.execPath, [BIN, 'journal', 'compact', '--before', BEFORE], {
      env: cleanEnv(home.env),
      stdio: 'ignore',
    });
    try {
      // A chunk written (about 600 kB), far from the end (about 3 MB).
      await waitFor('the archive to fill', () =>
        readdirSync(archive).some((name) => statSync(join(archive, name)).size > 100_000),
      );
    } finally {
      child.kill('SIGKILL');
      await stopChild(child);
    }
    expect(child.signalCode).toBe('SIGKILL');
    // Cut with entries written to the archive and still in the journal, or deleted too.
    expect(archived(home.home).length).toBeGreaterThan(0);
    expect((await journal()).length).toBeGreaterThan(1);

    const rerun = await compact();
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(archived(home.home)).toEqual(ids.slice(0, -1));
    expect(new Set(archived(home.home)).size).toBe(ids.length - 1);
    expect((await journal()).map((entry) => entry.id)).toEqual([ids.at(-1)]);
  }, 120_000);

  it('a daemon pays a file while a compaction runs', async () => {
    await longHistory(40_000);
    const daemon = spawn(process.execPath, [BIN, 'watch'], {
      env: cleanEnv({ ...home.env, PAYOUTS_INBOX_RESCAN: '300ms' }),
      stdio: 'ignore',
    });
    const compaction = spawn(process.execPath, [BIN, 'journal', 'compact', '--before', BEFORE], {
      env: cleanEnv(home.env),
      stdio: 'ignore',
    });
    const compacted = new Promise<number | null>((resolve) => compaction.once('exit', resolve));
    try {
      const archive = join(home.home, 'archive', 'journal-history');
      await waitFor(
        'the compaction to start',
        () => existsSync(archive) && readdirSync(archive).length > 0,
      );
      drop('novo.csv', [PAYROLL_HEADER, ...payrollRows('novo', 3)]);
      await waitFor('novo.csv paid and archived', () =>
        readdirSync(join(home.home, 'archive')).some((name) => name.startsWith('novo')),
      );
      // Paid while the compaction was still at work.
      expect(compaction.exitCode).toBeNull();
      expect(await compacted).toBe(0);
    } finally {
      await stopChild(compaction);
      expect(await stopChild(daemon)).toBe(0);
    }
    const status = await cli(['status', 'novo.csv', '--json']);
    expect(status.stdout).toMatch(/"paid"/);
    expect((await journal()).filter((entry) => entry.batch > 1).length).toBeGreaterThan(0);
  }, 120_000);
});
