import { describe, expect, it } from 'vitest';
import { BATCH_STATES, canMoveBatch } from '../../src/journal/batch-states.js';

describe('batch transition table', () => {
  it.each([
    ['admitting', 'open', true],
    ['admitting', 'awaiting-approval', true],
    ['admitting', 'held', true],
    ['admitting', 'unusable', true],
    ['awaiting-approval', 'open', true],
    ['awaiting-approval', 'refused', true],
    ['open', 'underfunded', true],
    ['underfunded', 'open', true],
    ['underfunded', 'underfunded', true],
    ['open', 'done', true],
    // Reopened by `payouts retry`, to send the new payout.
    ['done', 'open', true],
    // Nothing of a file is sent before it has been read whole, or approved.
    ['admitting', 'done', false],
    ['awaiting-approval', 'underfunded', false],
    // A refused, held or unusable file never opens: a new copy takes its rows over.
    ['refused', 'open', false],
    ['held', 'open', false],
    ['unusable', 'open', false],
    ['open', 'admitting', false],
    ['open', 'awaiting-approval', false],
    ['open', 'open', false],
    ['done', 'done', false],
  ] as const)('%s -> %s: %s', (from, to, allowed) => {
    expect(canMoveBatch(from, to)).toBe(allowed);
  });

  it('lets no batch go back to admitting, and every one but a file being read be done', () => {
    for (const from of BATCH_STATES) {
      expect(canMoveBatch(from, 'admitting'), from).toBe(false);
      expect(canMoveBatch(from, 'done'), from).toBe(from !== 'admitting' && from !== 'done');
    }
  });
});
