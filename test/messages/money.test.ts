import { describe, expect, it } from 'vitest';
import { formatCents, reaisWith } from '../../src/messages/money.js';

describe('formatCents: amounts as people read them', () => {
  it.each([
    [0, 'R$ 0,00'],
    [1, 'R$ 0,01'],
    [123456, 'R$ 1.234,56'],
    [123456789, 'R$ 1.234.567,89'],
    [-150, '-R$ 1,50'],
  ])('%i cents: %s', (cents, shown) => {
    expect(formatCents(cents)).toBe(shown);
  });
});

describe('reaisWith: amounts as a spreadsheet reads a number', () => {
  it.each([
    [123456, ',', '1234,56'],
    [123456, '.', '1234.56'],
    [5, ',', '0,05'],
    [100000000, '.', '1000000.00'],
    [-150, ',', '-1,50'],
  ])('%i cents with %s: %s', (cents, separator, shown) => {
    expect(reaisWith(cents, separator)).toBe(shown);
  });
});
