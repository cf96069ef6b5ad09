/**
 * `payouts run`, wired: which inbox files have settled on our clock, then one pass
 * against the gateway, and the run's exit code (docs/row-states.md).
 */
import type { Config } from '../config/schema.js';
import { POLLING } from '../engine/policy.js';
import type { GatewayClient } from '../gateway/client.js';
import { payoutFiles, type Folders } from '../inbox/folders.js';
import type { WorkerClaims } from '../inbox/lock.js';
import { settledOnOurClock } from '../inbox/readiness.js';
import type { Clock } from '../runtime/clock.js';
import { exitCodeOf, runPass, type PassJournal, type PassReport } from './pass.js';

export interface RunDeps {
  config: Config;
  folders: Folders;
  /** The home's journal, its lock held by this process. */
  journal: PassJournal;
  /** What this process takes for itself beside other hosts' (see PassOptions). */
  claims?: WorkerClaims;
  /** Opened once the inbox was looked at, closed when the pass ends, whatever happens. */
  openGateway: () => Promise<{ client: GatewayClient; close(): Promise<void> }>;
  /**
   * Shown while the pass works (a progress bar), stopped before the gateway closes; the
   * pass's remarks are said through it.
   */
  showProgress: () => Promise<{ note(text: string): void; stop(): Promise<void> }>;
  /** The journal's clock, read and slept on. */
  clock: Clock;
  /** Stop: no new file is read and no new payout sent; what is in flight is journaled. */
  signal: AbortSignal;
  /** How long to follow pending payouts after sending (0: not at all). */
  followMs: number;
  /** Global flags the commands in hints need (see hintFlagsOf). */
  hintFlags: string;
  /** A person chose recovery (`run --recover`): see PassOptions. */
  recover: boolean;
}

export async function runInbox(deps: RunDeps): Promise<PassReport & { exitCode: number }> {
  const { config, folders, signal } = deps;
  // Which inbox (and approved/) files have settled, on our clock: looked at twice
  // inboxSettle apart when their time does not prove it (a share's clock may run ahead).
  const isReady = await settledOnOurClock(
    [...payoutFiles(folders.inbox), ...payoutFiles(folders.approved)],
    config.inboxSettle,
    (ms) => deps.clock.sleep(ms, signal),
    () => deps.clock.now(),
  );
  const gateway = await deps.openGateway();
  let pass: PassReport;
  // Closed whatever happens: an embedded sandbox left listening would keep cron's run alive.
  try {
    const progress = await deps.showProgress();
    try {
      pass = await runPass(deps.journal, gateway.client, folders, config, {
        hintFlags: deps.hintFlags,
        recover: deps.recover,
        followMs: deps.followMs,
        signal,
        pollPolicy: POLLING,
        isReady,
        ...(deps.claims ? { claims: deps.claims } : {}),
        clock: deps.clock,
        note: progress.note,
      });
    } finally {
      await progress.stop();
    }
  } finally {
    await gateway.close();
  }
  return { ...pass, exitCode: pass.failed ? 1 : exitCodeOf(pass.files, pass.stopped) };
}
