import { describe, expect, it } from 'vitest';
import { progressOf, progressText, type StateCounts } from '../../src/cli/progress.js';

const counts = (entries: Record<string, number>): StateCounts =>
  Object.fromEntries(Object.entries(entries).map(([state, count]) => [state, { count }]));

describe('progressOf: a pass counted from its start, not the whole journal', () => {
  it.each([
    ['a new journal, all sent, some settled', {}, { pending: 6, paid: 4 }, [10, 10, 4, 5]],
    [
      'last month paid (100), this run 10 new',
      { paid: 100 },
      { paid: 103, pending: 5, queued: 2 },
      [10, 8, 3, 4],
    ],
    [
      'two left pending by the last run, settled now',
      { paid: 100, pending: 2 },
      { paid: 102 },
      [2, 2, 2, 0],
    ],
    ['held rows are in play but not sent', {}, { held: 3, paid: 1 }, [4, 1, 1, 0.5]],
  ] as const)('%s', (_what, start, now, [total, sent, settled, perSecond]) => {
    const progress = progressOf(counts(start), counts(now), 2_000);
    expect(progress).toEqual({ total, sent, settled, perSecond });
  });

  it('draws a bar of what settled on a terminal, plain text otherwise', () => {
    const progress = { total: 8, sent: 8, settled: 4, perSecond: 12.345 };
    expect(progressText(progress, false)).toBe('8/8 sent · 4 settled · 12.3 rows/s');
    expect(progressText(progress, true)).toBe(
      `[${'#'.repeat(12)}${'-'.repeat(12)}] 8/8 sent · 4 settled · 12.3 rows/s`,
    );
    expect(progressText({ total: 0, sent: 0, settled: 0, perSecond: 0 }, true)).toMatch(
      /^\[-{24}\] 0\/0 sent/,
    );
  });
});
