/**
 * The daemon's life (`payouts watch`): a pass, then a wait until a file arrives, a
 * postback rings or the rescan falls due, again and again until stopped; with the
 * postback receiver, the inbox watcher and the health line around it.
 */
import { basename } from 'node:path';
import { watch } from 'chokidar';
import { systemCodeOf } from '../errors.js';
import type { Config } from '../config/schema.js';
import { Doorbell, nudgeOnPostback, wakeOnPollNow } from '../engine/follow.js';
import { POLLING, POLLING_WITH_POSTBACKS } from '../engine/policy.js';
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError, needsTheOperator } from '../gateway/errors.js';
import { isPayoutFileName, payoutFiles, type Folders } from '../inbox/folders.js';
import type { WorkerClaims } from '../inbox/lock.js';
import { settledFiles } from '../inbox/readiness.js';
import { ClockBehindError } from '../journal/clock-behind.js';
import { journalErrorInEnglish } from '../journal/failures.js';
import type { JournalFollowing, JournalReports } from '../journal/journal.js';
import { JournalLossError } from '../journal/open-for-work.js';
import { FINAL, ROW_STATES } from '../journal/states.js';
import { describeFile } from './describe-file.js';
import { CATALOGS } from '../messages/catalog.js';
import { startPostbackReceiver, type PostbackReceiver } from '../postback/receiver.js';
import { postbackSecret } from '../postback/secret.js';
import type { Clock } from '../runtime/clock.js';
import type { Logger } from '../runtime/logger.js';
import { engineFor } from './engine-for.js';
import {
  exitCodeOf,
  followAlongside,
  newPassMemory,
  runPass,
  type PassJournal,
  type PassMemory,
  type PassOptions,
  type PassReport,
} from './pass.js';

/** How often the daemon logs its health line (also on SIGUSR2). */
const HEALTH_EVERY_MS = 60_000;

/** Pause after a pass that failed on something outside payouts (a disk error, say). */
const FAILED_PASS_BACKOFF_MS = 30_000;

export interface ServeDeps {
  config: Config;
  folders: Folders;
  /** The home's journal, its lock held by this process. */
  journal: PassJournal;
  /** What this process takes for itself beside other hosts' (see PassOptions). */
  claims?: WorkerClaims;
  gateway: GatewayClient;
  logger: Logger;
  /** The journal's clock, read and slept on (a rescan's wait, a failed pass's pause). */
  clock: Clock;
  /** Stop: no new file is taken and no new payout sent; what is in flight is journaled. */
  signal: AbortSignal;
  /** Global flags the commands in hints need (see hintFlagsOf). */
  hintFlags: string;
  /** Given what logs a health line, once the daemon can say one (SIGUSR2). */
  setHealth: (report: () => void) => void;
  /** The postback receiver (`receivePostbacks`); absent, payouts are followed by polling alone. */
  receiver?: PostbackReceiver | undefined;
}

/** How the daemon ended: stopped by its signal, or failed on what does not mend itself. */
export type ServeEnd = { failed: false } | { failed: true; why: string };

/**
 * States a row may still leave, the health line's: each a range of the state index, so its
 * answer takes the time of the rows in flight, not of every payout ever paid (3.5 s at ten
 * million, on the daemon's one thread). What became of finished ones is `status`'s.
 */
const IN_FLIGHT = ROW_STATES.filter((state) => !FINAL.includes(state));

/** The health line's figures: files waiting, and the journal's payouts in flight by state. */
export async function healthOf(
  journal: JournalReports,
  folders: Folders,
): Promise<{ processing: number; inbox: number; rows: Record<string, number> }> {
  return {
    processing: payoutFiles(folders.processing).length,
    inbox: payoutFiles(folders.inbox).length,
    rows: Object.fromEntries(
      Object.entries(await journal.countsByState(IN_FLIGHT)).map(([state, { count }]) => [
        state,
        count,
      ]),
    ),
  };
}

/**
 * The postback receiver `postbackListen` asks for, or undefined when it is null. A
 * postback brings its payout's poll forward in the journal, which wakes the process
 * following it (`onPollNow`), this one or, on a journal hosts share, another.
 */
