import { describe, expect, it } from 'vitest';
import { sampleLines } from '../../src/journal/first-send.js';

describe('sampleLines: which queued rows of a batch are looked up before its first send', () => {
  it.each([
    [0, []],
    [1, [0]],
    [2, [0, 1]],
    [3, [0, 1, 2]],
    [4, [0, 1, 3]],
    [1000, [0, 499, 999]],
  ])('%i queued rows: positions %j', (queued, positions) => {
    expect(sampleLines(queued)).toEqual(positions);
  });
});
