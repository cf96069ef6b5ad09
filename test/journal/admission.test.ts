import { describe, expect, it } from 'vitest';
import { changesPayee } from '../../src/journal/admission.js';

describe('changesPayee: whether a corrected row pays someone else than the payout it repeats', () => {
  const paid = { pixKey: 'ana@example.com', name: 'João Souza' };
  it.each([
    ['the same key and name', paid, false],
    ['the name without its accent, in capitals', { ...paid, name: 'JOAO  SOUZA' }, false],
    ['another key', { ...paid, pixKey: 'bruno@example.com' }, true],
    ['another name', { ...paid, name: 'Bruno Lima' }, true],
    ['both changed', { pixKey: 'bruno@example.com', name: 'Bruno Lima' }, true],
  ])('%s', (_case, row, changed) => {
    expect(changesPayee(paid, row)).toBe(changed);
  });
});