export async function receivePostbacks(
  deps: Pick<ServeDeps, 'config' | 'folders' | 'logger'> & {
    journal: JournalFollowing & JournalReports;
  },
): Promise<{ receiver: PostbackReceiver | undefined } | { failed: true; why: string }> {
  const { config, folders, journal, logger } = deps;
  if (!config.postbackListen) return { receiver: undefined };
  const [, host = '', port = ''] = /^\[?(.*?)\]?:(\d+)$/.exec(config.postbackListen) ?? [];
  // A damaged secret file is its own error, with its path: not a failure to listen.
  const secret = postbackSecret(folders.home);
  let receiver: PostbackReceiver;
  try {
    receiver = await startPostbackReceiver({
      host,
      port: Number(port),
      secret,
      onPostback: nudgeOnPostback(journal),
      health: () => healthOf(journal, folders),
    });
  } catch (error) {
    const code = systemCodeOf(error) ?? (error as Error).message;
    return {
      failed: true,
      why: `cannot listen for postbacks on ${config.postbackListen} (${code})`,
    };
  }
  logger.info(`postback receiver listening on ${receiver.url} (GET /healthz for health)`);
  return { receiver };
}

/**
 * Failures that do not mend themselves, which end the daemon: a refused token or a wrong
 * address (a supervisor shows the exit, where a retried pass would only log), a journal
 * behind the gateway (a person restores it or recovers), a clock behind the journal
 * (sending on it could pay a file again).
 */
function needsAPerson(error: unknown): boolean {
  return (
    (error instanceof GatewayError && needsTheOperator(error)) ||
    error instanceof JournalLossError ||
    error instanceof ClockBehindError
  );
}

/**
 * The daemon's following (followAlongside), beside its passes, until stopped: a failure
 * that mends itself (the journal away) is said and tried again later, as a pass's is.
 */
async function keepFollowing(
  { deps, engine }: ReturnType<typeof engineFor<PassJournal>>,
  doorbell: Doorbell,
  memory: PassMemory,
  config: Config,
  logger: Logger,
  signal: AbortSignal,
  onMoved: () => void,
): Promise<ServeEnd> {
  // Until stopped: a daemon's life is bounded by its signals.
  while (!signal.aborted) {
    try {
      const followed = await followAlongside(
        deps,
        { ...engine, doorbell },
        memory,
        config.inboxRescan,
        (text) => logger.warn(text),
        onMoved,
      );
      if (followed.failed) {
        return { failed: true, why: `stopped: ${followed.stopped ?? 'following failed'}` };
      }
    } catch (error) {
      if (needsAPerson(error)) throw error;
      const why = journalErrorInEnglish(error, 'maybe') ?? (error as Error).message;
      logger.error(`following failed: ${why}; trying again in ${FAILED_PASS_BACKOFF_MS / 1000}s`);
      await deps.clock.sleep(FAILED_PASS_BACKOFF_MS, signal);
    }
  }
  return { failed: false };
}

