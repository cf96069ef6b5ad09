/** What `payouts status` says of a home: its times are all in `timeZone`, written one way. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { Database } from '../../src/journal/sqlite.js';
import { runCli } from '../support/cli.js';
import { passHome } from '../support/pass-home.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';

/** Anything that reads as a time of day: a date, then hours and minutes. */
const TIMES = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?/g;

describe('payouts status', () => {
  it('prints every time in timeZone, as result files write createdAt', async () => {
    const home = await passHome();
    // Manaus is an hour behind São Paulo, where file names count their days.
    const env = { ...home.env(), PAYOUTS_TIME_ZONE: 'America/Manaus' };
    home.drop('folha.csv', [HEADER, ANA, ANA, BRUNO]);
    expect((await runCli(['run'], { env })).code).toBe(2);
    const released = await runCli(['approve', 'folha.csv', '--identical', '--by', 'maria'], {
      env,
    });
    expect(released.code, released.stderr).toBe(0);
    expect((await runCli(['run'], { env })).code).toBe(0);
    const orderId = home.sandbox
      .ledger()
      .find((entry) => entry.object === 'cashout' && entry.pixKey === 'bruno@example.com')?.orderId;
    expect(orderId).toBeDefined();

    const statusOf = async (args: string[]): Promise<string> => {
      const status = await runCli(['status', ...args], { env });
      expect(status.code, status.stderr).toBe(0);
      return status.stdout;
    };
    const files = await statusOf([]);
    const rows = await statusOf(['folha.csv']);
    const payout = await statusOf([orderId as string]);
    expect(files).toMatch(TIMES);
    expect(rows).toContain(`released by ${userInfo().username} (--by maria) at `);
    expect(payout).toMatch(/History:/);
    // The audit's reasons, kept as values, read as they always have.
    expect(payout).toMatch(/ \(new\) -> queued: journaled from batch 1, line 4\n/);
    expect(payout).toMatch(/ queued -> sending: claimed by \S+ \(attempt 1\)\n/);
    const json = await statusOf(['--json', orderId as string]);
    expect((JSON.parse(json) as { history: { reason: unknown }[] }).history[0]?.reason).toBe(
      'journaled from batch 1, line 4',
    );
    const times = [files, rows, payout].flatMap((text) => text.match(TIMES) ?? []);
    expect(
      times.filter((time) => !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-04:00$/.test(time)),
    ).toEqual([]);
  });

  it('and run --dry-run read a journal of an older schema as it is: not migrated, nothing left beside it', async () => {
    const home = await passHome();
    const env = home.env();
    home.drop('folha.csv', [HEADER, ANA]);
    expect((await runCli(['run'], { env })).code).toBe(0);
    // The journal as the payouts before the newest migration left it.
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    // A new migration writes its own undoing here, so the journal is truly one version older.
    expect(latest).toBe(28);
    const older = new Database(home.folders.journal);
    older.exec('DROP INDEX batch_events_approved_by_time');
    older.pragma(`user_version = ${latest - 1}`);
    older.close();
    home.drop('folha-2.csv', [HEADER, BRUNO]);
    const bytes = readFileSync(home.folders.journal);
    const { mtimeMs } = statSync(home.folders.journal);
    const files = readdirSync(home.folders.home);

    const status = await runCli(['status'], { env });
    expect([status.code, status.stderr]).toEqual([0, '']);
    expect(status.stdout).toMatch(/folha\.csv/);
    const rehearsal = await runCli(['run', '--dry-run'], { env });
    expect([rehearsal.code, rehearsal.stderr]).toEqual([0, '']);
    expect(rehearsal.stdout).toMatch(/folha-2\.csv: would send 1 \(R\$ 2\.500,00\)/);

    // No -wal beside it: the file is the whole journal, its schema version at byte 60.
    expect(readdirSync(home.folders.home)).toEqual(files);
    expect(readFileSync(home.folders.journal).readUInt32BE(60)).toBe(latest - 1);
    expect(statSync(home.folders.journal).mtimeMs).toBe(mtimeMs);
    expect(readFileSync(home.folders.journal).equals(bytes)).toBe(true);
    expect(home.sandbox.ledger().filter((entry) => entry.object === 'cashout')).toHaveLength(1);
  });
});
