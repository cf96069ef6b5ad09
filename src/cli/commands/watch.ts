import { basename } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Command } from 'commander';
import { watch } from 'chokidar';
import { Doorbell, nudgeOnPostback } from '../../engine/follow.js';
import { POLLING, POLLING_WITH_POSTBACKS } from '../../engine/policy.js';
import {
  ensureFolders,
  homeFolders,
  isPayoutFileName,
  payoutFiles,
  type Folders,
} from '../../inbox/folders.js';
import { describeHolder, lockHome } from '../../inbox/lock.js';
import { exitCodeOf, runPass, type PassMemory, type PassReport } from '../../app/pass.js';
import { settledFiles } from '../../inbox/readiness.js';
import type { Journal } from '../../journal/journal.js';
import { SANDBOX_MARK } from '../../results/result-file.js';
import { startPostbackReceiver, type PostbackReceiver } from '../../postback/receiver.js';
import { postbackSecret } from '../../postback/secret.js';
import { systemClock } from '../../runtime/clock.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import {
  hintFlagsOf,
  openContext,
  openGateway,
  requireInbox,
  type Context,
  type GlobalOptions,
} from '../context.js';
import { GatewayError, needsTheOperator } from '../../gateway/errors.js';
import { ExitError } from '../exit-error.js';
import { openWorkJournal } from '../work-journal.js';
import { describeFile } from '../format.js';
import type { CliIo } from '../../runtime/io.js';

/** How often the daemon logs its health line (also on SIGUSR2). */
const HEALTH_EVERY_MS = 60_000;

export function watchCommand(io: CliIo): Command {
  return new Command('watch')
    .description(
      'the daemon: take every file that settles in the inbox, pay it exactly once, follow it to the end, write results; until SIGINT/SIGTERM',
    )
    .addHelpText(
      'after',
      '\nFiles present at start (and any left in processing/ by a process that died) are taken first.\n' +
        'SIGINT/SIGTERM: no new file or payout; requests in flight get 2 s to finish and are journaled; exit 0.\n' +
        'SIGUSR2: a health line on stderr now.\n' +
        '\nExample:\n  PAYOUTS_HOME=/srv/payouts PAYOUTS_POSTBACK_LISTEN=127.0.0.1:8787 payouts watch',
    )
    .option('--inbox <dir>', 'take files from this folder instead of <home>/inbox')
    .action(async (options: { inbox?: string }, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const { config, logger } = context;
      requireInbox('watch', options.inbox);
      const folders = homeFolders(config.home, options.inbox);
      ensureFolders(folders, config.sharedGroup);
      // From the start: a standby daemon asked for its health must not die of the signal.
      let health = () => logger.info('health: waiting for the home folder lock');
      const onHealthSignal = () => health();
      process.on('SIGUSR2', onHealthSignal);
      const stop = new AbortController();
      const stopSignal = listenForStopSignal((signal) => {
        logger.info(
          `${signal}: taking no new file and sending nothing new; finishing what is in flight`,
        );
        stop.abort();
      });
      let journal: Journal;
      try {
        journal = openWorkJournal('watch', folders, context.out);
      } catch (error) {
        stopSignal.close();
        process.off('SIGUSR2', onHealthSignal);
        throw error;
      }
      let lostLock = false;
      try {
        const lock = await lockHome(journal, {
          waitMs: Number.MAX_SAFE_INTEGER,
          signal: stop.signal,
          clock: systemClock,
          onWait: (holder) =>
            logger.info(
              `another payouts process (${describeHolder(holder)}) is working on this home folder: waiting for it`,
            ),
          onLost: (why) => {
            logger.error(`${why}: stopping, so that two processes never work on one home folder`);
            lostLock = true;
            stop.abort();
          },
        });
        if ('heldBy' in lock) return; // stopped while waiting
        try {
          await serve(
            context,
            folders,
            journal,
            stop.signal,
            (report) => (health = report),
            hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
          );
        } finally {
          lock.release();
        }
      } finally {
        stopSignal.close();
        process.off('SIGUSR2', onHealthSignal);
        journal.close();
      }
      if (lostLock) throw new ExitError(1, 'payouts watch: stopped: the home folder lock was lost');
      logger.info('stopped');
    });
}

/** Pause after a pass that failed on something outside payouts (a disk error, say). */
const FAILED_PASS_BACKOFF_MS = 30_000;

