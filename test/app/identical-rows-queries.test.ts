/**
 * A file paying one payee the same amount on every row (issue 34: 200,000 such rows took
 * 36 minutes) is taken in without any statement reading, for each of its rows, the
 * file's other rows of that payee and amount: each lookup by document and amount skips
 * the file's own rows as a range of payouts_by_cover (document, value_cents, batch_id).
 */
import { describe, expect, it } from 'vitest';
import { withCheckDigits } from '../../src/domain/check-digits.js';
import { passHome } from '../support/pass-home.js';
import { PAYROLL_HEADER } from '../support/payroll.js';
import { planOf, recordStatements } from '../support/statements.js';

const ROWS = 300;

describe('a file of one payee’s identical rows', () => {
  it('is weighed without reading its own rows of that payee once a row', async () => {
    const home = await passHome();
    const cpf = withCheckDigits('123456789');
    home.drop('folha.csv', [
      PAYROLL_HEADER,
      ...Array.from(
        { length: ROWS },
        (_, i) => `o-${i},Ana Souza,ana@example.com,11987654321,${cpf},CPF,${cpf},"10,00"`,
      ),
    ]);
    let files: Awaited<ReturnType<typeof home.run>>['files'] = [];
    const ran = await recordStatements(async () => {
      ({ files } = await home.run({ requireApproval: true, balanceCheck: 'off' }));
    });
    // The rules as before: the first row waits for approval, each repeat is held.
    expect(files.map((file) => file.rows)).toEqual([{ queued: 1, held: ROWS - 1 }]);
    const byPayeeAndAmount = ran
      .map((statement) => ({
        sql: statement.sql.replace(/\s+/g, ' ').trim(),
        plan: planOf(home.folders.journal, statement),
      }))
      .filter(({ plan }) =>
        plan.some((line) => /payouts_by_cover \(document=\? AND value_cents=\?\)/.test(line)),
      );
    expect(byPayeeAndAmount).toEqual([]);
  }, 60_000);
});
