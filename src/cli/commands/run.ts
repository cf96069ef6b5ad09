import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Command } from 'commander';
import { formatCents } from '../../csv/amount.js';
import { requestBudget } from '../../engine/budget.js';
import { planFunding, type BalanceCheck } from '../../engine/balance.js';
import {
  resolveUnknown,
  sendQueued,
  type EngineDeps,
  type EngineOptions,
} from '../../engine/engine.js';
import { followPending } from '../../engine/follow.js';
import { POLLING } from '../../engine/policy.js';
import { parseDurationMs } from '../../config/duration.js';
import { planRun, type DryRunFile } from '../../engine/dry-run.js';
import { ingestFile } from '../../engine/ingest.js';
import {
  ensureFolders,
  homeFolders,
  moveInto,
  payoutFiles,
  reject,
  type Folders,
} from '../../inbox/folders.js';
import type { GatewayClient } from '../../gateway/client.js';
import { GatewayError } from '../../gateway/errors.js';
import { openJournal, type Journal, type RowTotals } from '../../journal/journal.js';
import { FINAL, NEEDS_A_PERSON, UNFINISHED, type RowState } from '../../journal/states.js';
import { resultFileName, writeResultFile, type ResultDialect } from '../../results/result-file.js';
import { failpoint } from '../../runtime/failpoint.js';
import { waitForStopSignal } from '../../runtime/signals.js';
import { openContext, openGateway, type Context, type GlobalOptions } from '../context.js';
import { ExitError } from '../exit-error.js';

interface RunOptions {
  inbox?: string;
  dryRun?: boolean;
  followTimeout?: string;
}

interface FileSummary {
  file: string;
  batchId: number | null;
  outcome: string;
  rows: RowTotals['rows'];
  /** Cents of the rows in each state. */
  cents: RowTotals['cents'];
  totalCents: number;
  /** Where its result file was written, when it has one. */
  result: string | null;
  problems: string[];
  /** The file itself needs a person (unusable, or its reading cut short and the file gone). */
  fileNeedsAPerson: boolean;
}

/** Following runs in rounds, with unknown rows resolved between them. */
const SETTLE_ROUND_MS = 15_000;
const MAX_SETTLE_ROUNDS = 10_000;

