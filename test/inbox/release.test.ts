/**
 * Releasing held rows as a person does: by copying the commands the tool printed. The
 * sandbox's ledger is the judge: whatever printed command is followed, nobody is paid
 * twice and the new row is paid.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { runCli } from '../support/cli.js';
import { approveCommands } from '../support/printed.js';
import { topUp } from '../support/gateway.js';
import { passHome, type PassHome } from '../support/pass-home.js';

// Each test is a dozen CLI passes (15 to 20 s here alone): a bound far from that, so a
// busy machine lengthens a test rather than failing it.
vi.setConfig({ testTimeout: 120_000 });

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
/** Who `--by maria` records: the user running the command, the typed name a note beside it. */
const AS_MARIA = `${userInfo().username} (--by maria)`;
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
const CARLA =
  'Carla Dias,390.533.447-05,carla@example.com,(31) 99123-4567,carla@example.com,"4.450,50"';
const DIEGO =
  'Diego Reis,123.456.789-09,diego@example.com,(41) 99345-6789,diego@example.com,"1.999,99"';
const PAYROLL = 1_045_050;

/** Cashouts the gateway created, by Pix key. */
function paidTo(home: PassHome): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of home.sandbox.ledger()) {
    if (entry.object !== 'cashout') continue;
    counts.set(entry.pixKey ?? '', (counts.get(entry.pixKey ?? '') ?? 0) + 1);
  }
  return counts;
}

/** folha.csv paid; the same file again with one forgotten employee added, held. */
async function forgottenEmployee(language: string): Promise<{
  home: PassHome;
  summary: string;
  /** What `validate` and `run --dry-run` said of the file before the run. */
  validated: string;
  rehearsed: string;
}> {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_LANGUAGE: language };
  home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA]);
  expect((await runCli(['run'], { env })).code).toBe(0);
  home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA, DIEGO]);
  const validated = await runCli(['validate', join(home.folders.inbox, 'folha.csv')], { env });
  const rehearsed = await runCli(['run', '--dry-run'], { env });
  const held = await runCli(['run'], { env });
  expect(held.code).toBe(2);
  return { home, summary: held.stdout, validated: validated.stdout, rehearsed: rehearsed.stdout };
}

/** The lines that give an answer and what it pays (not a held row's own words). */
const readings = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes('payouts approve') && !/^line \d|^linha \d/.test(line));

describe.each(['en', 'pt-BR'])('the hints of a held file (%s)', (language) => {
  it('every approve command the summary prints pays the forgotten employee once and nobody twice', async () => {
    const { home: first, summary, validated, rehearsed } = await forgottenEmployee(language);
    // validate and run --dry-run say the same answers and money before the file is run.
    expect(readings(summary)).toHaveLength(2);
    expect(readings(validated)).toEqual(readings(summary));
    if (language === 'en') expect(readings(rehearsed)).toEqual(readings(summary));
    const commands = approveCommands(summary);
    expect(commands.length).toBeGreaterThan(0);
    for (const [index, command] of commands.entries()) {
      const home = index === 0 ? first : (await forgottenEmployee(language)).home;
      const env = { ...home.env(), PAYOUTS_LANGUAGE: language };
      const approved = await runCli(command, { env });
      expect(approved.code, approved.stderr).toBe(0);
      // The repeats a new batch leaves held keep the run asking for a person (exit 2).
      await runCli(['run'], { env });
      expect([...paidTo(home).values()], command.join(' ')).toEqual([1, 1, 1, 1]);
      expect(
        home.sandbox
          .ledger()
          .filter((entry) => entry.object === 'cashout')
          .reduce((sum, entry) => sum + entry.valueCents, 0),
      ).toBe(PAYROLL + 199_999);
    }
    // Both readings are offered, the correction first.
    expect(commands.map((command) => command.slice(2).join(' '))).toEqual([
      '--corrects 1',
      '--new-batch',
    ]);
  });
});

