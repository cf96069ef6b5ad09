import { hostNameOf } from '../../runtime/worker-name.js';
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { parseDurationMs } from '../../config/duration.js';
import { formatCents } from '../../messages/money.js';
import { givenName } from '../../csv/given-name.js';
import type { DryRunFile } from '../../engine/dry-run.js';
import { ensureFolders, homeFolders, type Folders } from '../../inbox/folders.js';
import { runInbox } from '../../app/run.js';
import { rehearseRun } from '../../app/rehearse.js';
import { daemonInTheWay, describeHolder, lockHome, type WorkerClaims } from '../../inbox/lock.js';
import { warnPendingTooLong } from '../../inbox/pending-alert.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import type { Journal } from '../../journal/journal.js';
import {
  hintFlagsOf,
  openContext,
  openGateway,
  requireInbox,
  requireOwnHome,
  type Context,
  type GlobalOptions,
} from '../context.js';
import { ExitError, usageError } from '../exit-error.js';
import { startProgress } from '../progress.js';
import { CATALOGS } from '../../messages/catalog.js';
import {
  checkClockWhileWorking,
  homeJournalAt,
  openWorkJournal,
  readHomeJournal,
} from '../work-journal.js';
import { describeFile } from '../../app/describe-file.js';
import { say, sayInEnglish } from '../../messages/say.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

interface RunOptions {
  inbox?: string;
  dryRun?: boolean;
  followTimeout?: string;
  wait?: string | true;
  recover?: boolean;
}

/** How long `--wait` without a duration waits for another run to finish. */
const DEFAULT_WAIT = '10m';

export function runCommand(io: CliIo, { command: { run: words }, usage }: HelpTexts): Command {
  return new Command('run')
    .description(words.description)
    .option('--inbox <dir>', words.options.inbox)
    .option('--follow-timeout <duration>', words.options.followTimeout)
    .option('--wait [duration]', words.wait({ duration: DEFAULT_WAIT }))
    .option('--recover', words.options.recover)
    .option('--log-times', words.options.logTimes)
    .option('--dry-run', words.options.dryRun)
    .addHelpText('after', words.after)
    .action(async (options: RunOptions, command: Command) => {
      // The command line first: a usage error is said before the settings are read.
      const followFlagMs =
        options.followTimeout === undefined
          ? undefined
          : durationFlag('--follow-timeout', options.followTimeout, usage);
      const waitMs =
        options.wait === undefined
          ? 0
          : durationFlag('--wait', options.wait === true ? DEFAULT_WAIT : options.wait, usage);
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const { config, out } = context;
      requireInbox('run', options.inbox);
      const folders = homeFolders(config.home, options.inbox);
      const followMs = followFlagMs ?? config.followTimeout;
      if (options.dryRun) {
        await dryRun(context, folders, hintFlagsOf(command.optsWithGlobals<GlobalOptions>()));
        return;
      }
      requireOwnHome('run', folders);
      ensureFolders(folders, config.sharedGroup, config.fourEyes);
      // Listened for from the start: a signal while a file is read ends the run before
      // anything is sent; one while sending gives the requests in flight 2 s to finish and be journaled.
      const stop = new AbortController();
      const stopSignal = listenForStopSignal((signal) => {
        out.note(`${signal}: no new payouts will be sent; waiting for the ones in flight`);
        stop.abort();
      });
      let journal: Journal;
      try {
        journal = await openWorkJournal('run', folders, out, config, {
          now: io.clock.now,
          recover: options.recover ?? false,
        });
      } catch (error) {
        stopSignal.close();
        throw error;
      }
      try {
        const lock = await lockHome(journal, {
          command: 'run',
          host: hostNameOf(config.hostName),
          perHost: homeJournalAt(folders, config).kind === 'postgres',
          waitMs,
          signal: stop.signal,
          clock: io.clock,
          onWait: (holder) => out.note(`waiting for ${describeHolder(holder)} to finish`),
          onAway: (why) => out.note(`${why}: the journal cannot be reached; trying again`),
          onLost: (why) => {
            out.note(`${why}: no new payouts will be sent; stopping`);
            stop.abort();
          },
        });
        if ('heldBy' in lock) {
          const inTheWay = daemonInTheWay(lock.heldBy, io.clock.now());
          if (inTheWay) throw new ExitError(1, `payouts run: ${inTheWay}`);
          // Said even with --quiet (cron's logs): exit 3 alone does not say who holds it.
          const waited =
            options.wait === undefined
              ? ''
              : ` after waiting ${options.wait === true ? DEFAULT_WAIT : options.wait}`;
          throw new ExitError(
            3,
            `payouts run: another payouts process (${describeHolder(lock.heldBy)}) is still working on this home folder${waited}: nothing done. Run again later, or ${waited ? 'wait longer with' : 'use'} --wait.`,
          );
        }
        // Measured again with each heartbeat: a clock stepped off mid-run sends nothing more.
        let clockOff: string | undefined;
        const stopChecking = checkClockWhileWorking(journal, config, {
          now: io.clock.now,
          watching: false,
          onOff: (text) => {
            clockOff = text;
            stop.abort();
          },
        });
        try {
          await work(lock.claims);
        } catch (error) {
          if (clockOff === undefined || !(error instanceof ExitError)) throw error;
        } finally {
          stopChecking();
          await lock.release();
        }
        if (clockOff !== undefined) throw new ExitError(1, `payouts run: ${clockOff}`);
      } finally {
        // The listeners first: a journal that fails to close must not leave them behind.
        stopSignal.close();
        await journal.close();
      }

      async function work(claims: WorkerClaims | undefined): Promise<void> {
        const {
          files: final,
          stopped,
          exitCode,
        } = await runInbox({
          config,
          folders,
          journal,
          ...(claims ? { claims } : {}),
          openGateway: () => openGateway(context, journal),
          // A bar on a terminal only: cron's log gets the summary, not a line every 2 s.
          showProgress: () =>
            startProgress(
              journal,
              io.stderr.isTTY && !out.json && !out.quiet ? 'bar' : 'off',
              io.stderr,
              out.note,
              CATALOGS[config.language ?? 'en'],
            ),
          clock: io.clock,
          signal: stop.signal,
          followMs,
          hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
          recover: options.recover ?? false,
        });
        const sandbox = (await journal.gatewayKind()) === 'sandbox';
        // Programs read English sentences (the state codes are what to act on).
        const files = final.map((file) => ({ ...file, problems: file.problems.map(sayInEnglish) }));
        out.data({ sandbox, files, stopped: stopped ?? null });
        // In the summary itself, not only on stderr: cron's log may keep stdout alone.
        const words = CATALOGS[config.language ?? 'en'];
        // Nothing arrived, nothing is open (an open batch is always listed), nothing was cut
        // short: with --quiet, cron's log gets no line every five minutes.
        const nothingHappened = final.length === 0 && !stopped;
        if (!(nothingHappened && out.quiet)) {
          if (sandbox) out.line(words.sandboxRun);
          for (const summary of final) out.line(describeFile(summary, words));
          if (final.length === 0) out.line(words.inboxEmpty);
        }
        if (stopped)
          out.line(`\nStopped early: ${stopped}. Rows not sent stay queued for the next run.`);
        // Said even with --quiet or --json: a payout waiting for hours is a person's question.
        for (const file of final) {
          if (file.pendingTooLong) {
            const hintFlags = hintFlagsOf(command.optsWithGlobals<GlobalOptions>());
            out.warn(
              say(words, warnPendingTooLong(givenName(file.file), file.pendingTooLong, hintFlags)),
            );
          }
        }

        if (exitCode !== 0) throw new ExitError(exitCode);
      }
    });
}

