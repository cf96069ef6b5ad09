import { Command, InvalidArgumentError } from 'commander';
import { reconcileRecent, type Reconciled } from '../../app/reconcile.js';
import { ensureFolders, homeFolders } from '../../inbox/folders.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import {
  EMBEDDED_SANDBOX_FORGETS,
  openContext,
  openGateway,
  type GlobalOptions,
} from '../context.js';
import { openWorkJournal } from '../work-journal.js';
import { ExitError } from '../exit-error.js';
import { count } from '../format.js';
import type { CliIo } from '../../runtime/io.js';

function daysArgument(value: string): number {
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError(`Expected a whole number of days from 1, got "${value}".`);
  }
  return Number(value);
}

export function reconcileCommand(io: CliIo): Command {
  return new Command('reconcile')
    .description(
      'read recent paid payouts again at the gateway: record the ones that came back (refunded) and rewrite their result files',
    )
    .requiredOption('--days <n>', 'payouts sent in the last n days', daysArgument)
    .addHelpText(
      'after',
      '\nExit codes: 0 nothing came back; 2 some payout came back or reads otherwise now (a person must look); 1 failed.\n' +
        '\nExample:\n  payouts reconcile --days 7',
    )
    .action(async (options: { days: number }, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const { config, out } = context;
      const folders = homeFolders(config.home);
      const journal = await openWorkJournal('reconcile', folders, out, config, {
        now: io.clock.now,
        mustExist: true,
      });
      ensureFolders(folders, config.sharedGroup);
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
