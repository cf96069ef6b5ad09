import { describe, expect, it } from 'vitest';
import { nearestOf } from '../../src/csv/near-miss.js';

const KEYS = ['token', 'timeZone', 'concurrency', 'requestTimeout', 'connectTimeout', 'home'];
const VARIABLES = ['PAYOUTS_TOKEN', 'PAYOUTS_TIME_ZONE', 'PAYOUTS_HOME', 'PAYOUTS_BASE_URL'];

describe('nearestOf', () => {
  it.each([
    ['tokne', KEYS, 'token'],
    ['timezone', KEYS, 'timeZone'],
    ['concurency', KEYS, 'concurrency'],
    ['requestTimout', KEYS, 'requestTimeout'],
    ['PAYOUTS_TOKNE', VARIABLES, 'PAYOUTS_TOKEN'],
    ['PAYOUTS_BASEURL', VARIABLES, 'PAYOUTS_BASE_URL'],
    // Too far to be a slip, or as close to two words: no guess.
    ['colour', KEYS, undefined],
    ['xTimeout', ['aTimeout', 'bTimeout'], undefined],
    ['hom', KEYS, 'home'],
  ] as const)('%j among %j -> %j', (word, known, nearest) => {
    expect(nearestOf(word, known)).toBe(nearest);
  });
});
