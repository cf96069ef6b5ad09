import { userInfo } from 'node:os';
import { basename } from 'node:path';
import { givenName } from '../../csv/given-name.js';
import { Command } from 'commander';
import { homeFolders } from '../../inbox/folders.js';
import { retryPayouts } from '../../inbox/retry.js';
import { saidOfJournalError } from '../../journal/failures.js';
import { CATALOGS } from '../../messages/catalog.js';
import { withHintFlags } from '../../messages/hint-flags.js';
import { say } from '../../messages/say.js';
import { hintFlagsOf, openContext, type GlobalOptions } from '../context.js';
import { ExitError } from '../exit-error.js';
import { positive } from './approval.js';
import { openWorkJournal } from '../work-journal.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

/**
 * `payouts retry FILE|ORDERID`: a person's request to send definitely failed payouts
 * again (the only way they are: dropping a file again never does). Exit codes as
 * approve's: 0 done, 1 nothing to send again (or the journal refused), with why.
 */
export function retryCommand(
  io: CliIo,
  { command: { retry: words }, expected }: HelpTexts,
): Command {
  return new Command('retry')
    .description(words.description)
    .argument(`<${words.argument.name}>`, words.argument.description)
    .option('--by <name>', words.options.by)
    .option('--batch <batch>', words.options.batch, positive(expected.batch))
    .addHelpText('after', words.after)
    .action(async (target: string, options: { by?: string; batch?: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { config, out } = openContext(io, globals);
      const words = CATALOGS[config.language ?? 'en'];
      const folders = homeFolders(config.home);
      const by = options.by?.trim() || userInfo().username;
      const journal = await openWorkJournal('retry', folders, out, config, {
        now: io.clock.now,
        mustExist: true,
      });
      try {
        let outcome: Awaited<ReturnType<typeof retryPayouts>>;
        try {
          outcome = await retryPayouts(
            journal,
            target,
            { by, batch: options.batch },
            { duplicateWindowMs: config.duplicateWindow },
          );
        } catch (error) {
          const refused = saidOfJournalError(error);
          if (refused) throw new ExitError(1, `payouts retry: ${say(words, refused)}`);
          throw error;
        }
        if (outcome.kind === 'not-failed') {
          const { orderId, state } = outcome;
          const retriedAs = outcome.retriedAs ?? null;
          throw new ExitError(1, say(words, { code: 'retryNotFailed', orderId, state, retriedAs }));
        }
        if (outcome.kind === 'which-batch') {
          const file = givenName(basename(target));
          const batches = outcome.batches.map((batch) => ({
            batchId: batch.id,
            at: batch.receivedAt,
          }));
          const hintFlags = hintFlagsOf(globals);
          throw new ExitError(1, say(words, { code: 'retryWhichBatch', file, batches, hintFlags }));
        }
        if (outcome.kind === 'nothing') {
          throw new ExitError(
            1,
            say(words, {
              code: 'retryNothing',
              target,
              file: basename(target),
              hintFlags: hintFlagsOf(globals),
            }),
          );
        }
        const sent = outcome.payouts.filter((payout) => payout.held === null);
        const cents = sent.reduce((sum, payout) => sum + payout.valueCents, 0);
        const file = givenName(
          (await journal.batch(outcome.batchId))?.fileName ?? basename(target),
        );
        const { batchId, payouts } = outcome;
        out.data({ file, batchId, by, payouts, cents });
        if (sent.length > 0) {
          out.line(
            say(words, { code: 'retryQueued', file, batchId, count: sent.length, cents, by }),
          );
        }
        for (const { line, retryOf: from, orderId: to } of sent) {
          out.line(`  ${say(words, { code: 'retryLine', line, from, to })}`);
        }
        // The journal's words carry no flags: this command's are added, as everywhere shown.
        const held = outcome.payouts.flatMap((payout) =>
          payout.held
            ? [{ ...payout, why: say(words, withHintFlags(payout.held, hintFlagsOf(globals))) }]
            : [],
        );
        if (held.length > 0) out.line(words.release.retryHeld({ count: held.length }));
        for (const payout of held) {
          const message = `${payout.retryOf} -> ${payout.orderId}: ${payout.why}`;
          out.line(`  ${words.approval.atLine({ line: payout.line, column: null, message })}`);
        }
      } finally {
        await journal.close();
      }
    });
}
