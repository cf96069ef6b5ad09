import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli, runCliOnTerminal } from '../support/cli.js';
import { useTempFolder, dated } from '../support/files.js';
import { sandboxHome } from '../support/home.js';
import {
  TOKEN,
  cashOutRequest,
  closedPort,
  ledgerCounts,
  startLoopbackServer,
} from '../support/gateway.js';

const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));

/** Who `--by Maria` records: the user running the command, the typed name a note beside it. */
const AS_MARIA = `${userInfo().username} (--by Maria)`;

describe('payouts run (sandbox over HTTP, real folders)', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let env: Record<string, string>;
  let home: string;

  beforeEach(async () => {
    // Payouts stay pending: following them is the next issue's work.
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    ({ home, env } = sandboxHome(folder(), sandbox.url, {
      // About sending: payouts are left pending, not followed (see follow.test.ts).
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      // Files are written just before each run: taken at once.
      PAYOUTS_INBOX_SETTLE: '1ms',
    }));
  });
  afterEach(() => sandbox.close());

  const drop = (name: string, content?: string) => {
    const path = join(home, 'inbox', name);
    if (content === undefined) copyFileSync(join(SAMPLES, name), path);
    else writeFileSync(path, content);
  };

  const duplicates = () => [...ledgerCounts(sandbox).entries()].filter(([, n]) => n > 1);

  it('sends every valid row of the samples once, and a rerun sends nothing', async () => {
    for (const name of [
      'payroll-2026-11.csv',
      'fornecedores-2026-11.csv',
      'payroll-with-mistakes.csv',
    ])
      drop(name);
    const first = await runCli(['run', '--json'], { env });
    expect(first.code, first.stderr).toBe(2); // the mistakes file has invalid rows
    const report = JSON.parse(first.stdout) as {
      files: { file: string; state: string; outcome: string; rows: Record<string, number> }[];
    };
    expect(report.files.map((f) => [f.file, f.state, f.outcome, f.rows])).toEqual([
      ['fornecedores-2026-11.csv', 'taken', 'journaled', { pending: 5, skipped: 1 }],
      ['payroll-2026-11.csv', 'taken', 'journaled', { pending: 6 }],
      ['payroll-with-mistakes.csv', 'taken', 'journaled', { pending: 3, invalid: 9 }],
    ]);
    expect(sandbox.ledger()).toHaveLength(14);
    expect(duplicates()).toEqual([]);
    expect(first.stderr).not.toContain(TOKEN);
    // Not a terminal (cron's log): no progress, only the summary.
    expect(first.stderr).not.toContain(' sent · ');

    const again = await runCli(['run', '--json'], { env });
    expect(again.code).toBe(2);
    expect(sandbox.ledger()).toHaveLength(14);
    expect(readdirSync(join(home, 'processing')).sort()).toEqual([
      'fornecedores-2026-11.csv',
      'payroll-2026-11.csv',
      'payroll-with-mistakes.csv',
    ]);
  });

  it('on a terminal, shows a progress bar of this run alone, redrawn in place', async () => {
    drop('payroll-2026-11.csv');
    expect((await runCli(['run'], { env })).code).toBe(3); // 6 pending, not followed
    drop('bonus-2026-11.csv');
    const { code, output } = await runCliOnTerminal(['run'], { env });
    expect(code, output).toBe(3);
    // The 6 of last run are pending still: in play; the 3 new ones sent now.
    expect(output).toMatch(/\r\[-{24}\] 9\/9 sent · 0 settled · [\d.]+ rows\/s\x1b\[K\r?\n/);
    expect(output).toMatch(/^bonus-2026-11\.csv: journaled/m);
  });

  it('the corrected-copy workflow: fixed rows are paid, paid rows are not paid again', async () => {
    const header = 'name,email,phone,cpfCnpj,pixKey,amount';
    const good = [
      'Ana Souza,ana@example.com,11987654321,52998224725,52998224725,"100,00"',
      'Bia Lima,bia@example.com,11987654322,11144477735,bia@example.com,"50,00"',
    ];
    const broken = 'Caio Reis,caio@example,11987654323,39053344705,caio@example.com,"75,00"';
    drop('folha-2026-11.csv', [header, ...good, broken].join('\n'));
    expect((await runCli(['run'], { env })).code).toBe(2);
    expect(sandbox.ledger()).toHaveLength(2);

    // The accountant fixes the e-mail and drops the same file again, under the same name.
    drop(
      'folha-2026-11.csv',
      [header, ...good, broken.replace('caio@example,', 'caio@example.com,')].join('\n'),
    );
    const second = await runCli(['run', '--json'], { env });
    // A corrected copy: the fixed row is sent, the two paid ones are covered, and the
    // first copy's invalid line is marked as corrected: nothing needs a person, and only
    // the payouts still pending (this run does not follow them) make it exit 3.
    expect(second.code, second.stdout + second.stderr).toBe(3);
    expect(sandbox.ledger()).toHaveLength(3);
    expect(duplicates()).toEqual([]);
    const files = (
      JSON.parse(second.stdout) as { files: { file: string; rows: Record<string, number> }[] }
    ).files;
    expect(files.find((f) => f.file.startsWith('folha-2026-11'))?.rows).toMatchObject({
      covered: 2,
    });

    // And the identical file a third time, the same day: a copy with nothing to correct,
    // every row covered, nothing sent.
    drop(
      'folha-2026-11.csv',
      [header, ...good, broken.replace('caio@example,', 'caio@example.com,')].join('\n'),
    );
    const third = await runCli(['run', '--json'], { env });
    expect(third.code).toBe(3); // the first payouts are still pending: not followed here
    const thirdFiles = (
      JSON.parse(third.stdout) as { files: { batchId: number; rows: Record<string, number> }[] }
    ).files;
    expect(thirdFiles.find((f) => f.batchId === 3)?.rows).toEqual({ covered: 3 });
    expect(sandbox.ledger()).toHaveLength(3);
  });

  it('a re-export under another name is held; `payouts approve --new-batch --by` releases it, recorded with who', async () => {
    const header = 'Nome;CPF;E-mail;Celular;Chave Pix;Valor';
    const rows = [
      'Ana Souza;529.982.247-25;ana@example.com;(11) 98765-4321;ana@example.com;3.000,00',
      'Bia Lima;111.444.777-35;bia@example.com;(11) 98765-4322;bia@example.com;2.500,00',
    ];
    drop('folha.csv', [header, ...rows].join('\r\n'));
    expect((await runCli(['run'], { env })).code).toBe(3);
    drop('folha_final.csv', [header, ...rows].join('\n'));
    // Said row by row before anything is sent: by validate, which weighs it against the
    // journal of the home it is given,
    const validated = await runCli(['validate', join(home, 'inbox', 'folha_final.csv'), '--json'], {
      env,
    });
    expect(validated.code, validated.stderr).toBe(2);
    const checked = JSON.parse(validated.stdout) as {
      valid: number;
      held: number;
      holds: { line: number; rule: string; message: string }[];
    };
    expect([checked.valid, checked.held]).toEqual([2, 2]);
    expect(checked.holds.map((hold) => [hold.line, hold.rule])).toEqual([
      [2, 'possible duplicate'],
      [3, 'possible duplicate'],
    ]);
    expect(checked.holds[0]?.message).toContain('folha.csv, line 2');
    expect(
      (await runCli(['validate', join(home, 'inbox', 'folha_final.csv')], { env })).stdout,
    ).toContain(
      'line 2 (possible duplicate): possible duplicate: the same document and amount as folha.csv, line 2',
    );
    // A file named as an earlier batch is said to be held whole by a run, as a whole.
    const nextMonth = join(folder(), 'folha.csv');
    writeFileSync(nextMonth, [header, ...rows].join('\r\n') + '\r\n');
    const named = await runCli(['validate', nextMonth, '--json'], { env });
    expect(named.code).toBe(2);
    expect((JSON.parse(named.stdout) as { journalNotes: string[] }).journalNotes).toEqual([
      expect.stringMatching(/^named as folha\.csv \(batch 1, /),
    ]);
    // and by a dry run.
    const dry = await runCli(['run', '--dry-run', '--json'], { env });
    const planned = (
      JSON.parse(dry.stdout) as {
        files: { file: string; held: number; holds: { line: number; rule: string }[] }[];
      }
    ).files.find((file) => file.file === 'folha_final.csv');
    expect(planned?.held).toBe(2);
    expect(planned?.holds.map((hold) => [hold.line, hold.rule])).toEqual([
      [2, 'possible duplicate'],
      [3, 'possible duplicate'],
    ]);
    expect((await runCli(['run', '--dry-run'], { env })).stdout).toContain(
      'line 2: held (possible duplicate): possible duplicate: the same document and amount as folha.csv, line 2',
    );
    // Run with a --config file: the command it prints must reach the same home.
    const config = join(folder(), 'payouts.json');
    writeFileSync(config, JSON.stringify({ duplicateWindow: '20d' }));
    const held = await runCli(['run', '--config', config], { env });
    expect(held.code).toBe(2);
    expect(held.stdout).toContain(
      '2 rows repeat a payout of another file, by document and amount or by reference',
    );
    expect(held.stdout).toContain(
      `payouts approve "folha_final.csv" --new-batch --config "${config}"`,
    );
    expect(sandbox.ledger()).toHaveLength(2);

    // Both rows repeat payouts: listed, and released only once their count is given.
    const listed = await runCli(['approve', 'folha_final.csv', '--new-batch', '--by', 'Maria'], {
      env,
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('2 held rows repeat a payout already made or under way');
    expect(listed.stdout).toContain('Those 2 rows stay held.');
    expect(listed.stdout).not.toContain('released by Maria');
    const approved = await runCli(
      ['approve', 'folha_final.csv', '--new-batch', '--repeats', '2', '--by', 'Maria'],
      { env },
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(
      `2 payouts, R$ 5.500,00, released by ${AS_MARIA} as new payments`,
    );
    expect((await runCli(['run'], { env })).code).toBe(3);
    expect(sandbox.ledger()).toHaveLength(4);
    expect(duplicates()).toEqual([]);
    const journal = await openJournal(sqliteJournalAt(join(home, 'journal.db')));
    try {
      const orderId = (await journal.batches('folha_final.csv'))[0]?.id;
      const released = [];
      for (const entry of await journal.resultEntries(orderId ?? 0, 0, 10)) {
        for (const move of await journal.history(entry.orderId ?? '')) {
          if (move.from === 'held' && move.to === 'queued') released.push(move);
        }
      }
      expect(released).toHaveLength(2);
      expect(released[0]?.reason).toEqual({ code: 'releasedNewBy', by: AS_MARIA, repeats: 2 });
    } finally {
      await journal.close();
    }
    const status = await runCli(['status', 'folha_final.csv'], { env });
    expect(status.stdout).toMatch(
      /released by \S+ \(--by Maria\) at \d{4}-\d\d-\d\dT[\d:]+[+-]\d\d:\d\d: 2 held rows are new payments; 2 of them repeat payouts, as the person confirmed: line 2 \(Ana Souza/,
    );
    const again = await runCli(['approve', 'folha_final.csv', '--new-batch'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      'has rows held as possible duplicates, for its name or as identical rows: nothing changed',
    );
  });

  it('a refused token ends the run with exit 1 and sends nothing; the next run with the right token sends all', async () => {
    drop('payroll-2026-11.csv');
    const refused = await runCli(['run'], { env: { ...env, PAYOUTS_TOKEN: 'wrong-one' } });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('refused our credentials');
    expect(refused.stdout + refused.stderr).not.toContain('wrong-one');
    expect(sandbox.ledger()).toHaveLength(0);
    const fixed = await runCli(['run'], { env });
    expect(fixed.code).toBe(3);
    expect(sandbox.ledger()).toHaveLength(6);
    expect(duplicates()).toEqual([]);
  });

  it('a batch whose reading was cut short and whose file is gone is reported; the same file dropped again finishes it', async () => {
    const content =
      'orderId,name,email,phone,cpfCnpj,pixKey,amount\n' +
      'lost-1,Ana,ana@example.com,11987654321,52998224725,52998224725,"10,00"\n' +
      'lost-2,Bia,bia@example.com,11987654321,52998224725,52998224725,"20,00"\n';
    // What a run killed while reading lost.csv leaves, after someone removed the file.
    const journal = await openJournal(sqliteJournalAt(join(home, 'journal.db')));
    const sha256 = createHash('sha256').update(content).digest('hex');
    const { batchId } = await journal.batchForFile({
      name: 'lost.csv',
      nameKey: 'lost',
      sha256,
      arrived: true,
    });
    const person = { name: 'Ana', email: 'ana@example.com', phone: '+5511987654321' };
    await journal.admitPayouts(
      batchId,
      [{ line: 2, request: cashOutRequest('lost-1', { value: 1000, person }) }],
      { duplicateWindowMs: 0 },
    );
    await journal.close();

    const reported = await runCli(['run'], { env });
    expect(reported.code, reported.stderr).toBe(2);
    expect(reported.stdout).toContain(
      'a run stopped while reading lost.csv, and the file is no longer in processing/',
    );
    expect(sandbox.ledger()).toHaveLength(0);

    drop('lost.csv', content);
    const finished = await runCli(['run'], { env });
    expect(finished.code, finished.stdout).toBe(3);
    expect([...ledgerCounts(sandbox)]).toEqual([
      ['lost-1', 1],
      ['lost-2', 1],
    ]);
    expect(sandbox.ledger().find((t) => t.orderId === 'lost-1')).toMatchObject({
      valueCents: 1000,
    });
  });

  it('a file still being written is left in the inbox (exit 3) until it settles or a .done says it is complete', async () => {
    const settling = { ...env, PAYOUTS_INBOX_SETTLE: '1m' };
    drop('payroll-2026-11.csv');
    const early = await runCli(['run'], { env: settling });
    expect(early.code, early.stdout + early.stderr).toBe(3);
    expect(early.stdout).toContain('payroll-2026-11.csv: left in the inbox for a later run');
    expect(early.stdout).toContain(
      'waiting for it to settle: it is taken once its size and time have not changed for 1m (inboxSettle)',
    );
    expect(sandbox.ledger()).toHaveLength(0);
    writeFileSync(join(home, 'inbox', 'payroll-2026-11.csv.done'), '');
    const done = await runCli(['run'], { env: settling });
    expect(done.code, done.stdout + done.stderr).toBe(3); // sent, left pending
    expect(sandbox.ledger()).toHaveLength(6);
  });

  it('a damaged file is rejected whole with its reason, and a held one sends nothing', async () => {
    drop('empty.csv', '');
    drop(
      'held.csv',
      'name,email,phone,cpfCnpj,pixKey,amount\nAna,ana@example.com,11987654321,52998224725,52998224725,"10,00"\nTotal,,,,,"99,00"\n',
    );
    const result = await runCli(['run', '--json'], { env });
    expect(result.code).toBe(2);
    expect(existsSync(join(home, 'rejected', 'empty.csv'))).toBe(true);
    expect(readFileSync(join(home, 'rejected', 'empty.csv.reason.txt'), 'utf8')).toBe(
      'is empty (0 bytes)\n',
    );
    const files = (
      JSON.parse(result.stdout) as {
        files: { file: string; outcome: string; rows: Record<string, number> }[];
      }
    ).files;
    expect(files.find((f) => f.file === 'empty.csv')).toMatchObject({
      state: 'unusable',
      outcome: 'cannot be used: moved to rejected/',
    });
    expect(files.find((f) => f.file === 'held.csv')).toMatchObject({
      state: 'held',
      outcome: 'held: nothing sent',
      rows: { held: 1, skipped: 1 },
    });
    expect(sandbox.ledger()).toHaveLength(0);

    // The next run (cron's, say) says again why the file is held.
    const again = await runCli(['run', '--json'], { env });
    expect(again.code).toBe(2);
    expect(
      (JSON.parse(again.stdout) as { files: { outcome: string; problems: string[] }[] }).files,
    ).toEqual([
      expect.objectContaining({
        state: 'resumed',
        outcome: 'resumed',
        problems: [expect.stringMatching(/control total/i)],
      }),
    ]);
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('holds a batch the balance does not cover, sends nothing of it, and releases it once funded', async () => {
    drop('payroll-2026-11.csv'); // R$ 27.111,15
    const poor = await startSandbox({
      token: TOKEN,
      settleDelayMs: 3_600_000,
      initialBalanceCents: 1_000_000,
    });
    try {
      const held = await runCli(['run', '--json'], { env: { ...env, PAYOUTS_BASE_URL: poor.url } });
      expect(held.code).toBe(2);
      const file = (
        JSON.parse(held.stdout) as {
          files: { outcome: string; rows: object; problems: string[] }[];
        }
      ).files[0];
      expect(file).toMatchObject({
        state: 'held',
        outcome: 'held: the balance does not cover it',
        rows: { held: 6 },
      });
      expect(file?.problems[0]).toContain(
        "the balance leaves R$ 10.000,00 for this batch's R$ 27.111,15 (balanceCheck: block)",
      );
      expect(poor.ledger()).toHaveLength(0);
    } finally {
      await poor.close();
    }
    const funded = await runCli(['run'], { env });
    expect(funded.code).toBe(3);
    expect(sandbox.ledger()).toHaveLength(6);
    expect(duplicates()).toEqual([]);
  });

  it('a gateway it cannot reach for the balance is an outage: nothing sent, rows queued, run again later (exit 3), run after run', async () => {
    drop('payroll-2026-11.csv');
    const away = { ...env, PAYOUTS_BASE_URL: `http://127.0.0.1:${await closedPort()}` };
    type Report = {
      stopped: string | null;
      files: { outcome: string; rows: object; problems: string[] }[];
    };
    const first = await runCli(['run', '--json'], { env: away });
    expect(first.code).toBe(3);
    const report = JSON.parse(first.stdout) as Report;
    expect(report.stopped).toMatch(
      /^the gateway could not be reached to read the balance \(unavailable: .*ECONNREFUSED.*\): nothing was sent; run again later$/,
    );
    expect(report.files[0]).toMatchObject({ outcome: 'journaled', rows: { queued: 6 } });
    const result = readFileSync(
      join(home, 'results', dated('payroll-2026-11.csv', 'result')),
      'utf8',
    );
    expect(result).not.toContain('did not cover');
    expect(result).not.toContain('held');

    // The next run, still cut off, says so again.
    const again = await runCli(['run', '--json'], { env: away });
    expect(again.code).toBe(3);
    expect((JSON.parse(again.stdout) as Report).stopped).toMatch(/could not be reached/);
    expect(sandbox.ledger()).toHaveLength(0);

    const back = await runCli(['run'], { env });
    expect(back.code).toBe(3); // sent, still pending
    expect(sandbox.ledger()).toHaveLength(6);
  });

  it('a home that sends to a real gateway is never run against the embedded sandbox, nor the reverse', async () => {
    drop('payroll-2026-11.csv');
    expect((await runCli(['run'], { env })).code).toBe(3); // sent, pending
    // The environment file was not loaded (cron): no baseUrl, no token.
    const { PAYOUTS_BASE_URL: _url, PAYOUTS_TOKEN: _token, ...lost } = env;
    drop('fornecedores-2026-11.csv');
    const missing = await runCli(['run'], { env: lost });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no gateway is configured: baseUrl and token are missing');
    // Even with the sandbox asked for, this home's journal refuses it.
    const refused = await runCli(['run', '--sandbox'], { env: lost });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `no baseUrl is set, but the journal in ${home} sends to a real gateway: refusing to run it against the embedded sandbox`,
    );
    const reconcile = await runCli(['reconcile', '--days', '1', '--sandbox'], { env: lost });
    expect(reconcile.code).toBe(1);
    expect(reconcile.stderr).toContain('refusing to run it against the embedded sandbox');
    // baseUrl without a token is a mistake too, not a sandbox run.
    const tokenless = await runCli(['run'], { env: { ...lost, PAYOUTS_BASE_URL: sandbox.url } });
    expect(tokenless.code).toBe(1);
    expect(tokenless.stderr).toContain('config: token is required when baseUrl is set');
    expect(sandbox.ledger()).toHaveLength(6);

    // A home first used with the embedded sandbox is refused by the real gateway.
    const trial = join(folder(), 'trial');
    const trialEnv = { ...lost, PAYOUTS_HOME: trial };
    mkdirSync(join(trial, 'inbox'), { recursive: true });
    copyFileSync(join(SAMPLES, 'payroll-2026-11.csv'), join(trial, 'inbox', 'p.csv'));
    const fake = await runCli(['run', '--sandbox'], { env: trialEnv });
    expect(fake.stderr).toContain('SANDBOX: no real money moves');
    const real = await runCli(['run'], { env: { ...env, PAYOUTS_HOME: trial } });
    expect(real.code).toBe(1);
    expect(real.stderr).toContain(
      `the journal in ${trial} has only sent to the embedded sandbox, where no real money moves`,
    );
    expect(sandbox.ledger()).toHaveLength(6);
  });

  it('a wrong address stops the run with what to check, not as a balance it could not read', async () => {
    drop('payroll-2026-11.csv');
    const website = await startLoopbackServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    });
    try {
      const result = await runCli(['run'], { env: { ...env, PAYOUTS_BASE_URL: website.url } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /the address answered, but not as the gateway does .*Check baseUrl/,
      );
      expect(result.stdout + result.stderr).not.toContain('the balance could not be read');
    } finally {
      await website.close();
    }
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('--dry-run says what would be sent, and moves, journals and sends nothing', async () => {
    drop('payroll-2026-11.csv');
    drop('payroll-with-mistakes.csv');
    const dry = await runCli(['run', '--dry-run', '--json'], { env });
    expect(dry.code).toBe(2); // the mistakes
    const plan = JSON.parse(dry.stdout) as {
      dryRun: boolean;
      files: { file: string; wouldSend: number; invalid: number }[];
    };
    expect(plan.files.map((f) => [f.file, f.wouldSend, f.invalid])).toEqual([
      ['payroll-2026-11.csv', 6, 0],
      ['payroll-with-mistakes.csv', 3, 9],
    ]);
    expect(sandbox.ledger()).toHaveLength(0);
    expect(readdirSync(join(home, 'inbox')).sort()).toEqual([
      'payroll-2026-11.csv',
      'payroll-with-mistakes.csv',
    ]);
    expect(existsSync(join(home, 'journal.db'))).toBe(false);

    await runCli(['run'], { env });
    drop('payroll-2026-11.csv');
    const again = JSON.parse((await runCli(['run', '--dry-run', '--json'], { env })).stdout) as {
      files: { file: string; wouldSend: number; held: number }[];
    };
    expect(
      again.files.find((f) => f.file === 'payroll-2026-11.csv' && f.held === 6)?.wouldSend,
    ).toBe(0);
  });
});
