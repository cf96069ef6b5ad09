/**
 * The balance check before sending (`balanceCheck`, docs/configuration.md): batches are funded oldest
 * first; a batch the balance does not cover is not sent (`block`), or sent with a warning
 * (`warn`). A pure plan; the caller reads the balance and applies it.
 */
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';

export const BALANCE_CHECKS = ['block', 'warn', 'off'] as const;
export type BalanceCheck = (typeof BALANCE_CHECKS)[number];

export interface BatchToFund {
  batchId: number;
  /** What its payouts send, without fees. */
  cents: number;
  /** How many payouts: each may cost the contract's fee on top of its value. */
  count?: number;
}

export interface FundingPlan {
  /** Batches that may be sent. */
  open: number[];
  /** Batches that may not, with why. */
  underfunded: { batchId: number; why: Said }[];
  warnings: string[];
}

/**
 * `balanceCents` is undefined when it could not be read; `readError` says why.
 * `feePerPayoutCents` (the contract's Pix fee, from the config) is added per payout: the
 * gateway's own `tax` answers are text of unstated unit and are never computed with.
 */
export function planFunding(
  batches: readonly BatchToFund[],
  balanceCents: number | undefined,
  check: BalanceCheck,
  readError?: string,
  feePerPayoutCents = 0,
): FundingPlan {
  const plan: FundingPlan = { open: [], underfunded: [], warnings: [] };
  let committed = 0;
  for (const batch of batches) {
    const count = batch.count ?? 0;
    const needs = batch.cents + feePerPayoutCents * count;
    const wanted = { cents: batch.cents, count, feeCents: feePerPayoutCents };
    let why: Said | undefined;
    if (check !== 'off') {
      if (balanceCents === undefined) {
        why = {
          code: 'balanceShortfall',
          ...wanted,
          ...(readError === undefined ? {} : { readError }),
        };
      } else if (committed + needs > balanceCents) {
        const availableCents = Math.max(0, balanceCents - committed);
        why = { code: 'balanceShortfall', ...wanted, availableCents };
      }
    }
    if (why && check === 'block') {
      plan.underfunded.push({
        batchId: batch.batchId,
        why: { code: 'balanceBlocks', shortfall: why },
      });
      continue;
    }
    // An operator's log line, in English.
    if (why) {
      plan.warnings.push(
        `batch ${batch.batchId}: ${sayInEnglish(why)} (balanceCheck: warn): sending anyway`,
      );
    }
    committed += needs;
    plan.open.push(batch.batchId);
  }
  return plan;
}
