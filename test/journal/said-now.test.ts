import { describe, expect, it } from 'vitest';
import { saidNow } from '../../src/journal/answers.js';
import type { RowState } from '../../src/journal/states.js';
import type { Said } from '../../src/messages/said.js';

const duplicate: Said = {
  code: 'heldDuplicate',
  file: 'folha.csv',
  line: 2,
  at: 0,
  state: 'queued',
  transactionId: null,
  newFile: 'folha_final.csv',
  hintFlags: '',
};
const changesPaid: Said = {
  code: 'heldChangesPaid',
  file: 'folha.csv',
  line: 2,
  state: 'paid',
  paidCents: 100,
  cents: 200,
};

describe('the state a row names, as it is now', () => {
  it.each<[string, Said, RowState | null, Said]>([
    [
      'a repeat of a payout since paid says paid',
      duplicate,
      'paid',
      { ...duplicate, state: 'paid' },
    ],
    ['nothing known of the payout now: as it was said', duplicate, null, duplicate],
    [
      'a row that names no payout by its link keeps its words',
      changesPaid,
      'refunded',
      changesPaid,
    ],
  ])('%s', (_, said, now, expected) => {
    expect(saidNow(said, now)).toEqual(expected);
  });
});