describe('approve --new-batch', () => {
  it('lists each row that repeats a payout before releasing, frees only the new row, and frees the repeats only for their count', async () => {
    const { home } = await forgottenEmployee('en');
    const env = home.env();
    const approve = (...flags: string[]) =>
      runCli(['approve', 'folha.csv', '--new-batch', '--by', 'maria', ...flags], { env });

    const fresh = await approve();
    expect(fresh.code, fresh.stderr).toBe(0);
    const lines = fresh.stdout.split('\n');
    expect(lines[0]).toBe(
      '3 held rows repeat a payout already made or under way (the same document and amount):',
    );
    expect(lines.slice(1, 4)).toEqual([
      expect.stringMatching(
        /^ {2}line 2: Ana Souza, R\$ 3\.500,00: repeats folha\.csv, line 2, journaled on \d{4}-\d\d-\d\d \d\d:\d\d UTC \(now paid\)$/,
      ),
      expect.stringMatching(/^ {2}line 3: Bruno Lima, R\$ 2\.500,00: repeats folha\.csv, line 3, /),
      expect.stringMatching(/^ {2}line 4: Carla Dias, R\$ 4\.450,50: repeats folha\.csv, line 4, /),
    ]);
    expect(lines[4]).toBe(
      `folha.csv (batch 2): 1 payout, R$ 1.999,99, released by ${AS_MARIA} as new payments; the next run sends them.`,
    );
    expect(lines[5]).toContain('Those 3 rows stay held.');
    expect(approveCommands(fresh.stdout)).toEqual([]);

    const miscounted = await approve('--repeats', '2');
    expect(miscounted.code).toBe(1);
    expect(miscounted.stderr).toContain(
      '--repeats 2 is not the count of held rows that repeat a payout (3, listed above): nothing released',
    );
    await runCli(['run'], { env });
    expect([...paidTo(home).values()]).toEqual([1, 1, 1, 1]);

    const counted = await approve('--repeats', '3');
    expect(counted.code, counted.stderr).toBe(0);
    expect(counted.stdout).toContain('Those 3 rows were released too, as you said (--repeats 3)');
    expect((await runCli(['run'], { env })).code).toBe(0);
    expect([...paidTo(home).values()]).toEqual([2, 2, 2, 1]);
    const status = await runCli(['status', 'folha.csv'], { env });
    expect(status.stdout).toContain(`released by ${AS_MARIA} at `);
    expect(status.stdout).toMatch(
      / at [\dT:.Z-]+: 3 held rows are new payments; 3 of them repeat payouts, as the person confirmed: line 2 \(Ana Souza, R\$ 3\.500,00\) repeats folha\.csv line 2/,
    );
  });
});

describe('approve --new-batch, row by row', () => {
  it('a weekly file of false alarms and one real duplicate: all but that line are released, and only they are paid again', async () => {
    const home = await passHome();
    const env = home.env();
    home.drop('semana-47.csv', [HEADER, ANA, BRUNO, CARLA, DIEGO]);
    expect((await runCli(['run'], { env })).code).toBe(0);
    // Next week: the same four are due again, but line 4 (Carla) is last week's invoice sent again.
    home.drop('semana-48.csv', [HEADER, ANA, BRUNO, CARLA, DIEGO]);
    expect((await runCli(['run'], { env })).code).toBe(2);

    const approved = await runCli(
      ['approve', 'semana-48.csv', '--new-batch', '--except', '4', '--repeats', '3'],
      { env },
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('3 held rows repeat a payout');
    expect(approved.stdout).not.toContain('Carla Dias');
    await runCli(['run'], { env });
    expect(paidTo(home)).toEqual(
      new Map([
        ['ana@example.com', 2],
        ['bruno@example.com', 2],
        ['carla@example.com', 1],
        ['diego@example.com', 2],
      ]),
    );

    // A line named that is not held, or the wrong count for the lines named: nothing freed.
    const wrongLine = await runCli(['approve', 'semana-48.csv', '--new-batch', '--rows', '2,4'], {
      env,
    });
    expect(wrongLine.code).toBe(1);
    expect(wrongLine.stderr).toContain('line 2 is not held');
    const carla = await runCli(
      ['approve', 'semana-48.csv', '--new-batch', '--rows', '4', '--repeats', '1'],
      { env },
    );
    expect(carla.code, carla.stderr).toBe(0);
    await runCli(['run'], { env });
    expect(paidTo(home).get('carla@example.com')).toBe(2);
  });
});

/** With approval on, folha.csv (Ana and Bruno) approved by maria and paid. */
async function approvedPayroll(): Promise<{ home: PassHome; env: Record<string, string> }> {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_REQUIRE_APPROVAL: 'true' };
  home.drop('folha.csv', [HEADER, ANA, BRUNO]);
  // Waiting for a person: exit 2.
  expect((await runCli(['run'], { env })).code).toBe(2);
  expect((await runCli(['approve', 'folha.csv', '--by', 'maria'], { env })).code).toBe(0);
  expect((await runCli(['run'], { env })).code).toBe(0);
  return { home, env };
}

