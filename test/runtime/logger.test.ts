import { describe, expect, it } from 'vitest';
import { logLevelOf } from '../../src/runtime/logger.js';

describe('logLevelOf: --quiet keeps warnings and errors, never hides them', () => {
  it.each([
    ['info', false, 'info'],
    ['debug', false, 'debug'],
    ['info', true, 'warn'],
    ['trace', true, 'warn'],
    ['warn', true, 'warn'],
    ['error', true, 'error'],
    ['silent', true, 'silent'],
  ])('%s with quiet %s: %s', (level, quiet, expected) => {
    expect(logLevelOf(level, quiet)).toBe(expected);
  });
});
