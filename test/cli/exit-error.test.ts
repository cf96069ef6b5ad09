/**
 * The one mapping from what a command threw to what the person reads and the exit code:
 * every member of the family, the system and journal failures we know, and a bug.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { endingOf, ExitError, usageError } from '../../src/cli/exit-error.js';
import { ConfigError } from '../../src/config/load.js';
import { PayoutsError } from '../../src/errors.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { JournalError } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { MarkerError } from '../../src/journal/marker.js';
import { JournalLossError } from '../../src/journal/open-for-work.js';
import { useTempFolder } from '../support/files.js';

/** What a real failure of `act` threw. */
function thrownBy(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw');
}

describe('endingOf', () => {
  it.each<[string, unknown, number, string]>([
    ['a command that needs a person, silently', new ExitError(2), 2, ''],
    ['a command that is not finished, silently', new ExitError(3), 3, ''],
    [
      "a command's failure, its line as it is",
      new ExitError(1, 'payouts get: say which transaction, with --id N or --order-id X'),
      1,
      'payouts get: say which transaction, with --id N or --order-id X',
    ],
    [
      'settings that cannot be used, a line each',
      new ConfigError(['token is required', 'unknown key "hme"']),
      1,
      'config: token is required\nconfig: unknown key "hme"',
    ],
    [
      'credentials refused, with what to check',
      new GatewayError('auth', 'getBalance', 'Unauthorized (HTTP 401)'),
      1,
      'payouts: the gateway refused our credentials (Unauthorized (HTTP 401)). Check the token (PAYOUTS_TOKEN) and authScheme.',
    ],
    [
      'a gateway limiting us, with when to try again',
      new GatewayError('rate-limited', 'getBalance', 'slow down (HTTP 429)', {
        retryAfterMs: 1_500,
      }),
      1,
      'payouts: the gateway is limiting our requests (slow down (HTTP 429)). Try again in 2s.',
    ],
    [
      'a wrong address, naming the request',
      new GatewayError('wrong-endpoint', 'createCashOut', 'HTTP 404 with no message', {
        request: 'POST /transaction/cashout',
      }),
      1,
      'payouts: the address answered, but not as the gateway does (HTTP 404 with no message for POST /transaction/cashout). Check baseUrl.',
    ],
    [
      'the journal refusing a change (once `unexpected error`)',
      new JournalError('refused', 'o-1: a move from paid to sending is not allowed (retry)'),
      1,
      'payouts: the journal refused the change (o-1: a move from paid to sending is not allowed (retry)): what it had committed before stays as it was; run again',
    ],
    [
      'a journal that is not this home\u2019s own',
      new JournalLossError('empty', 'the journal /h/journal.db is empty: nothing was sent'),
      1,
      'payouts: the journal /h/journal.db is empty: nothing was sent',
    ],
    [
      'an unreadable marker',
      new MarkerError('the journal marker /h/journal.marker cannot be read'),
      1,
      'payouts: the journal marker /h/journal.marker cannot be read',
    ],
    [
      'a damaged postback secret',
      new PayoutsError('postback-secret', '/h/postback.secret does not hold a postback secret'),
      1,
      'payouts: /h/postback.secret does not hold a postback secret',
    ],
    [
      'a command line that cannot be taken, found by commander: one line',
      new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'"),
      64,
      "payouts: unknown option '--x' (see payouts --help)",
    ],
    [
      'a command line that cannot be taken, found by the command',
      usageError('get', 'payouts get: say which transaction, with --id N or --order-id X'),
      64,
      'payouts get: say which transaction, with --id N or --order-id X (see payouts get --help)',
    ],
    [
      'help asked for (commander printed it)',
      new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'),
      0,
      '',
    ],
  ])('%s', (_what, error, exitCode, stderr) => {
    expect(endingOf(error)).toEqual({ exitCode, stderr });
  });

  describe('real failures of the disk and the journal', () => {
    const folder = useTempFolder();

    it('a home folder that is a file names it, exit 1', () => {
      const file = join(folder(), 'home');
      writeFileSync(file, 'x');
      const error = thrownBy(() => mkdirSync(join(file, 'inbox'), { recursive: true }));
      expect(endingOf(error)).toEqual({
        exitCode: 1,
        stderr: `payouts: ${file} is a file, not a folder, so ${join(file, 'inbox')} cannot be made or used: check home (PAYOUTS_HOME) and --inbox`,
      });
    });

    it('a journal damaged under a command says so, naming it, and what to do, exit 1', async () => {
      const path = join(folder(), 'journal.db');
      writeFileSync(path, 'this is not a database, '.repeat(50));
      const error: unknown = await openJournal(sqliteJournalAt(path)).catch((e: unknown) => e);
      const { exitCode, stderr } = endingOf(error);
      expect(exitCode).toBe(1);
      expect(stderr).toMatch(
        /^payouts: the journal \S+journal\.db is damaged \(file is not a database\): nothing more is sent; .* Do not delete it/,
      );
      expect(stderr).toContain(path);
    });
  });

  describe('anything else is a bug: exit 70, one line saying so, then the stack', () => {
    it('an Error', () => {
      const { exitCode, stderr } = endingOf(new TypeError('x is undefined'));
      const [line, ...stack] = stderr.split('\n');
      expect(exitCode).toBe(70);
      expect(line).toBe(
        'payouts: internal error (exit 70), a bug in payouts and not in the files, the settings or the gateway: x is undefined. Please report it with the stack below and the command that was run.',
      );
      expect(stack[0]).toMatch(/^ {4}at .*exit-error\.test\.ts/);
    });

    it('a message of several lines, on the one line', () => {
      const [line, next] = endingOf(new Error('first\n  second')).stderr.split('\n');
      expect(line).toMatch(
        /^payouts: internal error \(exit 70\), .*: first second\. Please report/,
      );
      expect(next).toMatch(/^ {4}at /);
    });

    it('a thrown value that is not an Error: the line alone', () => {
      expect(endingOf('gone')).toEqual({
        exitCode: 70,
        stderr:
          'payouts: internal error (exit 70), a bug in payouts and not in the files, the settings or the gateway: gone. Please report it with the command that was run.',
      });
    });

    it('keeps personal data out, as the log does', () => {
      const { stderr } = endingOf(new Error('no payout for ana.souza@example.com, 529.982.247-25'));
      expect(stderr).toContain('no payout for a***@example.com, ***25.');
      expect(stderr).not.toContain('ana.souza');
    });
  });
});