async function serve(
  context: Context,
  folders: Folders,
  journal: Journal,
  stop: AbortSignal,
  setHealth: (report: () => void) => void,
  hintFlags: string,
): Promise<void> {
  const { config, logger } = context;
  const gateway = await openGateway(context, journal);
  const mark = journal.gatewayKind() === 'sandbox' ? `${SANDBOX_MARK}: ` : '';
  const doorbell = new Doorbell();
  const health = () => ({
    processing: payoutFiles(folders.processing).length,
    inbox: payoutFiles(folders.inbox).length,
    rows: Object.fromEntries(
      Object.entries(journal.countsByState()).map(([state, { count }]) => [state, count]),
    ),
  });
  let receiver: PostbackReceiver | undefined;
  // Files events only wake the loop early; the rescan finds every file regardless.
  const arrivals = new Doorbell();
  const watcher = watch([folders.inbox, folders.approved], {
    depth: 0,
    ignoreInitial: true,
    // A spreadsheet's lock file or a download in progress wakes nobody.
    ignored: (path, stats) => stats?.isFile() === true && !isPayoutFileName(basename(path)),
  });
  watcher.on('all', () => arrivals.ring());
  watcher.on('error', (error) =>
    logger.warn(`watching the inbox: ${String(error)}; rescanning every ${config.inboxRescan} ms`),
  );
  const logHealth = () => {
    try {
      logger.info(health(), 'health');
    } catch (error) {
      logger.warn(`health: ${(error as Error).message}`);
    }
  };
  const healthTimer = setInterval(logHealth, HEALTH_EVERY_MS);
  setHealth(logHealth);
  try {
    if (config.postbackListen) {
      const [, host = '', port = ''] = /^\[?(.*?)\]?:(\d+)$/.exec(config.postbackListen) ?? [];
      receiver = await startPostbackReceiver({
        host,
        port: Number(port),
        secret: postbackSecret(folders.home),
        onPostback: nudgeOnPostback(journal, doorbell),
        health,
      }).catch((error: NodeJS.ErrnoException) => {
        throw new ExitError(
          1,
          `payouts watch: cannot listen for postbacks on ${config.postbackListen} (${error.code ?? error.message})`,
        );
      });
      logger.info(`postback receiver listening on ${receiver.url} (GET /healthz for health)`);
    }
    const postbackUrl = receiver
      ? `${config.postbackPublicUrl ?? receiver.url}/postback/${postbackSecret(folders.home)}`
      : undefined;
    const memory: PassMemory = {
      seen: new Map(),
      written: new Map(),
      resolvedAt: 0,
      warned: new Set(),
    };
    const isReady = settledFiles(config.inboxSettle, Date.now);
    const told = new Map<string, string>();
    logger.info(`watching ${folders.inbox}`);
    // Until stopped: a daemon's life is bounded by its signals.
    while (!stop.aborted) {
      let pass: PassReport;
      try {
        pass = await runPass(journal, gateway.client, folders, config, {
          hintFlags,
          followMs: config.inboxRescan,
          signal: stop,
          pollPolicy: receiver ? POLLING_WITH_POSTBACKS : POLLING,
          ...(postbackUrl === undefined ? {} : { postbackUrl }),
          doorbell,
          isReady,
          memory,
          note: (text) => logger.warn(text),
        });
      } catch (error) {
        if (error instanceof ExitError) throw error;
        // A refused token or a wrong address does not mend itself: stop, and say what to
        // check (a supervisor shows the exit, where a retried pass would only log).
        if (error instanceof GatewayError && needsTheOperator(error)) throw error;
        // A file or disk the daemon cannot handle now: said, and tried again later; what
        // is journaled stays journaled.
        logger.error(
          `pass failed: ${(error as Error).message}; trying again in ${FAILED_PASS_BACKOFF_MS / 1000}s`,
        );
        await delay(FAILED_PASS_BACKOFF_MS, undefined, { signal: stop }).catch(() => undefined);
        continue;
      }
      // Each file said once per change, not once per pass; files gone are forgotten.
      const current = new Map(
        pass.files.map((file) => [`${file.batchId ?? ''}:${file.file}`, file]),
      );
      for (const [key, file] of current) {
        const text = describeFile(file);
        if (told.get(key) === text) continue;
        // What needs a person (failed, held, refused: exit 2 for run) is a warning.
        if (exitCodeOf([file], undefined) === 2) logger.warn(mark + text);
        else logger.info(mark + text);
      }
      told.clear();
      for (const [key, file] of current) told.set(key, describeFile(file));
      if (pass.failed) {
        throw new ExitError(1, `payouts watch: stopped: ${pass.stopped ?? 'the pass failed'}`);
      }
      if (pass.stopped && !stop.aborted) logger.warn(`pass stopped early: ${pass.stopped}`);
      if (stop.aborted) break;
      // A file waiting to settle is looked at again as soon as it may have.
      const waiting = payoutFiles(folders.inbox).length + payoutFiles(folders.approved).length > 0;
      await delay(
        waiting ? Math.min(config.inboxSettle, config.inboxRescan) : config.inboxRescan,
        undefined,
        { signal: AbortSignal.any([stop, arrivals.signal, doorbell.signal]) },
      ).catch(() => undefined);
    }
  } finally {
    clearInterval(healthTimer);
    await watcher.close();
    await receiver?.close();
    await gateway.close();
  }
}
