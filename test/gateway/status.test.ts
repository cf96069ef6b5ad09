import { describe, expect, it } from 'vitest';
import {
  isFinalStatus,
  mapStatus,
  statusCode,
  statusWord,
  PAYOUT_STATUSES,
} from '../../src/gateway/status.js';

describe('mapStatus', () => {
  it.each([
    ['0', 'pending'],
    ['1', 'paid'],
    ['2', 'failed'],
    ['3', 'canceled'],
    ['4', 'refunded'],
    ['paid', 'paid'],
    ['PAID', 'paid'],
    [' pending ', 'pending'],
    ['cancelled', 'canceled'],
    ['refund', 'refunded'],
    ['5', 'unrecognised'],
    ['processing', 'unrecognised'],
    ['', 'unrecognised'],
  ])('%j -> %s', (raw, expected) => {
    expect(mapStatus(raw)).toBe(expected);
  });

  it('maps our own code and word back to the same status', () => {
    for (const status of PAYOUT_STATUSES) {
      expect(mapStatus(statusCode(status))).toBe(status);
      expect(mapStatus(statusWord(status))).toBe(status);
    }
  });

  it.each([
    ['pending', false],
    ['unrecognised', false],
    ['paid', true],
    ['failed', true],
    ['canceled', true],
    ['refunded', true],
  ] as const)('%s is final: %s', (status, final) => {
    expect(isFinalStatus(status)).toBe(final);
  });
});
