/**
 * A file waiting for approval whose rows a corrected copy replaced: from then on it is not
 * said to await approval, its file leaves awaiting-approval/ once the copy is answered,
 * and `approve` on it says what became of it. Every command run is one the tool printed;
 * the sandbox's ledger is the judge: nothing paid twice, nothing lost.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/clock.js';
import { runCli } from '../support/cli.js';
import { approveCommands } from '../support/printed.js';
import { passHome, type PassHome } from '../support/pass-home.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
const BRUNO_RAISE =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.700,00"';
const CARLA =
  'Carla Dias,390.533.447-05,carla@example.com,(31) 99123-4567,carla@example.com,"4.450,50"';

/** Cashouts the gateway created: Pix key and amount, with how many times each. */
function paid(home: PassHome): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of home.sandbox.ledger()) {
    if (entry.object !== 'cashout') continue;
    const key = `${entry.pixKey ?? ''} ${entry.valueCents}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The copy's rows, each paid once; the replaced file's Bruno at R$ 2.500,00 never. */
const COPY_PAID_ONCE = new Map([
  ['ana@example.com 350000', 1],
  ['bruno@example.com 270000', 1],
  ['carla@example.com 445050', 1],
]);

/** A home with approval on, whose commands run on its clock. */
async function approvalHome(language = 'en') {
  const home = await passHome();
  const env = { ...home.env(), PAYOUTS_REQUIRE_APPROVAL: 'true', PAYOUTS_LANGUAGE: language };
  const cli = (...args: string[]) =>
    runCli(args, { env, clock: { now: home.now, sleep: systemClock.sleep } });
  return { home, cli };
}

const waitingFiles = (home: PassHome) =>
  readdirSync(home.folders.awaiting).filter((name) => name.endsWith('.csv'));

describe('a waiting file replaced by its corrected copy the same day', () => {
  it('is no longer said to wait; approving it says which file replaced it; the copy alone is paid, once', async () => {
    const { home, cli } = await approvalHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(2);
    home.advance(30 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE, CARLA]);
    const waiting = await cli('run');
    expect(waiting.code).toBe(2);
    // One answer is offered, for the copy: the first file has nothing left to approve.
    expect(waiting.stdout).toMatch(
      /^folha\.csv: replaced; 2 superseded \(R\$ 6\.000,00\); valid rows total R\$ 6\.000,00\n {2}replaced by its corrected copy folha\.csv \(batch 2\), which arrived on \d{4}-\d\d-\d\d \d\d:\d\d UTC: nothing of it is sent; the copy waits for approval: payouts approve "folha\.csv" --batch 2$/m,
    );
    expect(approveCommands(waiting.stdout)).toEqual([['approve', 'folha.csv', '--batch', '2']]);
    expect(readFileSync(join(home.folders.awaiting, 'folha.csv.report.txt'), 'utf8')).toMatch(
      /^folha\.csv \(batch 1\) was replaced by its corrected copy folha\.csv \(batch 2\), which arrived on [\d-]+ [\d:]+ UTC: nothing of it is sent, and nothing is left to approve; the copy waits for approval: payouts approve "folha\.csv" --batch 2\n$/,
    );
    const status = await cli('status');
    expect(status.stdout).toMatch(/^batch 1 {2}folha\.csv .* replaced by batch 2: 2 superseded/m);

    const first = await cli('approve', 'folha.csv', '--batch', '1');
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(
      /^payouts approve: folha\.csv \(batch 1\) was replaced by its corrected copy folha\.csv \(batch 2\), which arrived on \d{4}-\d\d-\d\d \d\d:\d\d UTC: nothing of it is sent, and nothing is left to approve; the copy waits for approval: payouts approve "folha\.csv" --batch 2\n$/,
    );
    expect(first.stderr).not.toContain('R$ 0,00');

    for (const command of approveCommands(waiting.stdout)) {
      const approved = await cli(...command);
      expect(approved.code, approved.stderr).toBe(0);
    }
    expect((await cli('run')).code).toBe(0);
    expect(paid(home)).toEqual(COPY_PAID_ONCE);
    // The copy answered, the first file is closed: out of awaiting-approval/, its result written.
    expect(waitingFiles(home)).toEqual([]);
    expect(existsSync(join(home.folders.awaiting, 'folha.csv.report.txt'))).toBe(false);
    // Its result says what became of each row: taken over, or left out, by the copy.
    const results = readdirSync(home.folders.results).map((name) =>
      readFileSync(join(home.folders.results, name), 'utf8'),
    );
    const result = results.find((text) => text.includes('superseded')) ?? '';
    expect(result).toMatch(
      /^2;.*;Ana Souza;.*;superseded;.*;"never sent; taken over by folha\.csv"\r?$/m,
    );
    expect(result).toMatch(
      /^3;.*;Bruno Lima;.*;2500,00;superseded;.*;"never sent; changed or left out by its corrected copy folha\.csv"\r?$/m,
    );
    expect(readdirSync(home.folders.archive)).toHaveLength(2);
    const after = await cli('status');
    expect(after.stdout).not.toContain('awaiting-approval');
    const again = await cli('approve', 'folha.csv', '--batch', '1');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^payouts approve: folha\.csv \(batch 1\) was replaced by its corrected copy folha\.csv \(batch 2\), which arrived on \d{4}-\d\d-\d\d \d\d:\d\d UTC: nothing of it is sent, and nothing is left to approve\n$/,
    );
    expect(paid(home).size).toBe(3);
  });

  it('says so in Portuguese', async () => {
    const { home, cli } = await approvalHome('pt-BR');
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(2);
    home.advance(30 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    const waiting = await cli('run');
    expect(waiting.stdout).toMatch(
      /^ {2}substituído pela cópia corrigida folha\.csv \(lote 2\), que chegou em \d\d\/\d\d\/\d{4} às \d\d:\d\d \(UTC\): nada dele é enviado; a cópia aguarda aprovação: payouts approve "folha\.csv" --batch 2$/m,
    );
    const first = await cli('approve', 'folha.csv', '--batch', '1');
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(
      /^payouts approve: folha\.csv \(lote 1\) foi substituído pela cópia corrigida folha\.csv \(lote 2\), que chegou em \d\d\/\d\d\/\d{4} às \d\d:\d\d \(UTC\): nada dele é enviado, e nada resta a aprovar; a cópia aguarda aprovação: payouts approve "folha\.csv" --batch 2\n$/,
    );
  });
});

describe('a corrected copy turned down', () => {
  it('gives the file it replaced its rows back: it waits again, its report says what it sends, and approving it pays it once', async () => {
    const { home, cli } = await approvalHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(2);
    home.advance(30 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE]);
    expect((await cli('run')).code).toBe(2);
    const copyReport = readFileSync(
      join(home.folders.awaiting, 'folha [2].csv.report.txt'),
      'utf8',
    );
    expect(copyReport).toContain('payouts reject "folha.csv" --reason "why" --batch 2');
    const rejected = await cli('reject', 'folha.csv', '--batch', '2', '--reason', 'wrong copy');
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(readFileSync(join(home.folders.awaiting, 'folha.csv.report.txt'), 'utf8')).toContain(
      'Once approved, 2 payouts are sent, R$ 6.000,00 in all.',
    );

    const waiting = await cli('run');
    expect(waiting.stdout).toMatch(/^folha\.csv: waiting for approval in awaiting-approval\//m);
    const commands = approveCommands(waiting.stdout);
    expect(commands).toEqual([['approve', 'folha.csv']]);
    for (const command of commands) expect((await cli(...command)).code).toBe(0);
    expect((await cli('run')).code).toBe(0);
    expect(paid(home)).toEqual(
      new Map([
        ['ana@example.com 350000', 1],
        ['bruno@example.com 250000', 1],
      ]),
    );
  });
});

describe('a waiting file answered by a copy held for its name (--corrects)', () => {
  it('the printed --corrects answer approves the copy; the old file has nothing to approve; the copy alone is paid, once', async () => {
    const { home, cli } = await approvalHome();
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await cli('run')).code).toBe(2);
    // The next day: a copy of its name, too late to be taken as its correction on its own.
    home.advance(26 * 60 * 60 * 1000);
    home.drop('folha.csv', [HEADER, ANA, BRUNO_RAISE, CARLA]);
    const held = await cli('run');
    expect(held.code).toBe(2);
    const corrects = approveCommands(held.stdout).find((command) =>
      command.join(' ').endsWith('--corrects 1 --batch 2'),
    );
    expect(corrects).toBeDefined();
    const answered = await cli(...(corrects ?? []));
    expect(answered.code, answered.stderr).toBe(0);

    // The answer that frees the copy's rows approves it too (one command): the old file is
    // left with nothing to approve.
    const first = await cli('approve', 'folha.csv', '--batch', '1');
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('was replaced by its corrected copy folha.csv (batch 2)');
    expect(first.stderr).toContain('nothing is left to approve');
    expect((await cli('run')).code).toBe(0);
    expect(paid(home)).toEqual(COPY_PAID_ONCE);
    expect(waitingFiles(home)).toEqual([]);
  });
});
