import { hostNameOf } from '../../runtime/worker-name.js';
import { Command } from 'commander';
import { receivePostbacks, serve } from '../../app/serve.js';
import type { PostbackReceiver } from '../../postback/receiver.js';
import { ensureFolders, homeFolders } from '../../inbox/folders.js';
import { HEARTBEAT_MS, describeHolder, lockHome } from '../../inbox/lock.js';
import type { Journal } from '../../journal/journal.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import {
  hintFlagsOf,
  openContext,
  openGateway,
  requireInbox,
  requireOwnHome,
  type GlobalOptions,
} from '../context.js';
import { ExitError } from '../exit-error.js';
import { ClockBehindError } from '../../journal/clock-behind.js';
import {
  checkClockWhileWorking,
  clockOffText,
  homeJournalAt,
  openWorkJournal,
  untilClockRight,
} from '../work-journal.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

export function watchCommand(io: CliIo, { command: { watch: words } }: HelpTexts): Command {
  return new Command('watch')
    .description(words.description)
    .addHelpText('after', words.after)
    .option('--inbox <dir>', words.options.inbox)
    .action(async (options: { inbox?: string }, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const { config, logger } = context;
      requireInbox('watch', options.inbox);
      const folders = homeFolders(config.home, options.inbox);
      requireOwnHome('watch', folders);
      ensureFolders(folders, config.sharedGroup, config.fourEyes);
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
      // A clock off from the shared journal's: said once, and looked at again each heartbeat.
      const waitForClock = {
        told: (text: string) => logger.warn(text),
        wait: async () => {
          await io.clock.sleep(HEARTBEAT_MS, stop.signal);
          return !stop.signal.aborted;
        },
      };
      let journal: Journal;
      try {
        journal = await openWorkJournal('watch', folders, context.out, config, {
          now: io.clock.now,
          waitForClock,
        });
      } catch (error) {
        stopSignal.close();
        process.off('SIGUSR2', onHealthSignal);
        throw error;
      }
      let lostLock = false;
      let receiver: PostbackReceiver | undefined;
      const receive = async (): Promise<PostbackReceiver | undefined> => {
        const started = await receivePostbacks({ config, folders, journal, logger });
        if ('failed' in started) throw new ExitError(1, `payouts watch: ${started.why}`);
        return started.receiver;
      };
      try {
        // On a journal hosts share, a host standing by takes postbacks too (a load balancer
        // may send them any host's way): the journal tells the host following the payout.
        if ((await journal.describe()).kind === 'postgres') receiver = await receive();
        while (!stop.signal.aborted && !(await workWhileClockRight(journal))) {
          // Said already when it went off.
          await untilClockRight(journal, config, {
            now: io.clock.now,
            waitForClock: { ...waitForClock, told: () => undefined },
          });
        }
      } finally {
        await receiver?.close();
        stopSignal.close();
        process.off('SIGUSR2', onHealthSignal);
        await journal.close();
      }
      if (lostLock) throw new ExitError(1, 'payouts watch: stopped: the home folder lock was lost');
      logger.info('stopped');

      /** Holds the home and serves it; false when this host's clock went off meanwhile. */
      async function workWhileClockRight(journal: Journal): Promise<boolean> {
        const lock = await lockHome(journal, {
          command: 'watch',
          host: hostNameOf(config.hostName),
          perHost: homeJournalAt(folders, config).kind === 'postgres',
          waitMs: Number.MAX_SAFE_INTEGER,
          signal: stop.signal,
          clock: io.clock,
          onWait: (holder) =>
            logger.info(
              `another payouts process (${describeHolder(holder)}) is working on this home folder: waiting for it`,
            ),
          onAway: (why) => logger.warn(`${why}: the journal cannot be reached; trying again`),
          onLost: (why) => {
            logger.error(`${why}: stopping, so that two processes never work on one home folder`);
            lostLock = true;
            stop.abort();
          },
        });
        if ('heldBy' in lock) return true; // stopped while waiting
        // The home given up while the clock is off, so that a host on the right clock takes it.
        const clockOff = new AbortController();
        const stopChecking = checkClockWhileWorking(journal, config, {
          now: io.clock.now,
          watching: true,
          onOff: (text) => {
            if (!clockOff.signal.aborted) logger.warn(text);
            clockOff.abort();
          },
        });
        try {
          receiver ??= await receive();
          const gateway = await openGateway(context, journal);
          let end;
          try {
            end = await serve({
              config,
              folders,
              journal,
              ...(lock.claims ? { claims: lock.claims } : {}),
              gateway: gateway.client,
              logger,
              clock: io.clock,
              signal: AbortSignal.any([stop.signal, clockOff.signal]),
              hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
              setHealth: (report) => (health = report),
              receiver,
            });
          } catch (error) {
            // A clock stepped back past the journal is first a clock off: it waits, not stops.
            const text =
              error instanceof ClockBehindError
                ? await clockOffText(journal, config, io.clock.now, true, false)
                : undefined;
            if (text === undefined) throw error;
            if (!clockOff.signal.aborted) logger.warn(text);
            clockOff.abort();
          } finally {
            await gateway.close();
          }
          if (end?.failed) throw new ExitError(1, `payouts watch: ${end.why}`);
        } finally {
          stopChecking();
          await lock.release();
        }
        return !clockOff.signal.aborted;
      }
    });
}
