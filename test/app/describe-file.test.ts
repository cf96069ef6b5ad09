import { describe, expect, it } from 'vitest';
import { describeTotals } from '../../src/app/describe-file.js';
import { CATALOGS } from '../../src/messages/catalog.js';

describe('describeTotals', () => {
  it('says attempts sent again as attempts, with no sum that reads as paid', () => {
    const totals = {
      rows: { paid: 3, retried: 2 },
      cents: { paid: 300_00, retried: 1_960_26 },
    };
    expect(describeTotals(totals, CATALOGS['pt-BR'])).toBe(
      'pago: 3 (R$ 300,00), 2 tentativas que não pagaram, reenviadas',
    );
    expect(describeTotals(totals, CATALOGS.en)).toBe(
      '3 paid (R$ 300,00), 2 failed attempts sent again',
    );
    expect(describeTotals({ rows: { retried: 1 }, cents: { retried: 700_00 } })).toBe(
      '1 failed attempt sent again',
    );
  });
});
