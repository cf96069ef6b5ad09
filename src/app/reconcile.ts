/**
 * `payouts reconcile`, wired: recent paid payouts read again at the gateway, the ones
 * that came back recorded, and every result file that shows one written again.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { POLLING } from '../engine/policy.js';
import { reconcilePaid, type ReconcileReport } from '../engine/reconcile.js';
import type { GatewayClient } from '../gateway/client.js';
import type { Folders } from '../inbox/folders.js';
import type {
  JournalAnswers,
  JournalBatches,
  JournalFollowing,
  JournalGateway,
  JournalLimits,
  JournalReports,
} from '../journal/journal.js';
import { resultFileNames } from '../results/names.js';
import { writeResultFile } from '../results/result-file.js';
import { engineFor } from './engine-for.js';
import type { Clock } from '../runtime/clock.js';

const DAY_MS = 86_400_000;

export interface ReconcileDeps {
  config: Config;
  folders: Folders;
  journal: JournalFollowing &
    JournalAnswers &
    JournalBatches &
    JournalReports &
    JournalGateway &
    JournalLimits;
  gateway: GatewayClient;
  /** The journal's clock. */
  clock: Clock;
  /** Stop: no new payout is read. */
  signal: AbortSignal;
  note: (text: string) => void;
  /** Global flags the commands in hints need (see hintFlagsOf), in the results it rewrites. */
  hintFlags: string;
}

/** What reconcile found, and the result files it wrote again. */
export type Reconciled = ReconcileReport & { results: string[] };

/** Reads again the payouts paid in the last `days` days, and rewrites the results they change. */
export async function reconcileRecent(deps: ReconcileDeps, days: number): Promise<Reconciled> {
  const { config, folders, journal } = deps;
  // One window for both: the payouts read again, and the results that show a return.
  const since = deps.clock.now() - days * DAY_MS;
  const { deps: engineDeps, engine } = engineFor(journal, deps.gateway, config, {
    followMs: 0,
    signal: deps.signal,
    pollPolicy: POLLING,
    clock: deps.clock,
    note: deps.note,
  });
  const report = await reconcilePaid(engineDeps, engine, since);
  // Every result that shows a returned payout: its own file's, and every later file's
  // with a row it covered or a line naming it; also those of returns recorded by an
  // earlier reconcile that died before it rewrote their results.
  const batchIds = [
    ...new Set([
      ...report.refunded.map((payout) => payout.batchId),
      ...(await journal.batchesShowingRefundedSince(since)),
    ]),
  ];
  const results: string[] = [];
  for (const batchId of batchIds) {
    const batch = await journal.batch(batchId);
    if (!batch) continue;
    const name = await journal.resultName(
      batchId,
      resultFileNames(batch.fileName, batchId, batch.receivedAt),
    );
    const path = join(folders.results, name);
    await writeResultFile(journal, batch, path, {
      dialect: config.resultDialect,
      timeZone: config.timeZone,
      language: config.language ?? 'en',
      hintFlags: deps.hintFlags,
    });
    results.push(path);
  }
  return { ...report, results };
}
