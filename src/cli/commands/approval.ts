import { rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { formatCents } from '../../csv/amount.js';
import {
  findAwaiting,
  replacedSaid,
  replacementOfBatch,
  toBeSent,
  writeReport,
} from '../../inbox/approval.js';
import { batchesGivenAs, releaseHolds, type HoldAnswer } from '../../inbox/holds.js';
import {
  ensureFolders,
  homeFolders,
  moveInto,
  payoutFiles,
  reject,
  type Folders,
} from '../../inbox/folders.js';
import { describeTotals } from '../../app/describe-file.js';
import type { BatchEvent, BatchRecord, Journal } from '../../journal/journal.js';
import { CATALOGS, type Catalog } from '../../messages/catalog.js';
import type { Said } from '../../messages/said.js';
import { say, sayInEnglish } from '../../messages/say.js';
import { hintFlagsOf, openContext, type GlobalOptions, type Output } from '../context.js';
import { givenName } from '../../csv/given-name.js';
import { openWorkJournal } from '../work-journal.js';
import { ExitError } from '../exit-error.js';
import { count } from '../format.js';
import type { CliIo } from '../../runtime/io.js';

type Awaiting = Exclude<Awaited<ReturnType<typeof findAwaiting>>, unknown[] | undefined>;

/** The words of the reader's language, for what is said before a command opens its home. */
const wordsOf = (io: CliIo, command: Command): Catalog =>
  CATALOGS[openContext(io, command.optsWithGlobals<GlobalOptions>()).config.language ?? 'en'];

/**
 * Opens the journal and finds the file named in awaiting-approval/ for `act`; exits 1
 * naming the files that wait, so a mistyped name says what could have been meant.
 */
async function onAwaitingFile(
  io: CliIo,
  verb: string,
  name: string,
  pick: number | undefined,
  command: Command,
  act: (
    found: Awaiting,
    journal: Journal,
    folders: Folders,
    out: Output,
    words: Catalog,
  ) => Promise<void> | void,
): Promise<void> {
  const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
  const words = CATALOGS[config.language ?? 'en'];
  const folders = homeFolders(config.home);
  const journal = await openWorkJournal(verb, folders, out, config, {
    now: io.clock.now,
    mustExist: true,
  });
  ensureFolders(folders, config.sharedGroup);
  try {
    const awaiting = await findAwaiting(journal, folders, name, pick);
    if (Array.isArray(awaiting)) throw whichBatch(words, verb, name, awaiting, command);
    const found = awaiting;
    const picked = found ? found.batch?.id : pick;
    // A file its corrected copy replaced has nothing to approve: said, never "0 payouts".
    const replaced =
      verb === 'approve' && picked !== undefined
        ? await replacedSaid(
            journal,
            picked,
            verb,
            hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
          )
        : undefined;
    if (replaced) throw new ExitError(1, say(words, replaced));
    const approved = found ? undefined : await approvedBatchOf(journal, basename(name));
    if (approved) {
      throw new ExitError(
        1,
        words.release.alreadyApproved({
          verb,
          file: basename(name),
          batchId: approved.batchId,
          by: approved.event.by,
          at: approved.event.at,
          totals: describeTotals(await journal.rowTotalsOfBatch(approved.batchId), words),
        }),
      );
    }
    if (!found) {
      const waiting = payoutFiles(folders.awaiting).map((file) => basename(file));
      throw new ExitError(
        1,
        say(words, { code: 'notAwaiting', verb, file: basename(name), waiting }),
      );
    }
    await act(found, journal, folders, out, words);
  } finally {
    await journal.close();
  }
}

/** Waiting batches, with a file in awaiting-approval/, that `copy` replaced. */
async function replacedBy(journal: Journal, copy: number): Promise<BatchRecord[]> {
  const replaced = [];
  for (const batch of await journal.batchesIn('awaiting-approval')) {
    if (batch.awaitingName === null) continue;
    if ((await replacementOfBatch(journal, batch.id))?.copy.id === copy) replaced.push(batch);
  }
  return replaced;
}

/** Several files of that name wait and the command did not pick one: it says which, and how. */
function whichBatch(
  words: Catalog,
  verb: string,
  name: string,
  batches: readonly BatchRecord[],
  command: Command,
): ExitError {
  return new ExitError(
    1,
    words.release.whichBatch({
      verb,
      file: givenName(basename(name)),
      batches: batches.map((batch) => ({ batchId: batch.id, at: batch.receivedAt })),
      hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
    }),
  );
}

/** The newest batch of this file name a person approved, and that approval. */
async function approvedBatchOf(
  journal: Journal,
  name: string,
): Promise<{ batchId: number; event: BatchEvent } | undefined> {
  for (const batch of (await batchesGivenAs(journal, name)).reverse()) {
    const event = (await journal.batchEvents(batch.id)).findLast((e) => e.event === 'approved');
    if (event) return { batchId: batch.id, event };
  }
  return undefined;
}

interface ApproveOptions {
  newBatch?: boolean;
  repeats?: number;
  rows?: number[];
  except?: number[];
  identical?: boolean;
  corrects?: number;
  batch?: number;
  by?: string;
}

/** A parser of a whole number from 1, saying `expected` of anything else. */
const positive =
  (expected: string) =>
  (text: string): number => {
    const number = Number(text);
    if (!Number.isSafeInteger(number) || number < 1) throw new InvalidArgumentError(expected);
    return number;
  };

/** `2,5,9`: lines of a file, as its summary numbers them. */
function lineList(text: string): number[] {
  const lines = text.split(',').map((line) => Number(line.trim()));
  if (lines.some((line) => !Number.isSafeInteger(line) || line < 1)) {
    throw new InvalidArgumentError('Expected line numbers, such as 2,5,9.');
  }
  return lines;
}

export function approveCommand(io: CliIo): Command {
  return new Command('approve')
    .description(
      'release a file waiting for approval, or answer for rows the rules on who is paid hold: new payments (--new-batch), or a corrected copy of an earlier batch (--corrects)',
    )
    .argument('<file>', 'the file name in awaiting-approval/, or as the summary names it')
    .option(
      '--new-batch',
      'its rows held as possible duplicates, held because the file is named as an earlier batch, or held for a changed Pix key or name in a corrected copy, are new payments: send them',
    )
    .option(
      '--repeats <count>',
      'with --new-batch: its held rows that repeat a payout already made or under way, listed by --new-batch alone, are due again too; their count, as listed',
      positive('Expected the count of repeats listed, such as 3.'),
    )
    .option(
      '--rows <lines>',
      'with --new-batch: only these lines of the file, as the summary lists them (2,5,9)',
      lineList,
    )
    .option(
      '--except <lines>',
      'with --new-batch: every held line of the file but these (a real duplicate among false alarms)',
      lineList,
    )
    .option(
      '--identical',
      'its rows identical to an earlier row of the same file (the same person, key and amount) are both due: send them',
    )
    .option(
      '--corrects <batch>',
      'it is a corrected copy of this batch (its number in the summary): rows that batch paid are covered, the others sent, and what that batch never sent is closed',
      positive('Expected a batch number, such as 12.'),
    )
    .option(
      '--batch <batch>',
      "when several files of that name wait: this one's batch number, as the run's summary gives it",
      positive('Expected a batch number, such as 12.'),
    )
    .option('--by <name>', 'who answers, for the audit trail (default: the user running it)')
    .addHelpText(
      'after',
      '\nExamples:\n  payouts approve payroll-2026-11.csv\n  payouts approve folha.csv --new-batch --by "Maria (financeiro)"\n  payouts approve semanal.csv --new-batch --except 9\n  payouts approve fornecedores.csv --corrects 12',
    )
    .action((name: string, options: ApproveOptions, command: Command) => {
      const answers = [options.newBatch, options.identical, options.corrects !== undefined];
      const usage = (
        code: 'approveOneAnswer' | 'approveOptionsNeedNewBatch' | 'approveRowsOrExcept',
      ) => new ExitError(1, say(wordsOf(io, command), { code }));
      if (answers.filter(Boolean).length > 1) throw usage('approveOneAnswer');
      if (
        !options.newBatch &&
        [options.repeats, options.rows, options.except].some((given) => given !== undefined)
      ) {
        throw usage('approveOptionsNeedNewBatch');
      }
      if (options.rows && options.except) throw usage('approveRowsOrExcept');
      const pick = options.rows
        ? { pick: { rows: options.rows } }
        : options.except
          ? { pick: { except: options.except } }
          : {};
      const by = options.by?.trim() || userInfo().username;
      const answer: HoldAnswer | undefined = options.newBatch
        ? {
            newBatch: true,
            by,
            ...(options.repeats === undefined ? {} : { repeats: options.repeats }),
            ...pick,
          }
        : options.identical
          ? { identical: true, by }
          : options.corrects !== undefined
            ? { corrects: options.corrects, by }
            : undefined;
      if (answer) return answerHolds(io, name, answer, options.batch, command);
      return onAwaitingFile(
        io,
        'approve',
        name,
        options.batch,
        command,
        async (found, journal, folders, out, words) => {
          const file = basename(found.file);
          if (!found.batch) throw new ExitError(1, say(words, { code: 'approveChanged', file }));
          const sent = await toBeSent(journal, found.batch.id);
          // Recorded before the move: the run that opens the batch finds who approved it.
          await journal.recordBatchEvent(
            found.batch.id,
            'approved',
            by,
            `${count(sent.count, 'payout')}, ${formatCents(sent.cents)}`,
          );
          const moved = moveInto(found.file, folders.approved);
          if (!moved) throw new ExitError(1, say(words, { code: 'approveNoFreeName', file }));
          out.data({ file, batchId: found.batch.id, payouts: sent.count, cents: sent.cents });
          out.line(
            say(words, {
              code: 'approved',
              file,
              batchId: found.batch.id,
              count: sent.count,
              cents: sent.cents,
            }),
          );
        },
      );
    });
}

/** `approve FILE --new-batch` or `--corrects BATCH`: a person's answer to held rows. */
async function answerHolds(
  io: CliIo,
  name: string,
  answer: HoldAnswer,
  pick: number | undefined,
  command: Command,
): Promise<void> {
  const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
  const words = CATALOGS[config.language ?? 'en'];
  const folders = homeFolders(config.home);
  const journal = await openWorkJournal('approve', folders, out, config, {
    now: io.clock.now,
    mustExist: true,
  });
  try {
    if ('corrects' in answer && !(await journal.batch(answer.corrects))) {
      throw new ExitError(1, say(words, { code: 'approveNoBatch', batchId: answer.corrects }));
    }
    const rules = {
      duplicateWindowMs: config.duplicateWindow,
      hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
    };
    const released = await releaseHolds(journal, name, answer, rules, pick);
    if (released?.kind === 'which-batch') {
      throw whichBatch(words, 'approve', name, released.batches, command);
    }
    if (!released) {
      throw new ExitError(1, say(words, { code: 'approveNothingHeld', file: basename(name) }));
    }
    if (released.kind === 'not-a-copy') {
      const { corrected, candidates } = released;
      throw new ExitError(
        1,
        words.release.notACopy({
          batchId: corrected.id,
          batchFile: givenName(corrected.fileName),
          file: givenName(basename(name)),
          candidates: candidates.map((c) => ({ batchId: c.id, file: givenName(c.fileName) })),
        }),
      );
    }
    // Before anything is said released: each row that would pay someone again.
    if (released.repeating.length > 0) {
      out.line(words.release.repeatsTitle({ count: released.repeating.length }));
      for (const row of released.repeating) {
        out.line(
          `  ${words.release.repeat({
            line: row.line,
            name: row.name,
            amount: formatCents(row.cents),
            file: row.repeats?.fileName ?? '?',
            fileLine: row.repeats?.line ?? 0,
            at: row.repeats?.at ?? null,
            state: row.repeats ? words.state[row.repeats.state] : '?',
          })}`,
        );
      }
    }
    if (released.kind === 'rows-not-held') {
      throw new ExitError(1, words.release.rowsNotHeld({ notHeld: released.lines }));
    }
    if (released.kind === 'repeats-differ') {
      throw new ExitError(
        1,
        words.release.repeatsDiffer({ given: released.given, count: released.repeating.length }),
      );
    }
    out.data({ file: basename(name), ...released, by: answer.by });
    const { batchId, rows, cents } = released;
    if ('corrects' in answer) {
      const { corrects, by } = answer;
      out.line(
        say(words, {
          code: 'linkedAsCopy',
          file: basename(name),
          batchId,
          corrects,
          by,
          count: rows,
        }),
      );
      const held = await journal.heldRowsOfBatch(released.batchId);
      if (held.length > 0) out.line(words.release.stayHeld({ count: held.length }));
      for (const row of held) {
        out.line(
          `  ${words.release.heldRow({
            line: row.line,
            name: row.name,
            amount: formatCents(row.cents),
            message: row.said ? say(words, row.said) : (row.message ?? ''),
          })}`,
        );
      }
    } else if ('identical' in answer) {
      const by = answer.by;
      out.line(
        say(words, {
          code: 'releasedIdentical',
          file: basename(name),
          batchId,
          count: rows,
          cents,
          by,
        }),
      );
    } else {
      const repeats = released.repeating.length;
      // Nothing freed but repeats left held: only that is said.
      if (released.rows > 0 || repeats === 0)
        out.line(
          words.release.released({
            file: basename(name),
            batchId: released.batchId,
            count: released.rows,
            amount: formatCents(released.cents),
            by: answer.by,
          }),
        );
      if (repeats > 0) {
        out.line(
          released.repeatsReleased
            ? words.release.repeatsReleased({ count: repeats })
            : words.release.repeatsStayHeld({ count: repeats }),
        );
      }
    }
  } finally {
    await journal.close();
  }
}

export function rejectCommand(io: CliIo): Command {
  return new Command('reject')
    .description('turn down a file waiting for approval: nothing of it is ever sent')
    .argument('<file>', 'the file name in awaiting-approval/')
    .requiredOption('--reason <text>', 'why, kept beside the file in rejected/', (text: string) => {
      // The reason is what the accountant reads later in rejected/: it cannot be blank.
      if (text.trim() === '') throw new InvalidArgumentError('Say why the file is turned down.');
      return text.trim();
    })
    .addHelpText('after', '\nExample:\n  payouts reject payroll-2026-11.csv --reason "wrong month"')
    .option(
      '--batch <batch>',
      "when several files of that name wait: this one's batch number, as the run's summary gives it",
      positive('Expected a batch number, such as 12.'),
    )
    .option('--by <name>', 'who turns it down, for the audit trail (default: the user running it)')
    .action(
      (name: string, options: { reason: string; batch?: number; by?: string }, command: Command) =>
        onAwaitingFile(
          io,
          'reject',
          name,
          options.batch,
          command,
          async (found, journal, folders, out, words) => {
            // Changed in the folder since it was validated: the batch it waits as, by its name.
            const batch =
              found.batch ??
              (await journal.batchesIn('awaiting-approval')).find(
                (candidate) => candidate.awaitingName === basename(found.file),
              );
            const why: Said = { code: 'turnedDownBy', reason: options.reason };
            const file = basename(found.file);
            const replacedByIt = batch ? await replacedBy(journal, batch.id) : [];
            if (batch && !(await journal.refuseBatch(batch.id, sayInEnglish(why)))) {
              throw new ExitError(1, say(words, { code: 'rejectNoLongerWaiting', file }));
            }
            // Their rows given back, the files this copy replaced wait again: their reports say so.
            const { config } = openContext(io, command.optsWithGlobals<GlobalOptions>());
            for (const earlier of replacedByIt) {
              await writeReport(
                journal,
                `${folders.awaiting}/${earlier.awaitingName}`,
                earlier.id,
                {
                  hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
                  language: config.language ?? 'en',
                },
              );
            }
            if (batch) {
              await journal.recordBatchEvent(
                batch.id,
                'refused',
                options.by?.trim() || userInfo().username,
                options.reason,
              );
            }
            // The reason file is the accountant's to read: in their words; the journal keeps English.
            const moved = reject(found.file, folders.rejected, [say(words, why)]);
            rmSync(`${found.file}.report.txt`, { force: true });
            out.data({
              file: basename(found.file),
              batchId: batch?.id ?? null,
              rejected: true,
              reason: options.reason,
            });
            out.line(
              say(words, {
                code: 'turnedDown',
                file,
                batchId: batch?.id ?? null,
                moved: moved !== undefined,
              }),
            );
          },
        ),
    );
}