/** With approval on, folha.csv paid; the same file with Diego added, held whole for its name and waiting. */
async function forgottenEmployeeAwaiting(language: string): Promise<{
  home: PassHome;
  env: Record<string, string>;
  summary: string;
}> {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_REQUIRE_APPROVAL: 'true', PAYOUTS_LANGUAGE: language };
  home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA]);
  expect((await runCli(['run'], { env })).code).toBe(2);
  expect((await runCli(['approve', 'folha.csv'], { env })).code).toBe(0);
  expect((await runCli(['run'], { env })).code).toBe(0);
  home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA, DIEGO]);
  const held = await runCli(['run'], { env });
  expect(held.code).toBe(2);
  return { home, env, summary: held.stdout };
}

describe.each(['en', 'pt-BR'])('with approval on, one answer (%s)', (language) => {
  it('each answer the summary prints approves the file too: one command, then one run, pays the new row once and nobody twice', async () => {
    const opened = await forgottenEmployeeAwaiting(language);
    // The summary and the report say so beside the answers.
    const [summarySays, reportSays] =
      language === 'en'
        ? [
            'an answer above that frees a row approves the file too',
            'An answer to its held rows approves it too, once the answer frees a row: payouts approve "folha.csv" with --new-batch',
          ]
        : [
            'uma resposta acima que libera uma linha aprova o arquivo também',
            'Uma resposta às linhas retidas dele também o aprova, quando libera uma linha: payouts approve "folha.csv" com --new-batch',
          ];
    expect(opened.summary).toContain(summarySays);
    expect(
      readFileSync(join(opened.home.folders.awaiting, 'folha.csv.report.txt'), 'utf8'),
    ).toContain(reportSays);
    // The answers to its held rows, not the bare approval of the file.
    const answers = approveCommands(opened.summary).filter((command) => command.length > 2);
    expect(answers.map((command) => command.slice(2).join(' '))).toEqual([
      '--corrects 1',
      '--new-batch',
    ]);
    for (const [index, command] of answers.entries()) {
      const { home, env } = index === 0 ? opened : await forgottenEmployeeAwaiting(language);
      const answered = await runCli(command, { env });
      expect(answered.code, answered.stderr).toBe(0);
      const ran = await runCli(['run'], { env });
      expect(readdirSync(home.folders.awaiting), command.join(' ')).toEqual([]);
      // Diego once; the three rows the first file paid, never again.
      expect(paidTo(home), command.join(' ')).toEqual(
        new Map([
          ['ana@example.com', 1],
          ['bruno@example.com', 1],
          ['carla@example.com', 1],
          ['diego@example.com', 1],
        ]),
      );
      // The correction leaves nothing held; the new payroll leaves the three repeats for a person.
      expect(ran.code, ran.stdout).toBe(command.includes('--corrects') ? 0 : 2);
    }
  });
});

describe('with approval on, an answer that frees nothing or picks lines', () => {
  it('leaves the file waiting, saying the command that approves it; the repeats said with their count approve it', async () => {
    const { home, env } = await approvedPayroll();
    // Ana again, the same amount within the window: a repeat; Diego is new.
    home.drop('bonus.csv', [HEADER, ANA, DIEGO]);
    expect((await runCli(['run'], { env })).code).toBe(2);
    const nothing = await runCli(['approve', 'bonus.csv', '--new-batch'], { env });
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stdout).toContain(
      'bonus.csv still waits for approval: nothing of it is sent until a person approves the rest of it: payouts approve "bonus.csv"',
    );
    expect((await runCli(['run'], { env })).code).toBe(2);
    expect(paidTo(home).get('diego@example.com')).toBeUndefined();
    // Ana due again, said with its count: that answer frees her, and approves the file.
    const both = await runCli(['approve', 'bonus.csv', '--new-batch', '--repeats', '1'], { env });
    expect(both.code, both.stderr).toBe(0);
    expect((await runCli(['run'], { env })).code).toBe(0);
    expect(paidTo(home)).toEqual(
      new Map([
        ['ana@example.com', 2],
        ['bruno@example.com', 1],
        ['diego@example.com', 1],
      ]),
    );

    const { home: picked, env: pickedEnv } = await forgottenEmployeeAwaiting('pt-BR');
    const diego = await runCli(['approve', 'folha.csv', '--new-batch', '--rows', '5'], {
      env: pickedEnv,
    });
    expect(diego.code, diego.stderr).toBe(0);
    expect(diego.stdout).toContain(
      'folha.csv continua aguardando aprovação: nada dele é enviado até uma pessoa aprovar o resto dele: payouts approve "folha.csv"',
    );
    await runCli(['run'], { env: pickedEnv });
    expect(paidTo(picked).get('diego@example.com')).toBeUndefined();
    expect((await runCli(['approve', 'folha.csv'], { env: pickedEnv })).code).toBe(0);
    await runCli(['run'], { env: pickedEnv });
    expect([...paidTo(picked).values()]).toEqual([1, 1, 1, 1]);
  });
});

