import { describe, expect, it } from 'vitest';
import { checkControlTotals, parseControlFile } from '../../src/csv/totals.js';
import { inEnglish } from '../support/english.js';

describe('parseControlFile', () => {
  it.each([
    ['rows: 120\ntotal: 12.345,67\n', { rows: 120, cents: 1_234_567 }],
    ['linhas=3\r\nvalor=R$ 1.000,00', { rows: 3, cents: 100_000 }],
    ['cents;1234567', { cents: 1_234_567 }],
    ['Quantidade: 7', { rows: 7 }],
  ])('%j -> %j', (text, figures) => {
    expect(parseControlFile('f.csv.total', text)).toEqual({
      source: { sidecar: 'f.csv.total' },
      ...figures,
    });
  });

  it.each([
    ['rows: many', /line 1 \("rows: many"\) is not "rows: N"/],
    ['hello', /line 1 \("hello"\)/],
    ['\n\n', /gives neither a row count/],
  ])('%j is refused', (text, problem) => {
    expect(inEnglish(parseControlFile('f.csv.total', text))).toEqual({
      problem: expect.stringMatching(problem),
    });
  });
});

describe('checkControlTotals', () => {
  const totals = { rows: 3, readableCents: 150_000, unreadableAmountLines: [] };

  it('agrees when the figures match', () => {
    expect(
      checkControlTotals(totals, [{ source: { sidecar: 'x' }, rows: 3, cents: 150_000 }]),
    ).toEqual([]);
    expect(checkControlTotals(totals, [{ source: { sidecar: 'x' }, rows: 3 }])).toEqual([]);
  });

  it('gives both figures when they differ', () => {
    expect(
      inEnglish(
        checkControlTotals(totals, [
          { source: { sidecar: 'payroll.csv.total' }, rows: 4, cents: 160_000 },
        ]),
      ),
    ).toEqual([
      'control total mismatch: the file has 3 rows and R$ 1.500,00, but payroll.csv.total says 4 rows and R$ 1.600,00; the file may be truncated or edited, so none of it is paid: export it again, or fix the rows or the total, and drop the corrected file in the inbox',
    ]);
    expect(
      inEnglish(checkControlTotals(totals, [{ source: { totalLine: 5 }, cents: 150_001 }])),
    ).toEqual([
      expect.stringContaining(
        'the file has R$ 1.500,00, but the total line (line 5) says R$ 1.500,01',
      ),
    ]);
  });

  it('cannot check a sum while an amount is unreadable, and says which line', () => {
    const unreadable = { ...totals, unreadableAmountLines: [7] };
    expect(
      inEnglish(checkControlTotals(unreadable, [{ source: { sidecar: 'x' }, cents: 150_000 }])),
    ).toEqual([
      expect.stringContaining('cannot be checked while the amounts on line 7 cannot be read'),
    ]);
  });
});
