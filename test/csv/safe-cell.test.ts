import { describe, expect, it } from 'vitest';
import { safeCell } from '../../src/csv/safe-cell.js';

describe('safeCell', () => {
  it.each([
    ["=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"],
    ['+1', "'+1"],
    ['-1+2', "'-1+2"],
    ['@SUM(1)', "'@SUM(1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', "'\r=1"],
    ['Ana Souza', 'Ana Souza'],
    ['1234', '1234'],
    ['', ''],
  ])('%j -> %j', (text, safe) => {
    expect(safeCell(text)).toBe(safe);
  });
});
