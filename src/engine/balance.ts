/**
 * The balance check before sending (DESIGN.md section 6): batches are funded oldest
 * first; a batch the balance does not cover is not sent (`block`), or sent with a warning
 * (`warn`). A pure plan; the caller reads the balance and applies it.
 */
import { formatCents } from '../csv/amount.js';

export const BALANCE_CHECKS = ['block', 'warn', 'off'] as const;
export type BalanceCheck = (typeof BALANCE_CHECKS)[number];

export interface BatchToFund {
  batchId: number;
  cents: number;
}

export interface FundingPlan {
  /** Batches that may be sent. */
  open: number[];
  /** Batches that may not, with why. */
  underfunded: { batchId: number; why: string }[];
  warnings: string[];
}

/** `balanceCents` is undefined when it could not be read; `readError` says why. */
export function planFunding(
  batches: readonly BatchToFund[],
  balanceCents: number | undefined,
  check: BalanceCheck,
  readError?: string,
): FundingPlan {
  const plan: FundingPlan = { open: [], underfunded: [], warnings: [] };
  let committed = 0;
  for (const batch of batches) {
    let why: string | undefined;
    if (check !== 'off') {
      if (balanceCents === undefined) {
        why = `the balance could not be read (${readError ?? 'no answer'}), so ${formatCents(batch.cents)} cannot be checked against it`;
      } else if (committed + batch.cents > balanceCents) {
        const available = Math.max(0, balanceCents - committed);
        why = `the balance leaves ${formatCents(available)} for this batch's ${formatCents(batch.cents)}`;
      }
    }
    if (why && check === 'block') {
      plan.underfunded.push({
        batchId: batch.batchId,
        why: `${why} (balanceCheck: block): nothing of it is sent`,
      });
      continue;
    }
    if (why)
      plan.warnings.push(`batch ${batch.batchId}: ${why} (balanceCheck: warn): sending anyway`);
    committed += batch.cents;
    plan.open.push(batch.batchId);
  }
  return plan;
}
