import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../../src/messages/catalog.js';
import { APPROVAL_COLUMNS, REPORT_COLUMNS, RESULT_COLUMNS } from '../../src/results/columns.js';

describe('the columns of a result file and a report', () => {
  // The compiler holds every column to a heading; this holds every heading to a column.
  it.each(Object.entries(CATALOGS))(
    'have every heading of the %s catalog, and no other',
    (_, words) => {
      const columns = new Set<string>([
        ...RESULT_COLUMNS,
        ...APPROVAL_COLUMNS,
        ...REPORT_COLUMNS,
        'sandbox',
      ]);
      expect(Object.keys(words.heading).sort()).toEqual([...columns].sort());
    },
  );
});
