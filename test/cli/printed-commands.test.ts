/**
 * Every command payouts prints is a promise: run as printed, split as a shell would, from
 * another folder and with the settings given only by the flags the printing command had,
 * it reaches the same home and gateway. Here the commands of messages the journal keeps
 * (a row held once its cover ends) and of those status makes itself (a payout pending too
 * long).
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Journal } from '../../src/journal/journal.js';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest, clientFor } from '../support/gateway.js';
import { passHome, type PassHome } from '../support/pass-home.js';
import { ANA, BRUNO, HEADER } from '../support/folha.js';

// A few commands each, some as children of bin/: far from what they take.
vi.setConfig({ testTimeout: 60_000 });

/** The words of a shell command line: double-quoted or bare, as sh splits these. */
const wordsOf = (line: string) =>
  [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');

const rules = { duplicateWindowMs: 20 * 86_400_000, sameNameNewBatchAfterMs: null };

describe('commands printed from the journal’s words reach the same home, as printed', () => {
  const elsewhere = useTempFolder('payouts-elsewhere-');

  /** A home whose settings are only in a settings file, in a folder of no home. */
  async function settingsHome(language: string, more: Record<string, string> = {}) {
    const home = await passHome();
    const settings = join(elsewhere(), 'payouts.env');
    const values = {
      ...home.env(),
      PAYOUTS_LANGUAGE: language,
      PAYOUTS_LOG_LEVEL: 'silent',
      ...more,
    };
    writeFileSync(
      settings,
      Object.entries(values)
        .map(([key, value]) => `${key}=${value}\n`)
        .join(''),
    );
    return {
      home,
      settings,
      cli: (args: string[]) => runCli(['--settings-file', settings, ...args]),
    };
  }

  /** A home whose first file, folha.csv, paid Ana: once approved, where approval is required. */
  async function paidAna(language: string, more: Record<string, string> = {}) {
    const made = await settingsHome(language, { PAYOUTS_INBOX_SETTLE: '1ms', ...more });
    made.home.drop('folha.csv', [HEADER, ANA]);
    const waits = more.PAYOUTS_REQUIRE_APPROVAL === 'true';
    expect((await made.cli(['run'])).code).toBe(waits ? 2 : 0);
    if (waits) {
      expect((await made.cli(['approve', 'folha.csv'])).code).toBe(0);
      expect((await made.cli(['run'])).code).toBe(0);
    }
    return made;
  }

  /**
   * A printed line run as printed, in another folder, with no PAYOUTS_* set: it ends well,
   * and its output says `shows`.
   */
  async function runPrinted(printed: string, shows = '') {
    const [command, ...args] = wordsOf(printed);
    expect(command).toBe('payouts');
    const result = await runCli(args, { cwd: elsewhere() });
    expect(result.code, `${printed}\n${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(shows);
  }

  /** Each command printed in `text`, from its start on with the flags that follow it. */
  const printedIn = (text: string, start: RegExp) =>
    [...text.matchAll(new RegExp(`${start.source}(?: --[a-z-]+(?: "[^"]*"| \\d+)?)*`, 'g'))].map(
      (match) => match[0],
    );

  /** `text` prints the command `start` begins, each time as `expected`. */
  function expectPrinted(text: string, start: RegExp, expected: string) {
    const printed = printedIn(text, start);
    expect(printed.length, text).toBeGreaterThan(0);
    for (const each of printed) expect(each, text).toBe(expected);
  }

  /**
   * Where a person is shown the row's words (`where`: the run's summary, in the home's
   * language, and `payouts status` of its file): each prints the command as `expected`.
   */
  async function everywherePrinted(
    cli: (args: string[]) => Promise<{ stdout: string }>,
    start: RegExp,
    expected: string,
    where = [['run'], ['status', 'outra.csv']],
  ) {
    for (const args of where) expectPrinted((await cli(args)).stdout, start, expected);
  }

  const fileOf = async (journal: Journal, name: string, request: CashOutRequest) => {
    const file = { name: `${name}.csv`, nameKey: name, sha256: name, arrived: true };
    const { batchId } = await journal.batchForFile(file);
    await journal.admitPayouts(batchId, [{ line: 2, request }], rules);
    return batchId;
  };
  const batch = { rows: 1, valid: 1, invalid: 0, totalCents: 1234, problems: [] };

  /** folha.csv's payout a-1 sent and pending; its batch, and the fence that answers it. */
  async function sentPending(journal: Journal) {
    const first = await fileOf(journal, 'folha', cashOutRequest('a-1'));
    await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
    const [claim] = await journal.claimToSend('a', 1, 60_000);
    const fence = claim!.fence;
    await journal.move(
      'a-1',
      fence,
      'pending',
      'created',
      { transactionId: 1 },
      { release: false },
    );
    return { first, fence };
  }

  /**
   * folha.csv's payout a-1 sent, a copy outra.csv said by a person to correct it (its row
   * `copyRow` covered by a-1), then a-1 ending as `end`: the copy's row b-1 is held for a
   * person; a line of the copy on a-1 itself stays covered, its batch done.
   */
  async function coverEnded(home: PassHome, end: 'failed' | 'conflict', copyRow = 'b-1') {
    await home.withJournal(async (journal) => {
      const { first, fence } = await sentPending(journal);
      const copy = await fileOf(journal, 'outra', cashOutRequest(copyRow));
      await journal.finishBatch(copy, { ...batch, state: 'awaiting-approval' }, undefined, rules);
      const linked = { code: 'linkedCopyBy', by: 'maria', batchId: first } as const;
      await journal.correctBatch(copy, first, linked, rules);
      await journal.setBatchState(copy, 'done');
      await journal.move('a-1', fence, end, 'at the gateway');
    });
  }

  /** The gateway's own transaction under a-1: what `payouts get --order-id a-1` shows. */
  async function atTheGateway(home: PassHome) {
    const client = clientFor(home.sandbox.url);
    await client.createCashOut(cashOutRequest('a-1', { value: 999 }));
    await client.close();
  }

  it.each(['en', 'pt-BR'])(
    'payouts retry, printed for a row whose cover failed, sends it again in the same home (%s)',
    async (language) => {
      const { home, settings, cli } = await settingsHome(language);
      await coverEnded(home, 'failed');
      const printed = `payouts retry a-1 --settings-file "${settings}"`;
      await everywherePrinted(cli, /payouts retry a-1/, printed);
      await runPrinted(printed);
      // In this home's journal: a-1 is sent again.
      expect(await home.withJournal(async (journal) => (await journal.payout('a-1'))?.state)).toBe(
        'retried',
      );
    },
  );

  it.each(['en', 'pt-BR'])(
    'payouts get and approve --new-batch, printed for a row whose cover ended in conflict, reach the same home (%s)',
    async (language) => {
      const { home, settings, cli } = await settingsHome(language);
      await atTheGateway(home);
      await coverEnded(home, 'conflict');
      const get = `payouts get --order-id a-1 --settings-file "${settings}"`;
      await everywherePrinted(cli, /payouts get --order-id a-1/, get);
      await runPrinted(get, 'R$ 9,99');

      const approve = `payouts approve "outra.csv" --new-batch --settings-file "${settings}"`;
      await everywherePrinted(cli, /payouts approve "outra\.csv" --new-batch/, approve);
      // It lists the row, and pays it only with --repeats and their count.
      await runPrinted(approve, 'Ana Souza, R$ 12,34');
    },
  );

  it('payouts retry, printed for a line of a copy whose cover failed, sends it again in the same home', async () => {
    const { home, settings, cli } = await settingsHome('en');
    // The copy names a-1 itself: a line on its orderId, covered by it once linked.
    await coverEnded(home, 'failed', 'a-1');
    // Its batch stays done: status, not a run's summary, shows the line.
    const printed = `payouts retry a-1 --settings-file "${settings}"`;
    await everywherePrinted(cli, /payouts retry a-1/, printed, [['status', 'outra.csv']]);
    await runPrinted(printed);
  });

  it('payouts get, printed by status for a payout pending too long, looks it up at the same gateway', async () => {
    const { home, settings, cli } = await settingsHome('en', {
      PAYOUTS_PENDING_ALERT_AFTER: '1ms',
    });
    await atTheGateway(home);
    await home.withJournal(sentPending);
    const expected = `payouts get --order-id a-1 --settings-file "${settings}"`;
    await everywherePrinted(cli, /payouts get --order-id a-1/, expected, [
      ['status'],
      ['status', 'folha.csv'],
    ]);
    await runPrinted(expected, 'R$ 9,99');
  });

  it.each(['en', 'pt-BR'])(
    'payouts approve --new-batch, printed by validate and run --dry-run for a possible duplicate, reaches the same home (%s)',
    async (language) => {
      const { home, settings, cli } = await paidAna(language);
      // Another file paying Ana the same amount: a run would hold it as a possible duplicate.
      const outra = join(elsewhere(), 'outra.csv');
      writeFileSync(outra, `${HEADER}\r\n${ANA}\r\n`);
      const expected = `payouts approve "outra.csv" --new-batch --settings-file "${settings}"`;
      const approve = /payouts approve "outra\.csv" --new-batch/;
      await everywherePrinted(cli, approve, expected, [['validate', outra]]);
      copyFileSync(outra, join(home.folders.inbox, 'outra.csv'));
      await everywherePrinted(cli, approve, expected, [['run', '--dry-run']]);
      expect((await cli(['run'])).code).toBe(2);
      await runPrinted(expected, 'Ana Souza, R$ 3.500,00');
    },
  );

  it('payouts approve --new-batch, printed in the report of a waiting file for a held row, reaches the same home', async () => {
    const { home, settings, cli } = await paidAna('pt-BR', { PAYOUTS_REQUIRE_APPROVAL: 'true' });
    home.drop('outra.csv', [HEADER, ANA]);
    expect((await cli(['run'])).code).toBe(2);
    const report = readFileSync(join(home.folders.awaiting, 'outra.csv.report.txt'), 'utf8');
    const expected = `payouts approve "outra.csv" --new-batch --settings-file "${settings}"`;
    expectPrinted(report, /payouts approve "outra\.csv" --new-batch/, expected);
    await runPrinted(expected, 'Ana Souza, R$ 3.500,00');
  });

  it('payouts approve --new-batch, printed by retry for a row another file has paid since, reaches the same home', async () => {
    const { home, settings, cli } = await settingsHome('en', { PAYOUTS_INBOX_SETTLE: '1ms' });
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli(['run'])).code).toBe(0);
    const bruno = home.sandbox.ledger().find((entry) => entry.pixKey === 'bruno@example.com');
    expect(home.sandbox.refund(bruno?.orderId ?? '')).toBe(true);
    // Exit 2: a payout came back, which a person must see.
    expect((await cli(['reconcile', '--days', '9999'])).code).toBe(2);
    // The corrected copy pays Bruno at another key of his.
    home.drop('folha_corrigida.csv', [
      HEADER,
      BRUNO.replace(/bruno@example\.com,"/, 'bruno.lima@example.com,"'),
    ]);
    expect((await cli(['run'])).code).toBe(0);
    const retry = await cli(['retry', 'folha.csv', '--by', 'maria']);
    expect(retry.code, retry.stderr).toBe(0);
    const expected = `payouts approve "folha.csv" --new-batch --settings-file "${settings}"`;
    expectPrinted(retry.stdout, /payouts approve "folha\.csv" --new-batch/, expected);
    // It lists Bruno's row, and pays it only with --repeats and their count.
    await runPrinted(expected, 'Bruno Lima');
  });

  it.each(['en', 'pt-BR'])(
    'payouts status, printed by approve and retry when nothing is to answer, lists the same home (%s)',
    async (language) => {
      const { settings, cli } = await paidAna(language);
      const expected = `payouts status --settings-file "${settings}"`;
      for (const args of [
        ['approve', 'folha.csv', '--new-batch'],
        ['retry', 'folha.csv'],
      ]) {
        const refused = await cli(args);
        expect(refused.code, refused.stderr).toBe(1);
        expectPrinted(refused.stderr, /payouts status/, expected);
      }
      await runPrinted(expected, 'folha.csv');
    },
  );
});