export async function serve(deps: ServeDeps): Promise<ServeEnd> {
  const { config, folders, journal, logger, receiver, signal: stop } = deps;
  // Its lines on each file are for the accountant too: in their words, as `run` says them.
  const words = CATALOGS[config.language ?? 'en'];
  const mark = (await journal.gatewayKind()) === 'sandbox' ? `${words.sandboxMoved}: ` : '';
  const doorbell = new Doorbell();
  const health = () => healthOf(journal, folders);
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
  const logHealth = async (): Promise<void> => {
    try {
      logger.info(await health(), 'health');
    } catch (error) {
      logger.warn(`health: ${(error as Error).message}`);
    }
  };
  // Not awaited by the timer or the signal: logHealth says its own failure.
  const healthTimer = setInterval(() => void logHealth(), HEALTH_EVERY_MS);
  deps.setHealth(() => void logHealth());
  let stopWaking: (() => Promise<void>) | undefined;
  let stopHearing: (() => Promise<void>) | undefined;
  try {
    // Rows another host made sendable (its file read whole) are sent now, not at the rescan;
    // told during a pass, which may have looked before they were: another pass at once.
    let toldQueued = false;
    stopHearing = await journal.onRowsQueued(() => {
      toldQueued = true;
      arrivals.ring();
    });
    // Whichever host's receiver took a postback, the journal tells the one following it
    // (hosts share their settings: without a receiver here, none takes postbacks).
    if (receiver) stopWaking = await wakeOnPollNow(journal, doorbell);
    const postbackUrl = receiver
      ? `${config.postbackPublicUrl ?? receiver.url}/postback/${postbackSecret(folders.home)}`
      : undefined;
    const memory = newPassMemory();
    const isReady = settledFiles(config.inboxSettle, () => deps.clock.now());
    const told = new Map<string, string>();
    // Either loop ending (stopped, or failed on what does not mend itself) ends the other.
    const ended = new AbortController();
    const signal = AbortSignal.any([stop, ended.signal]);
    const passOptions: PassOptions = {
      hintFlags: deps.hintFlags,
      // Following is its own loop, beside the passes (followAlongside).
      followMs: 0,
      signal,
      pollPolicy: receiver ? POLLING_WITH_POSTBACKS : POLLING,
      ...(postbackUrl === undefined ? {} : { postbackUrl }),
      doorbell,
      isReady,
      ...(deps.claims ? { claims: deps.claims } : {}),
      memory,
      clock: deps.clock,
      note: (text) => logger.warn(text),
    };
    // One pool for the process: sending and following keep to one concurrency and budget.
    const engine = engineFor(journal, deps.gateway, config, passOptions);
    // A payout settled: its file is finished (its result written, archived when all are
    // final) by a pass min(inboxSettle, inboxRescan) after the first settlement since the
    // last pass began, not at the rescan; not at once either, as each pass writes the
    // file's result again (3 s at 200,000 rows) and settlements come one by one.
    const settleMs = Math.min(config.inboxSettle, config.inboxRescan);
    let movedAt: number | undefined;
    const settled = new Doorbell();
    const onMoved = () => {
      if (movedAt !== undefined) return;
      movedAt = deps.clock.now();
      settled.ring();
    };
    const following = keepFollowing(
      engine,
      doorbell,
      memory,
      config,
      logger,
      signal,
      onMoved,
    ).finally(() => ended.abort());
    // Awaited below, whatever ends the passes; a failure is not left unhandled meanwhile.
    following.catch(() => undefined);
    logger.info(`watching ${folders.inbox}`);
    let passesEnd: ServeEnd | undefined;
    try {
      // Until stopped: a daemon's life is bounded by its signals.
      while (!signal.aborted) {
        let pass: PassReport;
        toldQueued = false;
        movedAt = undefined;
        try {
          pass = await runPass(journal, deps.gateway, folders, config, {
            ...passOptions,
            pool: engine.deps.pool,
          });
        } catch (error) {
          if (needsAPerson(error)) throw error;
          const why = journalErrorInEnglish(error, 'maybe') ?? (error as Error).message;
          logger.error(`pass failed: ${why}; trying again in ${FAILED_PASS_BACKOFF_MS / 1000}s`);
          await deps.clock.sleep(FAILED_PASS_BACKOFF_MS, signal);
          continue;
        }
        logger.debug({ files: pass.files.length }, 'pass done');
        // Each file said once per change, not once per pass; files gone are forgotten.
        const current = new Map(
          pass.files.map((file) => [`${file.batchId ?? ''}:${file.file}`, file]),
        );
        for (const [key, file] of current) {
          const text = describeFile(file, words);
          if (told.get(key) === text) continue;
          // What needs a person (failed, held, refused: exit 2 for run) is a warning.
          if (exitCodeOf([file], undefined) === 2) logger.warn(mark + text);
          else logger.info(mark + text);
        }
        told.clear();
        for (const [key, file] of current) told.set(key, describeFile(file, words));
        if (pass.failed) {
          passesEnd = { failed: true, why: `stopped: ${pass.stopped ?? 'the pass failed'}` };
          break;
        }
        if (pass.stopped && !signal.aborted) logger.warn(`pass stopped early: ${pass.stopped}`);
        if (signal.aborted) break;
        // What it sent is pending now: following looks at once, not at its next rescan.
        doorbell.ring();
        if (toldQueued) continue;
        // A file waiting to settle is looked at again as soon as it may have.
        const waiting =
          payoutFiles(folders.inbox).length + payoutFiles(folders.approved).length > 0;
        const rescanAt = deps.clock.now() + (waiting ? settleMs : config.inboxRescan);
        const dueAt = () =>
          movedAt === undefined ? rescanAt : Math.min(rescanAt, movedAt + settleMs);
        const woken = AbortSignal.any([signal, arrivals.signal]);
        // A first settlement cuts the wait to its due time; later ones neither delay it nor cut it.
        const unmoved = movedAt === undefined;
        await deps.clock.sleep(
          dueAt() - deps.clock.now(),
          unmoved ? AbortSignal.any([woken, settled.signal]) : woken,
        );
        if (unmoved && movedAt !== undefined && !woken.aborted)
          await deps.clock.sleep(dueAt() - deps.clock.now(), woken);
      }
    } catch (error) {
      ended.abort();
      await following.catch(() => undefined);
      throw error;
    }
    ended.abort();
    const followingEnd = await following;
    return passesEnd ?? followingEnd;
  } finally {
    clearInterval(healthTimer);
    await watcher.close();
    await stopWaking?.();
    await stopHearing?.();
  }
}
