import { Command, InvalidArgumentError } from 'commander';
import { reconcileRecent, type Reconciled } from '../../app/reconcile.js';
import { ensureFolders, homeFolders } from '../../inbox/folders.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import {
  EMBEDDED_SANDBOX_FORGETS,
  hintFlagsOf,
  openContext,
  openGateway,
  type GlobalOptions,
} from '../context.js';
import { openWorkJournal } from '../work-journal.js';
import { ExitError } from '../exit-error.js';
import { count } from '../format.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

/** A parser of a count of days from 1, saying what it expected of anything else. */
const daysArgument =
  (expected: HelpTexts['expected']) =>
  (value: string): number => {
    if (!/^\d{1,4}$/.test(value) || Number(value) < 1) {
      throw new InvalidArgumentError(expected.days({ value }));
    }
    return Number(value);
  };

export function reconcileCommand(
  io: CliIo,
  { command: { reconcile: words }, expected }: HelpTexts,
): Command {
  return new Command('reconcile')
    .description(words.description)
    .requiredOption('--days <n>', words.options.days, daysArgument(expected))
    .addHelpText('after', words.after)
    .action(async (options: { days: number }, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const { config, out } = context;
      const folders = homeFolders(config.home);
      const journal = await openWorkJournal('reconcile', folders, out, config, {
        now: io.clock.now,
        mustExist: true,
      });
      ensureFolders(folders, config.sharedGroup, config.fourEyes);
      const stop = new AbortController();
      const stopSignal = listenForStopSignal(() => stop.abort());
      try {
        const gateway = await openGateway(context, journal);
        if (gateway.embedded) {
          await gateway.close();
          throw new ExitError(
            1,
            `payouts reconcile: nothing to read back: ${EMBEDDED_SANDBOX_FORGETS}. Nothing was changed.`,
          );
        }
        let report: Reconciled;
        try {
          report = await reconcileRecent(
            {
              config,
              folders,
              journal,
              gateway: gateway.client,
              clock: io.clock,
              signal: stop.signal,
              note: out.note,
              hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
            },
            options.days,
          );
        } finally {
          await gateway.close();
        }
        out.data(report);
        out.line(
          `Checked ${count(report.checked, 'paid payout')} sent in the last ${count(options.days, 'day')}: ${report.refunded.length} came back (refunded).`,
        );
        for (const { orderId } of report.refunded) out.line(`  refunded: ${orderId}`);
        for (const { orderId, why } of report.unexpected)
          out.line(`  for a person: ${orderId}: ${why}`);
        for (const path of report.results) out.line(`  result rewritten: ${path}`);
        if (report.failed > 0) {
          out.line(
            `  ${report.failed} could not be read from the gateway (${report.lastFailure}): run reconcile again once it answers`,
          );
        }
        if (report.stopped) throw new ExitError(1, `payouts reconcile: stopped: ${report.stopped}`);
        if (stop.signal.aborted)
          throw new ExitError(1, 'payouts reconcile: interrupted before the end');
        if (report.failed > 0) {
          throw new ExitError(
            1,
            `payouts reconcile: ${count(report.failed, 'paid payout')} not checked (${report.lastFailure}): run reconcile again once the gateway answers`,
          );
        }
        if (report.refunded.length > 0 || report.unexpected.length > 0) throw new ExitError(2);
      } finally {
        stopSignal.close();
        await journal.close();
      }
    });
}