/** A flag's duration in milliseconds, or a usage error naming the flag. */
function durationFlag(flag: string, text: string, usage: HelpTexts['usage']): number {
  const ms = parseDurationMs(text);
  if (ms === undefined) {
    throw usageError('run', `payouts run: ${usage.notADuration({ flag, text })}`, usage);
  }
  return ms;
}

/** `run --dry-run`: the plan, with nothing moved, written or sent. Exit 2 when a person is needed. */
async function dryRun(context: Context, folders: Folders, hintFlags: string): Promise<void> {
  const { config, out } = context;
  // A run would refuse a lost journal: so does its rehearsal, rather than promise to pay all.
  const { journal, loss, moved } = await readHomeJournal(folders, config, context.io.clock.now);
  if (loss || moved) {
    await journal?.close();
    const why = moved ? say(CATALOGS[config.language ?? 'en'], moved) : loss;
    throw new ExitError(1, `payouts run --dry-run: ${why}`);
  }
  let plan: DryRunFile[];
  try {
    plan = await rehearseRun({
      config,
      folders,
      journal,
      hintFlags,
      now: context.io.clock.now(),
      openGateway: () => openGateway(context),
    });
  } finally {
    await journal?.close();
  }
  // Programs read English, and each hold's code.
  out.data({
    dryRun: true,
    files: plan.map((file) => ({
      ...file,
      holds: file.holds.map(({ said, ...hold }) => ({ ...hold, code: said.code })),
    })),
  });
  for (const file of plan) {
    const problems = [
      ...file.holds.map((hold) => `line ${hold.line}: held (${hold.rule}): ${hold.message}`),
      ...(file.held > file.holds.length
        ? [`… and ${file.held - file.holds.length} more held`]
        : []),
      ...file.problems,
      ...file.readings.map(sayInEnglish),
    ]
      .map((problem) => `\n  ${problem}`)
      .join('');
    out.line(
      `${file.file}: would send ${file.wouldSend} (${formatCents(file.wouldSendCents)}); ${file.held} held (already journaled from another file, or possible duplicates), ${file.invalid} invalid, ${file.skipped} skipped${problems}`,
    );
  }
  if (plan.length === 0) out.line(CATALOGS[config.language ?? 'en'].inboxEmpty);
  const needsAPerson = plan.some(
    (file) => file.invalid > 0 || file.held > 0 || file.problems.length > 0,
  );
  if (needsAPerson) throw new ExitError(2);
}