describe('approve, twice', () => {
  it('says the file was approved already, by whom, and what became of its rows', async () => {
    const { env } = await approvedPayroll();
    const again = await runCli(['approve', 'folha.csv'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^payouts approve: folha\.csv \(batch 1\) was approved by \S+ \(--by maria\) on \d{4}-\d\d-\d\d \d\d:\d\d UTC: 2 paid \(R\$ 6\.000,00\); nothing changed\n$/,
    );
  });
});

describe('a released row, weighed again as it is sent', () => {
  it('released as repeating nothing, it waits for the balance while another file pays that person that amount: it is held naming that payout, not paid', async () => {
    const home = await passHome({ balanceCents: 8_000_00 });
    home.drop('folha.csv', [HEADER, ANA]);
    expect((await home.run()).exit).toBe(0);
    // Diego and Carla are new: the file is held whole only for its name.
    home.drop('folha.csv', [HEADER, ANA, DIEGO, CARLA]);
    expect((await home.run()).exit).toBe(2);
    const approved = await runCli(['approve', 'folha.csv', '--new-batch'], { env: home.env() });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('2 payouts');
    // R$ 4.500,00 left cannot pay both: the batch waits for the balance.
    expect((await home.run()).exit).toBe(2);
    expect(paidTo(home).get('diego@example.com')).toBeUndefined();

    // Three weeks later a bonus pays Diego the same amount (the waiting row is older than
    // duplicateWindow, so the bonus is not held for it); then the balance is topped up.
    home.advance(21 * 24 * 60 * 60 * 1000);
    home.drop('bonus.csv', [HEADER, DIEGO]);
    await home.run();
    expect(paidTo(home).get('diego@example.com')).toBe(1);
    await topUp(home.sandbox.url, 100_000_00);
    expect((await home.run()).exit).toBe(2);

    expect(paidTo(home)).toEqual(
      new Map([
        ['ana@example.com', 1],
        ['diego@example.com', 1],
        ['carla@example.com', 1],
      ]),
    );
    const held = await home.withJournal(async (journal) => {
      const [, copy] = await journal.batches('folha.csv');
      return journal.heldRowsOfBatch(copy?.id ?? 0);
    });
    expect(held.map((row) => [row.line, row.reason, row.repeats?.fileName])).toEqual([
      [2, 'duplicate', 'folha.csv'],
      [3, 'duplicate', 'bonus.csv'],
    ]);
  });
});

describe('approve --corrects, counting what it sends', () => {
  it('a row of the copy that another file has paid is not counted as to be sent: it is named as held for that file', async () => {
    const home = await passHome();
    const env = home.env();
    // Yesterday: an advance pays Carla; the payroll's line for her is held for it.
    home.advance(-30 * 60 * 60 * 1000);
    home.drop('adiantamento.csv', [HEADER, CARLA]);
    expect((await home.run()).exit).toBe(0);
    home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA]);
    expect((await home.run()).exit).toBe(2);
    // Today, the payroll again with Diego added: held whole for its name.
    home.advance(30 * 60 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, BRUNO, CARLA, DIEGO]);
    expect((await runCli(['run'], { env })).code).toBe(2);

    // As the summary names it: two files named folha.csv are open, the copy is batch 3.
    const approved = await runCli(
      ['approve', 'folha.csv', '--batch', '3', '--corrects', '2', '--by', 'maria'],
      { env },
    );
    expect(approved.code, approved.stderr).toBe(0);
    await runCli(['run'], { env });
    // Each of the four paid once: Carla by the advance only.
    expect([...paidTo(home).values()]).toEqual([1, 1, 1, 1]);
    const lines = approved.stdout.split('\n');
    expect(lines[0]).toBe(
      `folha.csv (batch 3): linked as a corrected copy of batch 2 by ${AS_MARIA}; 1 payout to be sent by the next run.`,
    );
    expect(lines[1]).toBe('1 row stays held:');
    expect(lines[2]).toMatch(
      /^ {2}line 4: Carla Dias, R\$ 4\.450,50: possible duplicate: the same document and amount as adiantamento\.csv, line 2, /,
    );
  });
});

