/**
 * `payouts run --dry-run`, wired: every waiting file read and weighed against the
 * journal, and the balance when it is checked, with nothing moved, written or sent.
 */
import type { Config } from '../config/schema.js';
import { planFunding } from '../engine/balance.js';
import { planRun, type DryRunFile, type RehearsalJournal } from '../engine/dry-run.js';
import type { GatewayClient } from '../gateway/client.js';
import { payoutFiles, type Folders } from '../inbox/folders.js';
import { sayInEnglish } from '../messages/say.js';
import { readBalance } from './pass.js';

export interface RehearsalDeps {
  config: Config;
  folders: Folders;
  /** The home's journal, when it has one: without, nothing was paid before. */
  journal: RehearsalJournal | undefined;
  /** Global flags the commands in hints need (see hintFlagsOf). */
  hintFlags: string;
  /** Now, on the clock a run would read, to say which files it would hold for their age. */
  now: number;
  /** Opened only when something would be sent and the balance is checked. */
  openGateway: () => Promise<{ client: GatewayClient; close(): Promise<void> }>;
}

/** What a run would do with each file of processing/ and the inbox, in that order. */
export async function rehearseRun(deps: RehearsalDeps): Promise<DryRunFile[]> {
  const { config, folders } = deps;
  const files = [...payoutFiles(folders.processing), ...payoutFiles(folders.inbox)];
  const plan = await planRun(files, deps.journal, {
    ...config,
    hintFlags: deps.hintFlags,
    now: deps.now,
  });
  const toSend = plan
    .map((file, index) => ({ batchId: index, cents: file.wouldSendCents, count: file.wouldSend }))
    .filter((batch) => batch.cents > 0);
  let funding = planFunding(toSend, undefined, 'off');
  if (toSend.length > 0 && config.balanceCheck !== 'off') {
    const gateway = await deps.openGateway();
    try {
      const balance = await readBalance(gateway.client, config.balanceCheck);
      funding = planFunding(
        toSend,
        balance.cents,
        config.balanceCheck,
        balance.error,
        config.feePerPayoutCents,
      );
    } finally {
      await gateway.close();
    }
  }
  for (const { batchId, why } of funding.underfunded)
    plan[batchId]?.problems.push(sayInEnglish(why));
  return plan;
}
