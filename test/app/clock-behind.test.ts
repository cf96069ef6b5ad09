/**
 * A host clock stepped back (an NTP step, a virtual machine restored) behind the journal's
 * latest time: the rules on who is paid compare times, so a command that would write the
 * journal refuses rather than pay a re-export again. The sandbox's ledger is the judge.
 */
import { readdirSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { serve } from '../../src/app/serve.js';
import { ClockBehindError } from '../../src/journal/clock-behind.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { createLogger } from '../../src/runtime/logger.js';
import { clientFor } from '../support/gateway.js';
import { passHome, type PassHome } from '../support/pass-home.js';
import { runCli } from '../support/cli.js';

const MINUTE = 60 * 1000;
const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"';
const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';

const CARLA =
  'Carla Dias,123.456.789-09,carla@example.com,(31) 97654-3210,carla@example.com,"1.200,00"';

const cashOuts = (home: PassHome) =>
  home.sandbox.ledger().filter((entry) => entry.object === 'cashout').length;

describe('a clock behind the journal', () => {
  it('a run whose clock reads two minutes before the first file was paid refuses, naming both times; its re-export is not paid', async () => {
    const home = await passHome();
    home.at('2026-11-27T12:00:00.000Z');
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await home.run()).exit).toBe(0);
    expect(cashOuts(home)).toBe(2);

    home.at('2026-11-27T11:58:00.000Z');
    home.drop('folha_final.csv', [HEADER, ANA, BRUNO], '\n');
    await expect(home.run({ timeZone: 'America/Sao_Paulo' })).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/2026-11-27 08:58:0\d.*2026-11-27 09:00:0\d/) as unknown,
    });
    expect(cashOuts(home)).toBe(2);
  });

  it('a minute behind or less is a clock\u2019s ordinary drift: the run goes on', async () => {
    const home = await passHome();
    home.at('2026-11-27T12:00:00.000Z');
    home.drop('folha.csv', [HEADER, ANA]);
    expect((await home.run()).exit).toBe(0);
    home.at('2026-11-27T11:59:30.000Z');
    home.drop('adiantamento.csv', [HEADER, BRUNO]);
    expect((await home.run()).exit).toBe(0);
    expect(cashOuts(home)).toBe(2);
  });

  it('a daemon whose clock steps back between two passes stops at the next one; the re-export is not paid', async () => {
    const home = await passHome();
    home.at('2026-11-27T12:00:00.000Z');
    home.drop('folha.csv', [HEADER, ANA, BRUNO]);
    expect((await home.run()).exit).toBe(0);
    const journal = await openJournal(sqliteJournalAt(home.folders.journal), { now: home.now });
    const gateway = clientFor(home.sandbox.url);
    let log = '';
    const stop = new AbortController();
    const daemon = serve({
      config: home.config({ inboxSettle: 1, inboxRescan: 100 }),
      folders: home.folders,
      journal,
      gateway,
      logger: createLogger('info', {
        stderr: { write: (text) => (log += String(text)) },
        env: {},
      }),
      clock: { now: home.now, sleep: systemClock.sleep },
      signal: stop.signal,
      hintFlags: '',
      setHealth: () => undefined,
    });
    let ended = false;
    void daemon.finally(() => (ended = true)).catch(() => undefined);
    try {
      // A pass on a clock that is right pays a new file, and archives it.
      home.drop('adiantamento.csv', [HEADER, CARLA]);
      const archived = () => readdirSync(home.folders.archive).join(' ');
      for (let i = 0; i < 1000 && !archived().includes('adiantamento'); i++) await delay(10);
      expect(archived()).toContain('adiantamento');
      expect(cashOuts(home)).toBe(3);
      home.at('2026-11-27T11:58:00.000Z');
      home.drop('folha_final.csv', [HEADER, ANA, BRUNO], '\n');
      for (let i = 0; i < 1000 && !ended; i++) await delay(10);
      expect(ended, log).toBe(true);
      await expect(daemon).rejects.toBeInstanceOf(ClockBehindError);
    } finally {
      stop.abort();
      await daemon.catch(() => undefined);
      await gateway.close();
      await journal.close();
    }
    expect(cashOuts(home)).toBe(3);
    expect(log).not.toContain('pass failed');
  });

  it('a command reads the time of the clock it is given: an hour ahead it runs, on the host\u2019s it refuses', async () => {
    const home = await passHome();
    home.advance(60 * MINUTE);
    const ahead = { now: home.now, sleep: systemClock.sleep };
    const env = { ...home.env(), PAYOUTS_INBOX_SETTLE: '1ms', PAYOUTS_FOLLOW_TIMEOUT: '0' };
    home.drop('folha.csv', [HEADER, ANA]);
    // Sent and left pending (exit 3): not followed.
    const first = await runCli(['run'], { env, clock: ahead });
    expect(first.code, first.stdout + first.stderr).toBe(3);
    home.drop('adiantamento.csv', [HEADER, BRUNO]);
    const behind = await runCli(['run'], { env });
    expect(behind.code, behind.stderr).toBe(1);
    expect(behind.stderr).toContain('NTP');
    expect(cashOuts(home)).toBe(1);
    expect((await runCli(['run'], { env, clock: ahead })).code).toBe(3);
    expect(cashOuts(home)).toBe(2);
  });

  it('every command that writes the journal refuses, exit 1, in the home\u2019s language and time zone', async () => {
    const home = await passHome();
    // The journal written an hour ahead of this host's clock: the host's clock is behind.
    home.advance(60 * MINUTE);
    home.drop('folha.csv', [HEADER, ANA]);
    expect((await home.run()).exit).toBe(0);
    home.drop('folha_final.csv', [HEADER, ANA, BRUNO], '\n');
    const env = {
      ...home.env(),
      PAYOUTS_LANGUAGE: 'pt-BR',
      PAYOUTS_TIME_ZONE: 'America/Sao_Paulo',
    };
    for (const command of [
      ['run'],
      ['retry', 'folha.csv'],
      ['approve', 'folha.csv', '--new-batch'],
      ['reject', 'folha.csv', '--reason', 'x'],
      ['reconcile', '--days', '1'],
    ]) {
      const result = await runCli(command, { env });
      expect(result.code, `${command.join(' ')}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(
        /o relógio deste computador marca \d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d \(America\/Sao_Paulo\), antes de \d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d/,
      );
      expect(result.stderr).toContain('NTP');
    }
    expect(cashOuts(home)).toBe(1);
  });
});
