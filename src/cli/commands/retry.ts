import { userInfo } from 'node:os';
import { basename } from 'node:path';
import { Command } from 'commander';
import { formatCents } from '../../csv/amount.js';
import { homeFolders } from '../../inbox/folders.js';
import { retryPayouts } from '../../inbox/retry.js';
import { JournalError } from '../../journal/journal.js';
import { openContext, type GlobalOptions } from '../context.js';
import { ExitError } from '../exit-error.js';
import { count } from '../format.js';
import { openWorkJournal } from '../work-journal.js';
import type { CliIo } from '../../runtime/io.js';

/**
 * `payouts retry FILE|ORDERID`: a person's request to send definitely failed payouts
 * again (the only way they are: dropping a file again never does). Exit codes as
 * approve's: 0 done, 1 nothing to send again (or the journal refused), with why.
 */
export function retryCommand(io: CliIo): Command {
  return new Command('retry')
    .description(
      'send again, on purpose, payouts that definitely failed (failed, rejected, canceled, refunded): every such row of the newest batch of a file name, or one orderId; each goes under its orderId with an attempt suffix (-r2, -r3), sent by the next run',
    )
    .argument('<fileOrOrderId>', 'a file name as the summary names it, or an orderId')
    .option('--by <name>', 'who asks, for the audit trail (default: the user running it)')
    .addHelpText(
      'after',
      '\nExamples:\n  payouts retry folha.csv --by "Maria (financeiro)"\n  payouts retry folha-1-3f9a2c71',
    )
    .action(async (target: string, options: { by?: string }, command: Command) => {
      const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
      const folders = homeFolders(config.home);
      const by = options.by?.trim() || userInfo().username;
      const journal = await openWorkJournal('retry', folders, out, config, {
        now: io.clock.now,
        mustExist: true,
      });
      try {
        let outcome: Awaited<ReturnType<typeof retryPayouts>>;
        try {
          outcome = await retryPayouts(journal, target, { by });
        } catch (error) {
          if (error instanceof JournalError)
            throw new ExitError(1, `payouts retry: ${error.message}`);
          throw error;
        }
        if (outcome.kind === 'not-failed') {
          const again = outcome.retriedAs
            ? `: it was sent again already, as ${outcome.retriedAs}`
            : '';
          throw new ExitError(
            1,
            `payouts retry: ${outcome.orderId} is ${outcome.state}${again}; only a payout that failed, was refused, canceled or refunded is sent again. Nothing changed`,
          );
        }
        if (outcome.kind === 'nothing') {
          throw new ExitError(
            1,
            `payouts retry: no orderId "${target}", and no file named "${basename(target)}" with a payout that failed, was refused, canceled or refunded and not sent again yet: nothing changed (payouts status lists every file)`,
          );
        }
        const cents = outcome.payouts.reduce((sum, payout) => sum + payout.valueCents, 0);
        const file = (await journal.batch(outcome.batchId))?.fileName ?? basename(target);
        out.data({ file, batchId: outcome.batchId, by, payouts: outcome.payouts, cents });
        out.line(
          `${file} (batch ${outcome.batchId}): ${count(outcome.payouts.length, 'payout')}, ${formatCents(cents)}, to be sent again, asked by ${by}; the next run sends ${outcome.payouts.length === 1 ? 'it' : 'them'}:`,
        );
        for (const payout of outcome.payouts) {
          out.line(`  line ${payout.line}: ${payout.retryOf} -> ${payout.orderId}`);
        }
      } finally {
        await journal.close();
      }
    });
}
