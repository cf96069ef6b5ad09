import { describe, expect, it } from 'vitest';
import { clockBehind } from '../../src/journal/clock-behind.js';

describe('clockBehind', () => {
  const latest = Date.parse('2026-11-27T12:00:00Z');
  it.each([
    ['an hour ahead', latest + 3_600_000, false],
    ['the same instant', latest, false],
    ['a minute behind', latest - 60_000, false],
    ['a minute and a millisecond behind', latest - 60_001, true],
    ['a day behind', latest - 86_400_000, true],
  ])('a clock %s of the journal: %s', (_, now, behind) => {
    expect(clockBehind(now, latest)).toBe(behind);
  });

  it.each([
    ['a minute and a minute of allowance behind', latest - 120_000, false],
    ['a millisecond more', latest - 120_001, true],
  ])('beside hosts allowed a minute off: a clock %s: %s', (_, now, behind) => {
    expect(clockBehind(now, latest, 60_000)).toBe(behind);
  });
});
