/**
 * The false alarms of three routines, small (test/bench/false-alarms.mjs runs them in
 * full): weekly suppliers with an NF column, daily refunds with a pedido column, payroll
 * with férias and 13º under a competência column. None of their own rows is held, the
 * real duplicate each meets is, and the gateway's ledger has nobody paid twice.
 */
import { describe, expect, it } from 'vitest';
import { ROUTINES, runRoutine, type RoutineName } from '../bench/support/routines.mjs';
import { passHome } from '../support/pass-home.js';

describe('routines with a reference column', () => {
  it.each(Object.keys(ROUTINES) as RoutineName[])(
    '%s: no row of the routine held, its real duplicate held, nobody paid twice',
    async (name) => {
      const home = await passHome();
      const figures = await runRoutine(
        { ...home, ledger: () => home.sandbox.ledger() },
        name,
        ROUTINES[name].smoke,
      );
      expect(figures).toMatchObject({
        held: 0,
        needingAPerson: 0,
        paidTwice: 0,
        duplicatesPaid: 0,
      });
      expect(figures.duplicatesHeld).toBe(figures.duplicateRows);
      expect(figures.paid).toBe(figures.rows);
    },
    60_000,
  );
});
