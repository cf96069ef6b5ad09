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
  it('--version prints the version, exit 0', async () => {
    const result = await runCli(['--version']);
    expect([result.code, result.stdout.trim()]).toEqual([0, VERSION]);
  });

  it.each([
    [['rn'], /^error: unknown command 'rn'\n\(Did you mean run\?\)\n\(see payouts --help\)\n$/],
    [
      ['run', '--dry-rn'],
      /^error: unknown option '--dry-rn'\n\(Did you mean --dry-run\?\)\n\(see payouts run --help\)\n$/,
    ],
    [['validate'], /^error: missing required argument 'file'\n\(see payouts validate --help\)\n$/],
    [
      ['approve', 'folha.csv', '--by'],
      /^error: option '--by <name>' argument missing\n\(see payouts approve --help\)\n$/,
    ],
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
