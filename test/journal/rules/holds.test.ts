import { describe, expect, it } from 'vitest';
import { thawsOnRelease } from '../../../src/journal/rules/holds.js';

describe('thawsOnRelease: a release that says the rows are new payments', () => {
  it.each([
    ['duplicate', true],
    ['same-name', true],
    ['balance', false],
    ['file', false],
    ['identical', false],
    ['changes-paid', false],
    ['changes-payee', false],
    ['copy-waiting', false],
    ['failed-before', false],
  ] as const)('%s: %s', (reason, expected) => {
    expect(thawsOnRelease(reason)).toBe(expected);
  });
});