describe('the run summary lists every held row', () => {
  const supplier = (n: number) =>
    `Fornecedor ${n},${withCheckDigits(String(100_000_000 + n * 7_919).slice(0, 9))},f${n}@example.com,(11) 98765-43${String(n).padStart(2, '0')},f${n}@example.com,"${100 + n},00"`;

  it.each([
    [
      'en',
      /^ {2}line (\d+): Fornecedor (\d+), R\$ (\d+),00: possible duplicate: .*semana-47\.csv, line \1,/,
      '  … and 2 more held rows, all in the result file',
    ],
    [
      'pt-BR',
      /^ {2}linha (\d+): Fornecedor (\d+), R\$ (\d+),00: possível duplicata: .*semana-47\.csv, linha \1,/,
      '  … e mais 2 linhas retidas, todas no arquivo de resultado',
    ],
  ])(
    '%s: each with its line, name, amount and reason, up to 20, then how many more',
    async (language, row, more) => {
      const home = await passHome();
      const env = { ...home.env(), PAYOUTS_LANGUAGE: language };
      const rows = Array.from({ length: 22 }, (_, n) => supplier(n + 1));
      home.drop('semana-47.csv', [HEADER, ...rows]);
      expect((await runCli(['run'], { env })).code).toBe(0);
      home.drop('semana-48.csv', [HEADER, ...rows]);
      const held = await runCli(['run'], { env });
      expect(held.code).toBe(2);
      const listed = held.stdout.split('\n').filter((line) => row.test(line));
      expect(listed.map((line) => row.exec(line)?.slice(1, 4).map(Number))).toEqual(
        Array.from({ length: 20 }, (_, n) => [n + 2, n + 1, 101 + n]),
      );
      expect(held.stdout.split('\n')).toContain(more);
    },
  );
});

describe('the approval report lists every held row', () => {
  it('each with its line, name, amount and reason, not one example', async () => {
    const { home, env } = await approvedPayroll();
    home.drop('folha_final.csv', [HEADER, ANA, BRUNO, DIEGO]);
    expect((await runCli(['run'], { env })).code).toBe(2);
    const report = readFileSync(
      join(home.folders.awaiting, 'folha_final.csv.report.txt'),
      'utf8',
    ).split('\n');
    const held = report.findIndex((line) => line.startsWith('  2 held (R$ 6.000,00)'));
    expect(report[held]).toBe('  2 held (R$ 6.000,00)');
    expect(report.slice(held + 1, held + 3)).toEqual([
      expect.stringMatching(
        /^ {4}line 2: Ana Souza, R\$ 3\.500,00: possible duplicate: the same document and amount as folha\.csv, line 2, /,
      ),
      expect.stringMatching(
        /^ {4}line 3: Bruno Lima, R\$ 2\.500,00: possible duplicate: the same document and amount as folha\.csv, line 3, /,
      ),
    ]);
  });
});

describe('approve --corrects names a batch this file may correct', () => {
  it('a mistyped batch number of an unrelated file is refused, and that file is still paid', async () => {
    const home = await passHome({ balanceCents: 600_000 });
    const env = home.env();
    // Batch 1: the payroll, paid.
    home.drop('folha.csv', [HEADER, ANA, DIEGO]);
    expect((await home.run()).exit).toBe(0);
    // Batch 2: a supplier the balance left does not cover, waiting to be sent.
    const EVA = `Eva Lima,${withCheckDigits('987654321')},eva@example.com,(11) 98765-4329,eva@example.com,"5.000,00"`;
    home.drop('fornecedor.csv', [HEADER, EVA]);
    expect((await home.run()).exit).toBe(2);
    // Batch 3: the payroll's copy with Carla added, held for its name.
    home.advance(2 * 60 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, DIEGO, CARLA]);
    expect((await runCli(['run'], { env })).code).toBe(2);

    // Batch 2 typed for batch 1: refused, nothing changed.
    const typo = await runCli(['approve', 'folha.csv', '--corrects', '2', '--by', 'maria'], {
      env,
    });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(
      'payouts approve: batch 2 (fornecedor.csv) is not a file folha.csv repeats: a corrected copy corrects a file of its name or one whose payouts it repeats (here batch 1, folha.csv). Nothing changed.',
    );
    // Eva's payout is still due: the top-up pays her once.
    await topUp(home.sandbox.url, 1_000_000);
    const topped = await runCli(['run'], { env });
    expect(paidTo(home).get('eva@example.com'), topped.stdout + topped.stderr).toBe(1);

    const right = await runCli(['approve', 'folha.csv', '--corrects', '1', '--by', 'maria'], {
      env,
    });
    expect(right.code, right.stderr).toBe(0);
    await runCli(['run'], { env });
    expect([...paidTo(home).values()]).toEqual([1, 1, 1, 1]);
  });
});