export function runCommand(): Command {
  return new Command('run')
    .description(
      'process every file in the inbox once: journal, send, and report (the cron entry point)',
    )
    .option('--inbox <dir>', 'take files from this folder instead of <home>/inbox')
    .option(
      '--follow-timeout <duration>',
      'follow pending payouts this long before exiting (e.g. 30s, 5m; 0: not at all); default: followTimeout',
    )
    .option(
      '--dry-run',
      'read and weigh every waiting file, and say what would be sent; change and send nothing',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 every row paid; 2 some row needs a person (invalid, rejected, failed, held, conflict…);\n' +
        '3 nothing needs a person but some row is still pending or unknown (run again later); 1 the run failed.\n' +
        '\nExample:\n  PAYOUTS_HOME=/srv/payouts payouts run --json',
    )
    .action(async (options: RunOptions, command: Command) => {
      const context = openContext(command.optsWithGlobals<GlobalOptions>());
      const { config, out } = context;
      const folders = homeFolders(config.home, options.inbox);
      const followMs =
        options.followTimeout === undefined
          ? config.followTimeout
          : parseDurationMs(options.followTimeout);
      if (followMs === undefined) {
        throw new ExitError(
          1,
          `payouts run: --follow-timeout "${options.followTimeout}" is not a duration (e.g. 0, 30s, 5m)`,
        );
      }
      if (options.dryRun) {
        await dryRun(context, folders);
        return;
      }
      ensureFolders(folders);
      // Listened for from the start: a signal while a file is read ends the run before
      // anything is sent; one while sending lets the requests in flight finish and be journaled.
      const stop = new AbortController();
      void waitForStopSignal().then((signal) => {
        out.note(`${signal}: no new payouts will be sent; waiting for the ones in flight`);
        stop.abort();
      });
      const journal = openJournal(folders.journal);
      try {
        const summaries: FileSummary[] = [];
        // What arrived joins processing/, beside what an earlier run left there.
        const arrived = new Set<string>();
        for (const file of payoutFiles(folders.inbox)) {
          const moved = moveInto(file, folders.processing);
          if (moved) arrived.add(moved);
          else {
            out.note(
              `${basename(file)}: nine files of that name are still being processed; left in the inbox for a later run`,
            );
          }
        }
        for (const file of payoutFiles(folders.processing)) {
          if (stop.signal.aborted) break;
          const result = await ingestFile(file, journal, config);
          failpoint('between-files');
          if (result.kind === 'gone') continue;
          if (result.kind === 'same-file' && !arrived.has(file)) {
            // Left here by an earlier run: its rows are followed, not journaled again.
            summaries.push(summarise(journal, file, result.batchId, 'resumed', []));
            continue;
          }
          if (result.kind === 'same-file') {
            const earlier = journal.batch(result.batchId)?.fileName ?? '';
            const why = `the same bytes as batch ${result.batchId} (${earlier}): nothing sent again`;
            reject(file, folders.rejected, [why]);
            summaries.push(
              summarise(journal, file, result.batchId, `a copy of ${why}; moved to rejected/`, []),
            );
            continue;
          }
          const problems = result.report.problems.map((p) => p.message);
          if (result.kind === 'unusable') {
            reject(file, folders.rejected, problems);
            summaries.push({
              ...summarise(
                journal,
                file,
                result.batchId,
                'cannot be used: moved to rejected/',
                problems,
              ),
              fileNeedsAPerson: true,
            });
            continue;
          }
          summaries.push(
            summarise(
              journal,
              file,
              result.batchId,
              result.kind === 'held' ? 'held: nothing sent' : 'journaled',
              problems,
            ),
          );
        }

        if (!stop.signal.aborted) {
          // Every file in processing/ was read, so a batch still `admitting` lost its file
          // while a run that was reading it died: its rows wait, unsent, for the same bytes.
          for (const batch of journal.batchesIn('admitting')) {
            if (summaries.some((summary) => summary.batchId === batch.id)) continue;
            summaries.push({
              ...summarise(journal, batch.fileName, batch.id, 'reading cut short', [
                `a run stopped while reading ${batch.fileName}, and the file is no longer in processing/: none of its rows is sent until the same file is dropped in the inbox again`,
              ]),
              fileNeedsAPerson: true,
            });
          }
        }

        const gateway = await openGateway(context);
        // The longest a request can take (connect, headers, then body), with margin.
        const longestRequestMs = config.connectTimeout + 2 * config.requestTimeout + 2_000;
        const engineOptions: EngineOptions = {
          owner: `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
          concurrency: config.concurrency,
          // A claim must not end while its request may still be on its way.
          leaseMs: longestRequestMs,
          // Never shorter than a claim: a request must be over before its row may go again.
          graceMs: Math.max(config.resendGrace, longestRequestMs),
          maxUnreachable: 8,
          signal: stop.signal,
          pollPolicy: POLLING,
        };
        const deps: EngineDeps = {
          journal,
          gateway: gateway.client,
          now: Date.now,
          sleep: (ms: number, signal: AbortSignal) =>
            delay(ms, undefined, { signal }).catch(() => undefined),
          random: Math.random,
          budget: requestBudget(config.maxRequestsPerSecond),
        };
        let stopped: string | undefined;
        let failed = false;
        // Closed whatever happens: an embedded sandbox left listening would keep cron's run alive.
        try {
          fundBatches(
            await readBalance(gateway.client, config.balanceCheck),
            journal,
            config.balanceCheck,
            summaries,
            out.note,
          );
          for (const step of [resolveUnknown, sendQueued, resolveUnknown]) {
            const report = await step(deps, engineOptions);
            stopped = report.stopped;
            failed = report.failed;
            if (stopped) break;
          }
          if (!stopped && followMs > 0) {
            const report = await settle(deps, engineOptions, Date.now() + followMs, out.note);
            stopped = report.stopped;
            failed = report.failed;
          }
        } finally {
          await gateway.close();
        }

        const final: FileSummary[] = [];
        for (const summary of summaries) {
          final.push(await finishFile(journal, folders, config.resultDialect, summary));
        }
        out.data({ files: final, stopped: stopped ?? null });
        for (const summary of final) out.line(describe(summary));
        if (final.length === 0) out.line('The inbox is empty: nothing to do.');
        if (stopped)
          out.line(`\nStopped early: ${stopped}. Rows not sent stay queued for the next run.`);

        const exitCode = failed ? 1 : exitCodeOf(final, stopped);
        if (exitCode !== 0) throw new ExitError(exitCode);
      } finally {
        journal.close();
      }
    });
}

function summarise(
  journal: Journal,
  file: string,
  batchId: number | undefined,
  outcome: string,
  problems: string[],
): FileSummary {
  // No batch: the file could not even be read, so it has no rows to count.
  const batch = batchId === undefined ? undefined : journal.batch(batchId);
  return {
    file: basename(file),
    batchId: batchId ?? null,
    outcome,
    ...(batchId === undefined ? { rows: {}, cents: {} } : journal.rowTotalsOfBatch(batchId)),
    totalCents: batch?.totalCents ?? 0,
    result: null,
    problems,
    fileNeedsAPerson: false,
  };
}

function describe(summary: FileSummary): string {
  const counts = Object.entries(summary.rows)
    .map(([state, count]) => {
      const cents = summary.cents[state as keyof FileSummary['cents']] ?? 0;
      return cents > 0 ? `${count} ${state} (${formatCents(cents)})` : `${count} ${state}`;
    })
    .join(', ');
  const problems = summary.problems.map((p) => `\n  ${p}`).join('');
  const result = summary.result ? `\n  result: ${summary.result}` : '';
  return `${summary.file}: ${summary.outcome}; ${counts || 'no rows'}; valid rows total ${formatCents(summary.totalCents)}${problems}${result}`;
}

/**
 * Follows pending payouts until `until`, and between rounds resolves rows still unknown
 * (their re-send may fall due while following): what is left is the next run's.
 */
async function settle(
  deps: EngineDeps,
  options: EngineOptions,
  until: number,
  note: (text: string) => void,
): Promise<{ stopped: string | undefined; failed: boolean }> {
  const onUnknownStatus = (word: string, orderId: string) =>
    note(
      `the gateway answered status "${word}" (first seen on ${orderId}), which payouts does not know: kept verbatim, and the row stays pending`,
    );
  for (let round = 0; round < MAX_SETTLE_ROUNDS && deps.now() < until; round++) {
    const roundEnd = Math.min(until, deps.now() + SETTLE_ROUND_MS);
    const followed = await followPending(deps, { ...options, until: roundEnd, onUnknownStatus });
    if (followed.stopped) return followed;
    const counts = deps.journal.countsByState();
    if (!counts.unknown && !counts.sending && !counts.pending) break;
    if (counts.unknown || counts.sending) {
      const resolved = await resolveUnknown(deps, options);
      if (resolved.stopped) return resolved;
      const sent = await sendQueued(deps, options);
      if (sent.stopped) return sent;
    }
    // Only unknown rows left: their next lookup waits for the next round.
    if (!deps.journal.countsByState().pending) {
      await deps.sleep(roundEnd - deps.now(), options.signal);
    }
  }
  return { stopped: undefined, failed: false };
}

/**
 * Writes a handled file's result and, when every row is final, archives it (its batch
 * done). A file that could not be read has no rows and no result.
 */
async function finishFile(
  journal: Journal,
  folders: Folders,
  dialect: ResultDialect,
  summary: FileSummary,
): Promise<FileSummary> {
  const batch = summary.batchId === null ? undefined : journal.batch(summary.batchId);
  const path = join(folders.processing, summary.file);
  if (!batch || summary.fileNeedsAPerson || !existsSync(path)) return summary;
  const totals = journal.rowTotalsOfBatch(batch.id);
  const result = join(folders.results, resultFileName(summary.file));
  await writeResultFile(journal, batch, result, dialect);
  const finished = Object.keys(totals.rows).every((key) =>
    [...FINAL, 'skipped'].includes(key as RowState),
  );
  let outcome = summary.outcome;
  if (finished && moveInto(path, folders.archive)) {
    journal.setBatchState(batch.id, 'done');
    outcome = `${outcome}; every row final: archived`;
  }
  return { ...summary, ...totals, outcome, result };
}

/** DESIGN.md section 8. */
function exitCodeOf(files: readonly FileSummary[], stopped: string | undefined): number {
  const states = files.flatMap((file) => Object.keys(file.rows));
  const needsAPerson =
    files.some((file) => file.fileNeedsAPerson) ||
    states.some((state) => NEEDS_A_PERSON.includes(state as RowState));
  if (needsAPerson) return 2;
  if (stopped || states.some((state) => UNFINISHED.includes(state as RowState))) return 3;
  return 0;
}

/** The balance in cents, or why it could not be read; a refused token ends the run. */
async function readBalance(
  gateway: GatewayClient,
  check: BalanceCheck,
): Promise<{ cents: number | undefined; error?: string }> {
  if (check === 'off') return { cents: undefined };
  try {
    return { cents: (await gateway.getBalance()).balance };
  } catch (error) {
    if (!(error instanceof GatewayError) || error.kind === 'auth') throw error;
    return { cents: undefined, error: `${error.kind}: ${error.message}` };
  }
}

/** Opens the batches the balance covers, oldest first, and holds the others (DESIGN.md section 6). */
function fundBatches(
  balance: { cents: number | undefined; error?: string },
  journal: Journal,
  check: BalanceCheck,
  summaries: FileSummary[],
  note: (text: string) => void,
): void {
  const plan = planFunding(journal.queuedByBatch(), balance.cents, check, balance.error);
  for (const batchId of plan.open) {
    if (journal.batch(batchId)?.state === 'underfunded') journal.fundBatch(batchId);
  }
  for (const { batchId, why } of plan.underfunded) {
    journal.underfundBatch(batchId, why);
    const summary = summaries.find((candidate) => candidate.batchId === batchId);
    if (summary) {
      summary.outcome = 'held: the balance does not cover it';
      summary.problems.push(why);
    }
  }
  for (const warning of plan.warnings) note(warning);
}

/** `run --dry-run`: the plan, with nothing moved, written or sent. Exit 2 when a person is needed. */
async function dryRun(context: Context, folders: Folders): Promise<void> {
  const { config, out } = context;
  const files = [...payoutFiles(folders.processing), ...payoutFiles(folders.inbox)];
  const journal = existsSync(folders.journal) ? openJournal(folders.journal) : undefined;
  let plan: DryRunFile[];
  try {
    plan = await planRun(files, journal, config);
  } finally {
    journal?.close();
  }
  const toSend = plan
    .map((file, index) => ({ batchId: index, cents: file.wouldSendCents }))
    .filter((batch) => batch.cents > 0);
  let funding = planFunding(toSend, undefined, 'off');
  if (toSend.length > 0 && config.balanceCheck !== 'off') {
    const gateway = await openGateway(context);
    try {
      const balance = await readBalance(gateway.client, config.balanceCheck);
      funding = planFunding(toSend, balance.cents, config.balanceCheck, balance.error);
    } finally {
      await gateway.close();
    }
  }
  for (const { batchId, why } of funding.underfunded) plan[batchId]?.problems.push(why);
  out.data({ dryRun: true, files: plan });
  for (const file of plan) {
    const problems = file.problems.map((problem) => `\n  ${problem}`).join('');
    out.line(
      `${file.file}: would send ${file.wouldSend} (${formatCents(file.wouldSendCents)}); ${file.replays} already journaled, ${file.conflicts} conflicts, ${file.invalid} invalid, ${file.skipped} skipped${problems}`,
    );
  }
  if (plan.length === 0) out.line('The inbox is empty: nothing to do.');
  const needsAPerson = plan.some(
    (file) => file.invalid > 0 || file.conflicts > 0 || file.problems.length > 0,
  );
  if (needsAPerson) throw new ExitError(2);
}
