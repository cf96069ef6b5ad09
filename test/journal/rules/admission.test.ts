import { describe, expect, it } from 'vitest';
import type { Covering, Known } from '../../../src/journal/admission.js';
import { isResumed, planAdmission } from '../../../src/journal/rules/admission.js';
import type { RowState } from '../../../src/journal/states.js';
import type { PayoutInput } from '../../../src/journal/types.js';

const batch = { id: 2, fileName: 'folha.csv' };

const row = (changes: Partial<PayoutInput> = {}): PayoutInput => ({
  line: 3,
  request: {
    value: 1000,
    pixKeyType: 0,
    pixKey: '52998224725',
    cpfCnpj: '52998224725',
    person: { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' },
    orderId: 'p-1',
  },
  ...changes,
});

const known = (state: RowState, changes: Partial<Known> = {}): Known => ({
  payloadHash: 'old',
  state,
  batchId: 1,
  line: 5,
  fileName: 'folha.csv',
  admittedAt: 0,
  sameName: true,
  ...changes,
});

const cover: Covering = {
  orderId: 'a-1',
  batchId: 1,
  line: 2,
  state: 'paid',
  valueCents: 1000,
  fileName: 'bonus.csv',
  admittedAt: 0,
  transactionId: 7,
  reference: null,
};

describe('isResumed', () => {
  it.each([
    ['nothing journaled', undefined, false],
    [
      'this very line, the same payload',
      known('queued', { batchId: 2, line: 3, payloadHash: 'h' }),
      true,
    ],
    ['this line, another payload', known('queued', { batchId: 2, line: 3 }), false],
    [
      'another line of this batch',
      known('queued', { batchId: 2, line: 4, payloadHash: 'h' }),
      false,
    ],
    ['another batch', known('queued', { line: 3, payloadHash: 'h' }), false],
  ] as const)('%s: %s', (_, previous, expected) => {
    expect(isResumed(previous, { batchId: 2, line: 3, hash: 'h' })).toBe(expected);
  });
});

describe('planAdmission', () => {
  it.each([
    ['a new row', row(), undefined, undefined, 'new', 'insert', null],
    ['a row a payout covers', row(), undefined, cover, 'duplicate', 'insert', 'duplicate'],
    [
      'identical to line 2',
      row({ identicalTo: 2 }),
      undefined,
      undefined,
      'new',
      'insert',
      'identical',
    ],
    // A possible duplicate names the payout it repeats; the identical line waits with it.
    [
      'covered and identical',
      row({ identicalTo: 2 }),
      undefined,
      cover,
      'duplicate',
      'insert',
      'duplicate',
    ],
    [
      'an orderId of another file',
      row(),
      known('paid', { sameName: false }),
      undefined,
      'journaled',
      'held-line',
      null,
    ],
    [
      'an orderId its earlier file paid',
      row(),
      known('paid'),
      undefined,
      'journaled',
      'held-line',
      null,
    ],
    [
      'refused before, unchanged',
      row(),
      known('rejected', { payloadHash: 'h' }),
      undefined,
      'journaled',
      'held-line',
      null,
    ],
    ['refused before, fixed', row(), known('rejected'), undefined, 'retry', 'replace', null],
    ['invalid before, fixed', row(), known('invalid'), undefined, 'retry', 'replace', null],
    [
      'never sent before, now covered',
      row(),
      known('queued'),
      cover,
      'retry',
      'replace',
      'duplicate',
    ],
  ] as const)('%s: %s, %s, held %s', (_, input, previous, covering, admission, write, hold) => {
    const plan = planAdmission(batch, input, { previous, covering, hash: 'h' });
    expect([
      plan.admission.kind,
      plan.write,
      'hold' in plan ? (plan.hold?.reason ?? null) : null,
    ]).toEqual([admission, write, hold]);
  });

  it('a fixed copy takes the refused row over from the state it read, keeping its earlier line', () => {
    const plan = planAdmission(batch, row(), {
      previous: known('rejected'),
      covering: undefined,
      hash: 'h',
    });
    expect(plan).toMatchObject({
      write: 'replace',
      from: 'rejected',
      supersedes: {
        batchId: 1,
        line: 5,
        said: { code: 'takenOverByLine', state: 'rejected', line: 3, file: 'folha.csv' },
      },
    });
    const again = planAdmission(batch, row(), {
      previous: known('queued', { batchId: 2 }),
      covering: undefined,
      hash: 'h',
    });
    expect(again).toMatchObject({ write: 'replace', from: 'queued', supersedes: null });
  });

  it('says why a row is held, with the payout it repeats and the commands', () => {
    const duplicate = planAdmission(batch, row(), {
      previous: undefined,
      covering: cover,
      hash: 'h',
    });
    expect(duplicate).toMatchObject({
      hold: { coveredBy: 'a-1', said: { code: 'heldDuplicate', file: 'bonus.csv', line: 2 } },
    });
    const identical = planAdmission(batch, row({ identicalTo: 2 }), {
      previous: undefined,
      covering: undefined,
      hash: 'h',
    });
    expect(identical).toMatchObject({
      hold: { coveredBy: null, said: { code: 'heldIdentical', line: 2, file: 'folha.csv' } },
    });
    const journaled = planAdmission(batch, row(), {
      previous: known('failed', { sameName: false }),
      covering: undefined,
      hash: 'h',
    });
    expect(journaled).toMatchObject({
      said: {
        code: 'heldJournaled',
        orderId: 'p-1',
        file: 'folha.csv',
        state: 'failed',
        retry: true,
      },
    });
  });
});
