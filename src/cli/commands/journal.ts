import { hostNameOf } from '../../runtime/worker-name.js';
import { Command } from 'commander';
import { homeFolders } from '../../inbox/folders.js';
import { lockHome } from '../../inbox/lock.js';
import { saidOfJournalError } from '../../journal/failures.js';
import { copyJournal, type CopyOutcome } from '../../journal/postgres/copy.js';
import { CATALOGS, type Catalog } from '../../messages/catalog.js';
import { say } from '../../messages/say.js';
import { openContext, type GlobalOptions, type Output } from '../context.js';
import { ExitError } from '../exit-error.js';
import { openWorkJournal } from '../work-journal.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

const VERB = 'journal copy';

/**
 * `payouts journal copy --to postgres://…`: this home's SQLite journal, opened for work
 * as every command opens it (brought up to date), copied into an empty PostgreSQL
 * database while this command holds the home (a journal being written would not copy
 * exactly). Exit 0 copied; 1 nothing written, with why.
 */
export function journalCommand(io: CliIo, { command: { journal: words } }: HelpTexts): Command {
  return new Command('journal')
    .description(words.description)
    .addHelpText('after', words.after)
    .addCommand(
      new Command('copy')
        .description(words.copy.description)
        .requiredOption('--to <url>', words.copy.options.to)
        .addHelpText('after', words.copy.after)
        .action(async (options: { to: string }, command: Command) => {
          const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
          const words = CATALOGS[config.language ?? 'en'];
          if (!/^postgres(ql)?:\/\//.test(options.to)) {
            throw new ExitError(1, say(words, { code: 'journalCopyNotPostgres' }));
          }
          const folders = homeFolders(config.home);
          const journal = await openWorkJournal(VERB, folders, out, config, {
            now: io.clock.now,
            mustExist: true,
            copying: true,
          });
          try {
            const lost = new AbortController();
            const lock = await lockHome(journal, {
              command: VERB,
              host: hostNameOf(config.hostName),
              // The SQLite journal it copies: one host's.
              perHost: false,
              waitMs: 0,
              signal: lost.signal,
              clock: io.clock,
              onLost: () => lost.abort(),
            });
            if ('heldBy' in lock) {
              const { command: holding, pid, host, since } = lock.heldBy;
              throw new ExitError(
                1,
                say(words, { code: 'journalCopyBusy', command: holding, pid, host, since }),
              );
            }
            try {
              const outcome = await copyJournal(journal.path, options.to, {
                now: io.clock.now,
                onStart: (address) =>
                  out.line(
                    say(words, { code: 'journalCopyStarted', from: journal.path, to: address }),
                  ),
                signal: lost.signal,
              }).catch((error: unknown) => {
                if (lost.signal.aborted)
                  throw new ExitError(1, say(words, { code: 'journalCopyLockLost' }));
                const refused = saidOfJournalError(error);
                if (refused) throw new ExitError(1, `payouts ${VERB}: ${say(words, refused)}`);
                throw error;
              });
              tell(outcome, out, words);
            } finally {
              await lock.release();
            }
          } finally {
            await journal.close();
          }
        }),
    );
}

/** What the copy did, or why it wrote nothing (exit 1). */
function tell(outcome: CopyOutcome, out: Output, words: Catalog): void {
  out.data(outcome);
  const states = outcome.kind === 'not-empty' ? [] : outcome.states;
  const compared = states.map(({ state, sqlite, postgres }) =>
    say(words, { code: 'journalCopyState', state, sqlite, postgres }),
  );
  if (outcome.kind === 'not-empty') {
    const { address, tables, schema } = outcome;
    throw new ExitError(1, say(words, { code: 'journalCopyNotEmpty', address, tables, schema }));
  }
  if (outcome.kind === 'differs') {
    const { address } = outcome;
    const batches = outcome.batches.map((batch) => batch.batchId);
    throw new ExitError(
      1,
      [say(words, { code: 'journalCopyDiffers', address, batches }), ...compared].join('\n'),
    );
  }
  const { rows, journalId, address } = outcome;
  out.line(
    say(words, {
      code: 'journalCopyCopied',
      batches: rows.batches,
      payouts: rows.payouts,
      lines: rows.batch_lines,
      audit: rows.audit,
      events: rows.batch_events,
      journalId,
    }),
  );
  out.line(say(words, { code: 'journalCopyCompared', batches: outcome.batches }));
  for (const line of compared) out.line(`  ${line}`);
  out.line(say(words, { code: 'journalCopyNext', address }));
}
