/**
 * What a person's answers to rows held by the rules on who is paid free, and what each
 * would pay: the same rules for `approve`, a run's summary, `validate` and `run --dry-run`.
 */
import type { Payees, Said } from '../messages/said.js';
import type { HoldReason, RowState } from './states.js';
import type { HeldRow } from './types.js';

/** Reasons a row is held for by itself, not with its whole file: it is listed on its own. */
export const OWN_HOLDS: readonly (HoldReason | null)[] = [
  'duplicate',
  'identical',
  'changes-paid',
  'changes-payee',
  'failed-before',
];

/** What a row says that names the payout it repeats or is covered by, and its state. */
const NAMES_ITS_PAYOUT: readonly Said['code'][] = [
  'heldJournaled',
  'heldDuplicate',
  'heldSameReference',
  'heldCovered',
  'heldChangesPayee',
  'heldFailedBefore',
];

/**
 * A row's words with the payout they name in its state now: the state it had when the row
 * was admitted (queued, say) is long past once that payout is paid.
 */
export function saidNow(said: Said, stateNow: RowState | null | undefined): Said {
  if (!stateNow || !NAMES_ITS_PAYOUT.includes(said.code) || !('state' in said)) return said;
  return { ...said, state: stateNow } as Said;
}

/** A held row as a summary or a report lists it: its line, name, amount and why. */
export function heldRowSaid(row: HeldRow): Said {
  const { line, name, cents, said, message } = row;
  return {
    code: 'heldRowAt',
    line,
    name,
    cents,
    why: said ? saidNow(said, row.repeats?.state) : { code: 'english', text: message ?? '' },
  };
}

/** Held rows that repeat a payout: paying them pays that person again. */
const REPEATING: readonly HoldReason[] = ['duplicate', 'changes-payee'];

/** The lines a person names: only these (`--rows`), or all but these (`--except`). */
export type LinePick = { rows: readonly number[] } | { except: readonly number[] };

/**
 * What `--new-batch` frees of a batch's held rows (of the lines `pick` names, when given):
 * the rows held for its name repeat nothing and are freed; the possible duplicates and a
 * corrected copy's rows whose payout went to another key repeat a payout and are freed
 * only when `repeats` is their count. Another count frees nothing
 * (`differ`), and so does a named line that is not held so (`notHeld`).
 */
export function newBatchRelease(
  held: readonly HeldRow[],
  repeats: number | undefined,
  pick?: LinePick,
): { free: HeldRow[]; repeating: HeldRow[]; differ: boolean; notHeld: number[] } {
  const answerable = held.filter(
    (row) => row.reason === 'same-name' || (row.reason !== null && REPEATING.includes(row.reason)),
  );
  const named = pick && ('rows' in pick ? pick.rows : pick.except);
  const notHeld = (named ?? []).filter((line) => !answerable.some((row) => row.line === line));
  const inRows = pick !== undefined && 'rows' in pick;
  const picked =
    named === undefined
      ? answerable
      : answerable.filter((row) => named.includes(row.line) === inRows);
  const fresh = picked.filter((row) => row.reason === 'same-name');
  const repeating = picked.filter((row) => row.reason !== null && REPEATING.includes(row.reason));
  const refused = { free: [], repeating, notHeld };
  if (notHeld.length > 0) return { ...refused, differ: false };
  if (repeats === undefined) return { free: fresh, repeating, differ: false, notHeld };
  if (repeats !== repeating.length) return { ...refused, differ: true };
  return { free: [...fresh, ...repeating], repeating, differ: false, notHeld };
}

/** Payees a reading names; its count and sum cover them all. */
const NAMED = 3;

/** Adds a row to what an answer pays: counted and summed, named while few are. */
export function addPayee(payees: Payees, row: { name: string; cents: number }): void {
  payees.rows++;
  payees.cents += row.cents;
  if (payees.first.length < NAMED) payees.first.push({ name: row.name, cents: row.cents });
}

export function payeesOf(rows: readonly { name: string; cents: number }[]): Payees {
  const payees: Payees = { rows: 0, cents: 0, first: [] };
  for (const row of rows) addPayee(payees, row);
  return payees;
}

/**
 * The answers a person may give to a file's rows held as possible duplicates or for its
 * name, each with what it pays. The correction comes first when the file repeats every
 * row of the earlier batch of its name (`sameName`: that batch and its row count): it
 * pays only the rows that repeat nothing. The new payments pay those too, and the
 * repeats only when the person gives their count, which is said in words, never inside
 * a command.
 */
export function readingsOf({
  file,
  hintFlags,
  fresh,
  repeating,
  sameName,
}: {
  file: string;
  hintFlags: string;
  /** The rows that repeat nothing. */
  fresh: Payees;
  /** The rows that repeat a payout, each with it. */
  repeating: readonly Pick<HeldRow, 'name' | 'cents' | 'repeats'>[];
  sameName?: { batchId: number; rows: number };
}): Said[] {
  if (fresh.rows + repeating.length === 0) return [];
  const readings: Said[] = [];
  const repeated = new Set(
    repeating.flatMap((row) =>
      row.repeats?.batchId === sameName?.batchId ? [row.repeats?.orderId] : [],
    ),
  );
  if (sameName && sameName.rows > 0 && repeated.size >= sameName.rows) {
    readings.push({
      code: 'readingCorrects',
      file,
      batchId: sameName.batchId,
      pays: fresh,
      hintFlags,
    });
  }
  readings.push({
    code: 'readingNewBatch',
    file,
    pays: fresh,
    repeating: payeesOf(repeating),
    hintFlags,
  });
  return readings;
}
