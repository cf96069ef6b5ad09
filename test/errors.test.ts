/**
 * One error family: each of our errors is a PayoutsError with its code and exit code,
 * keeps the kind its callers act on and its cause; a system error's code is told apart
 * from ours.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitError } from '../src/cli/exit-error.js';
import { ConfigError } from '../src/config/load.js';
import { PayoutsError, systemCodeOf, type PayoutsErrorCode } from '../src/errors.js';
import { GatewayError } from '../src/gateway/errors.js';
import { JournalError } from '../src/journal/journal.js';
import { MarkerError } from '../src/journal/marker.js';
import { JournalLossError } from '../src/journal/open-for-work.js';
import { useTempFolder } from './support/files.js';

describe('the error family', () => {
  it.each<[string, PayoutsError, PayoutsErrorCode, number]>([
    ['ExitError, with its verdict', new ExitError(2), 'command', 2],
    ['ConfigError', new ConfigError(['token is required']), 'config', 1],
    ['GatewayError', new GatewayError('auth', 'getBalance', 'refused (HTTP 401)'), 'gateway', 1],
    ['JournalError', new JournalError('refused', 'batch 3 is not in the journal'), 'journal', 1],
    ['JournalLossError', new JournalLossError('older', 'older'), 'journal-lost', 1],
    ['MarkerError', new MarkerError('both copies damaged'), 'journal-marker', 1],
  ])('%s is a PayoutsError with its code and exit code', (name, error, code, exitCode) => {
    expect(error).toBeInstanceOf(PayoutsError);
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.exitCode]).toEqual([name.split(',')[0], code, exitCode]);
  });

  it('keeps the kind callers act on, and the cause', () => {
    const cause = new Error('socket hang up');
    const error = new GatewayError('ambiguous', 'createCashOut', 'no answer', { cause });
    expect([error.kind, error.cause]).toEqual(['ambiguous', cause]);
    expect(new JournalLossError('replaced', 'x').kind).toBe('replaced');
    const full = new JournalError('full', 'database or disk is full', { cause });
    expect([full.kind, full.cause]).toEqual(['full', cause]);
  });
});

describe('systemCodeOf', () => {
  const folder = useTempFolder();

  it("is a system error's code, which says what failed", () => {
    const file = join(folder(), 'file');
    writeFileSync(file, 'x');
    let error: unknown;
    try {
      mkdirSync(join(file, 'folder'));
    } catch (thrown) {
      error = thrown;
    }
    expect(systemCodeOf(error)).toBe('ENOTDIR');
  });

  it.each<[string, unknown]>([
    [
      'ours, whose message says more',
      new JournalError('refused', 'batch 3: no free result file name'),
    ],
    ['an error without one', new Error('boom')],
    ['a value that is not an error', 'boom'],
    ['nothing', undefined],
  ])('is undefined for %s', (_what, error) => {
    expect(systemCodeOf(error)).toBeUndefined();
  });
});
