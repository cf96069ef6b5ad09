import { basename } from 'node:path';
import { Command } from 'commander';
import { findAwaiting, refuse } from '../../inbox/approval.js';
import { ensureFolders, homeFolders, moveInto, payoutFiles } from '../../inbox/folders.js';
import { openJournal } from '../../journal/journal.js';
import { openContext, type GlobalOptions } from '../context.js';
import { ExitError } from '../exit-error.js';

/** Names the files waiting, so a mistyped name says what could have been meant. */
function notAwaiting(command: string, name: string, waiting: readonly string[]): ExitError {
  const list = waiting.length > 0 ? waiting.map((file) => basename(file)).join(', ') : 'none';
  return new ExitError(
    1,
    `payouts ${command}: no file named "${basename(name)}" is waiting for approval (waiting: ${list})`,
  );
}

export function approveCommand(): Command {
  return new Command('approve')
    .description(
      'release a file waiting for approval: it is sent by the next run, or at once by the daemon',
    )
    .argument('<file>', 'the file name in awaiting-approval/')
    .addHelpText('after', '\nExample:\n  payouts approve payroll-2026-11.csv')
    .action((name: string, _options: unknown, command: Command) => {
      const { config, out } = openContext(command.optsWithGlobals<GlobalOptions>());
      const folders = homeFolders(config.home);
      ensureFolders(folders);
      const file = findAwaiting(folders, name);
      if (!file) throw notAwaiting('approve', name, payoutFiles(folders.awaiting));
      const moved = moveInto(file, folders.approved);
      if (!moved)
        throw new ExitError(1, `payouts approve: approved/ has no free name for ${basename(file)}`);
      out.data({ file: basename(file), approved: basename(moved) });
      out.line(
        `${basename(file)}: approved. A running \`payouts watch\` sends it now; otherwise the next \`payouts run\` does.`,
      );
    });
}

export function rejectCommand(): Command {
  return new Command('reject')
    .description('turn down a file waiting for approval: nothing of it is ever sent')
    .argument('<file>', 'the file name in awaiting-approval/')
    .requiredOption('--reason <text>', 'why, kept beside the file in rejected/')
    .addHelpText('after', '\nExample:\n  payouts reject payroll-2026-11.csv --reason "wrong month"')
    .action(async (name: string, options: { reason: string }, command: Command) => {
      const { config, out } = openContext(command.optsWithGlobals<GlobalOptions>());
      const folders = homeFolders(config.home);
      ensureFolders(folders);
      const file = findAwaiting(folders, name);
      if (!file) throw notAwaiting('reject', name, payoutFiles(folders.awaiting));
      const journal = openJournal(folders.journal);
      try {
        if (!(await refuse(journal, folders, file, options.reason))) {
          throw new ExitError(
            1,
            `payouts reject: ${basename(file)} is in awaiting-approval/ but the journal has no batch waiting for those bytes (was it changed there?)`,
          );
        }
      } finally {
        journal.close();
      }
      out.data({ file: basename(file), rejected: true, reason: options.reason });
      out.line(
        `${basename(file)}: turned down and moved to rejected/; none of its rows will be sent. A corrected file may be dropped in the inbox.`,
      );
    });
}
