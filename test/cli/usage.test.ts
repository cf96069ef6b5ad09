/**
 * Command-line conventions: --version; a command line that cannot be understood exits
 * with its own code (64), in one line and where to read more, never the whole help; a
 * near-miss command, option or config key gets "did you mean".
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

describe('the command line', () => {
  it.each([['--version'], ['-v']])('%s prints the version, exit 0', async (flag) => {
    const result = await runCli([flag]);
    expect([result.code, result.stdout.trim()]).toEqual([0, VERSION]);
  });

  it.each([
    [['rn'], /^payouts: unknown command 'rn'; did you mean run\? \(see payouts --help\)\n$/],
    [
      ['run', '--dry-rn'],
      /^payouts run: unknown option '--dry-rn'; did you mean --dry-run\? \(see payouts run --help\)\n$/,
    ],
    [
      ['validate'],
      /^payouts validate: missing required argument 'file' \(see payouts validate --help\)\n$/,
    ],
    [
      ['approve', 'folha.csv', '--by'],
      /^payouts approve: option '--by <name>' argument missing \(see payouts approve --help\)\n$/,
    ],
    [['--bogus', 'run'], /^payouts run: unknown option '--bogus' \(see payouts run --help\)\n$/],
    [
      [],
      /^payouts: say which command, e.g\. payouts validate FILE or payouts run \(see payouts --help\)\n$/,
    ],
    [
      ['--json'],
      /^payouts: say which command, e.g\. payouts validate FILE or payouts run \(see payouts --help\)\n$/,
    ],
    [
      ['run', '--wait', 'banana'],
      /^payouts run: --wait "banana" is not a duration \(e\.g\. 0, 30s, 5m\) \(see payouts run --help\)\n$/,
    ],
    [
      ['get'],
      /^payouts get: say which transaction, with --id N or --order-id X \(see payouts get --help\)\n$/,
    ],
  ])('%j: exit 64, one line and where to read more', async (args, said) => {
    const result = await runCli(args);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(said);
    expect(result.stderr).not.toContain('Usage:');
  });

  it('a misspelt setting gets the name it most likely meant, and nothing runs', async () => {
    const result = await runCli(['status'], { env: { PAYOUTS_TOKNE: 'x' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'unknown key "PAYOUTS_TOKNE" in the environment variable PAYOUTS_TOKNE; did you mean PAYOUTS_TOKEN?',
    );
  });
});
