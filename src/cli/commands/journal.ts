import { hostNameOf } from '../../runtime/worker-name.js';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { compactionPending, compactJournal, type Compacted } from '../../app/compact.js';
import type { Said } from '../../messages/said.js';
import { homeFolders } from '../../inbox/folders.js';
import { lockHome } from '../../inbox/lock.js';
import { saidOfJournalError } from '../../journal/failures.js';
import { copyJournal, type CopyOutcome } from '../../journal/postgres/copy.js';
import { CATALOGS, type Catalog } from '../../messages/catalog.js';
import { say } from '../../messages/say.js';
import { openContext, type GlobalOptions, type Output } from '../context.js';
import { ExitError } from '../exit-error.js';
import { homeJournalAt, openWorkJournal } from '../work-journal.js';
import { batchDay } from '../../results/names.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

const VERB = 'journal copy';

/**
 * `payouts journal copy --to postgres://…`: this home's SQLite journal, opened for work
 * as every command opens it (brought up to date), copied into an empty PostgreSQL
 * database while this command holds the home (a journal being written would not copy
 * exactly). Exit 0 copied; 1 nothing written, with why.
 */
export function journalCommand(
  io: CliIo,
  { command: { journal: words }, expected }: HelpTexts,
): Command {
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
    )
    .addCommand(
      new Command('compact')
        .description(words.compact.description)
        .requiredOption(
          '--before <day>',
          words.compact.options.before,
          dayArgument(expected, () => batchDay(io.clock.now())),
        )
        .addHelpText('after', words.compact.after)
        .action(async (options: { before: string }, command: Command) => {
          const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
          const words = CATALOGS[config.language ?? 'en'];
          const folders = homeFolders(config.home);
          // Opened as every command opens it: brought up to date, and a lost journal refused.
          const journal = await openWorkJournal(COMPACT, folders, out, config, {
            now: io.clock.now,
            mustExist: true,
          });
          try {
            const before = options.before;
            const location = homeJournalAt(folders, config);
            const pending = await compactionPending(location, before);
            if (pending.batches === 0) {
              out.data({ before, batches: 0, entries: 0 });
              out.line(say(words, { code: 'journalCompactNothing', before }));
              return;
            }
            const archive = join(folders.archive, 'journal-history');
            out.line(say(words, { code: 'journalCompactStarted', before, archive, ...pending }));
            const done = await compactJournal(location, archive, before, {
              format: {
                dialect: config.resultDialect,
                timeZone: config.timeZone,
                language: config.language ?? 'en',
              },
              now: io.clock.now(),
            });
            const longestHoldMs = Math.ceil(done.longestHoldMs);
            out.data({ before, ...done, longestHoldMs });
            out.line(
              say(words, {
                code: 'journalCompactDone',
                batches: done.batches,
                entries: done.entries,
                archive: done.archive,
                longestHoldMs,
              }),
            );
            out.line(say(words, bytesSaid(done)));
          } finally {
            await journal.close();
          }
        }),
    );
}

const COMPACT = 'journal compact';

/** The journal's bytes before and after, as its store counts them. */
function bytesSaid({ bytesBefore: before, bytesAfter: after, settled }: Compacted): Said {
  if (before.kind === 'sqlite' && after.kind === 'sqlite') {
    return {
      code: 'journalCompactBytes',
      fileBefore: before.file,
      walBefore: before.wal,
      fileAfter: after.file,
      walAfter: after.wal,
      free: after.free,
      checkpointed: settled,
    };
  }
  if (before.kind === 'postgres' && after.kind === 'postgres') {
    return {
      code: 'journalCompactTables',
      tablesBefore: before.tables,
      auditBefore: before.audit,
      tablesAfter: after.tables,
      auditAfter: after.audit,
      vacuumed: settled,
    };
  }
  // One compaction measures one store: never reached.
  throw new Error('journal compact: the bytes before and after are of two stores');
}

/** A parser of a day (YYYY-MM-DD) that exists and is not after `today()`. */
const dayArgument =
  (expected: HelpTexts['expected'], today: () => string) =>
  (value: string): string => {
    const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    const date = day && new Date(Date.UTC(+day[1]!, +day[2]! - 1, +day[3]!));
    if (!date || date.toISOString().slice(0, 10) !== value) {
      throw new InvalidArgumentError(expected.day({ value }));
    }
    if (value > today())
      throw new InvalidArgumentError(expected.pastDay({ value, today: today() }));
    return value;
  };

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
