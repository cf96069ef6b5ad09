import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { formatCents } from '../../messages/money.js';
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
  userNameOf,
  type Folders,
} from '../../inbox/folders.js';
import { batchIn, codeIn, droppedBy, serviceUids, underFourEyes } from '../../inbox/four-eyes.js';
import { describeTotals } from '../../app/describe-file.js';
import type {
  BatchEvent,
  BatchRecord,
  JournalApproval,
  JournalBatches,
  JournalGateway,
  JournalReports,
} from '../../journal/journal.js';
import { CATALOGS, type Catalog } from '../../messages/catalog.js';
import type { Said } from '../../messages/said.js';
import { say } from '../../messages/say.js';
import { withHintFlags } from '../../messages/hint-flags.js';
import { hintFlagsOf, openContext, type GlobalOptions, type Output } from '../context.js';
import { commandTarget, givenName } from '../../csv/given-name.js';
import { openWorkJournal } from '../work-journal.js';
import { ExitError } from '../exit-error.js';
import type { HelpTexts } from '../../messages/catalog.js';
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
    journal: JournalBatches & JournalApproval & JournalReports & JournalGateway,
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
  ensureFolders(folders, config.sharedGroup, config.fourEyes);
  try {
    const awaiting = await findAwaiting(journal, folders, name, pick);
    if (Array.isArray(awaiting)) throw whichBatch(words, verb, name, arrivals(awaiting), command);
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
async function replacedBy(
  journal: JournalBatches & JournalReports & JournalApproval,
  copy: number,
): Promise<BatchRecord[]> {
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
  batches: readonly { batchId: number; at: number }[],
  command: Command,
): ExitError {
  return new ExitError(
    1,
    words.release.whichBatch({
      verb,
      file: givenName(basename(name)),
      batches: [...batches],
      hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
    }),
  );
}

/** Each batch, and when it arrived, as whichBatch names them. */
const arrivals = (batches: readonly BatchRecord[]) =>
  batches.map((batch) => ({ batchId: batch.id, at: batch.receivedAt }));

/** The newest batch of this file name a person approved, and that approval. */
async function approvedBatchOf(
  journal: JournalBatches,
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
export const positive =
  (expected: string) =>
  (text: string): number => {
    const number = Number(text);
    if (!Number.isSafeInteger(number) || number < 1) throw new InvalidArgumentError(expected);
    return number;
  };

/** A parser of `2,5,9`: lines of a file, as its summary numbers them. */
const lineList =
  (expected: string) =>
  (text: string): number[] => {
    const lines = text.split(',').map((line) => Number(line.trim()));
    if (lines.some((line) => !Number.isSafeInteger(line) || line < 1)) {
      throw new InvalidArgumentError(expected);
    }
    return lines;
  };

/**
 * Who decides: the user running the command, never a name typed in a flag; `--by NAME`
 * is kept only as a note beside that user.
 */
function personActing(typed: string | undefined): string {
  const real = userInfo().username;
  const note = typed?.trim();
  return note && note !== real ? `${real} (--by ${note})` : real;
}

export function approveCommand(
  io: CliIo,
  { command: { approve: words }, expected }: HelpTexts,
): Command {
  return new Command('approve')
    .description(words.description)
    .argument(`<${words.argument.name}>`, words.argument.description)
    .option('--new-batch', words.options.newBatch)
    .option('--repeats <count>', words.options.repeats, positive(expected.count))
    .option('--rows <lines>', words.options.rows, lineList(expected.lines))
    .option('--except <lines>', words.options.except, lineList(expected.lines))
    .option('--identical', words.options.identical)
    .option('--corrects <batch>', words.options.corrects, positive(expected.batch))
    .option('--batch <batch>', words.options.batch, positive(expected.batch))
    .option('--by <name>', words.options.by)
    .addHelpText('after', words.after)
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
      const by = personActing(options.by);
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
      const { config } = openContext(io, command.optsWithGlobals<GlobalOptions>());
      if (config.fourEyes) {
        return decideAsPerson(io, 'approve', name, options.batch, options.by, command);
      }
      return onAwaitingFile(
        io,
        'approve',
        name,
        options.batch,
        command,
        async (found, journal, folders, out, words) => {
          // Dropped under four eyes on another host: its approvers release it, not this setting.
          const dropper = found.batch && droppedBy(await journal.batchEvents(found.batch.id));
          if (dropper) {
            const file = basename(found.file);
            throw new ExitError(1, say(words, { code: 'fourEyesDropped', file, dropper }));
          }
          const { batchId, count, cents } = await approveWaiting(
            found,
            journal,
            folders,
            by,
            words,
          );
          const file = basename(found.file);
          out.data({ file, batchId, payouts: count, cents });
          out.line(say(words, { code: 'approved', file, batchId, count, cents }));
        },
      );
    });
}

/**
 * Under four eyes, `approve` (or `reject`) leaves the decision of the user running it
 * beside the waiting file, holding the code of its report (and for a rejection, why), for
 * the service to weigh: the file's owner is who decided. It opens no journal, which the
 * service user alone reads: of several waiting files of the name, the one whose report
 * names batch `pick`, and none picked silently.
 */
function decideAsPerson(
  io: CliIo,
  verb: 'approve' | 'reject',
  name: string,
  pick: number | undefined,
  note: string | undefined,
  command: Command,
): void {
  const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>());
  const words = CATALOGS[config.language ?? 'en'];
  const folders = homeFolders(config.home);
  const uid = process.getuid?.() ?? 0;
  if (serviceUids(folders).includes(uid)) {
    throw new ExitError(1, say(words, { code: 'fourEyesByService', user: userNameOf(uid) }));
  }
  // A name with the folder's mark is that very file; the given name, every file of it.
  const given = givenName(basename(name));
  const waiting = payoutFiles(folders.awaiting)
    .filter((path) =>
      given === basename(name)
        ? givenName(basename(path)) === given
        : basename(path) === basename(name),
    )
    .map((path) => ({ path, batchId: batchIn(readReport(path)) }))
    .filter(({ batchId }) => pick === undefined || batchId === pick);
  if (waiting.length > 1) {
    const batches = waiting
      .flatMap(({ path, batchId }) =>
        // Moved into awaiting-approval/ as its batch was journaled: when it arrived.
        batchId === undefined ? [] : [{ batchId, at: statSync(path).ctimeMs }],
      )
      .sort((a, b) => a.batchId - b.batchId);
    throw whichBatch(words, verb, name, batches, command);
  }
  const file = waiting[0]?.path;
  if (!file) {
    const names = payoutFiles(folders.awaiting).map((path) => basename(path));
    throw new ExitError(
      1,
      say(words, { code: 'notAwaiting', verb, file: basename(name), waiting: names }),
    );
  }
  const code = codeIn(readReport(file));
  if (!code) throw new ExitError(1, say(words, { code: 'fourEyesNoCode', file: basename(file) }));
  const by = userNameOf(uid);
  const approvalFile = `${basename(file)}.${by}.${verb === 'approve' ? 'aprovado' : 'rejeitado'}`;
  const path = join(folders.awaiting, approvalFile);
  // Writable by its owner alone, or it counts for nothing: others could change what it says.
  // Never over a decision already there ('wx'): whoever left it said so, and it may be weighed.
  try {
    writeFileSync(path, `${code}\n${note?.trim() ? `${note.trim()}\n` : ''}`, {
      mode: 0o640,
      flag: 'wx',
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const rejects = verb === 'reject';
    const said: Said = {
      code: 'fourEyesDecisionExists',
      file: basename(file),
      approvalFile,
      rejects,
    };
    throw new ExitError(1, say(words, said));
  }
  chmodSync(path, 0o640);
  out.data({ file: basename(file), approvalFile, approvalCode: code, by });
  out.line(
    say(words, {
      code: 'fourEyesApprovalWritten',
      file: basename(file),
      approvalFile,
      approvalCode: code,
      by,
      rejects: verb === 'reject',
    }),
  );
}

/** A waiting file's report, or nothing when it has none. */
function readReport(file: string): string {
  const report = `${file}.report.txt`;
  return existsSync(report) ? readFileSync(report, 'utf8') : '';
}

/** Approves a waiting file: recorded, then moved into approved/, where the next run opens it. */
async function approveWaiting(
  found: Awaiting,
  journal: JournalBatches & JournalReports,
  folders: Folders,
  by: string,
  words: Catalog,
): Promise<{ batchId: number; count: number; cents: number }> {
  const file = basename(found.file);
  if (!found.batch) throw new ExitError(1, say(words, { code: 'approveChanged', file }));
  const sent = await toBeSent(journal, found.batch.id);
  // Recorded before the move: the run that opens the batch finds who approved it.
  await journal.recordBatchEvent(found.batch.id, 'approved', by, {
    code: 'eventApproved',
    count: sent.count,
    cents: sent.cents,
  });
  if (!moveInto(found.file, folders.approved)) {
    throw new ExitError(1, say(words, { code: 'approveNoFreeName', file }));
  }
  return { batchId: found.batch.id, ...sent };
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
    const released = await releaseHolds(journal, name, answer, rules, pick, config.fourEyes);
    if (released?.kind === 'four-eyes') {
      const { batchId, dropper } = released;
      const approvers = config.approvers.filter((entry) => entry !== dropper);
      throw new ExitError(
        1,
        say(words, {
          code: 'fourEyesAnswerReleased',
          file: basename(name),
          batchId,
          dropper,
          approvers,
        }),
      );
    }
    if (released?.kind === 'which-batch') {
      throw whichBatch(words, 'approve', name, arrivals(released.batches), command);
    }
    if (!released) {
      const file = basename(name);
      const { hintFlags } = rules;
      throw new ExitError(1, say(words, { code: 'approveNothingHeld', file, hintFlags }));
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
            message: row.said
              ? say(words, withHintFlags(row.said, rules.hintFlags))
              : (row.message ?? ''),
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
    const waiting = await findAwaiting(journal, folders, name, batchId);
    const found = waiting && !Array.isArray(waiting) && waiting.batch ? waiting : undefined;
    // Who answers with the summary's command has read the file: it is approved with its answer.
    // Under four eyes an answer frees rows but releases nothing: approvers do.
    const approves =
      rows > 0 &&
      !('newBatch' in answer && answer.pick) &&
      !(found?.batch && (await underFourEyes(journal, found.batch.id, config.fourEyes)));
    const approved =
      found && approves ? await approveWaiting(found, journal, folders, answer.by, words) : null;
    out.data({ file: basename(name), ...released, by: answer.by, approved: approved !== null });
    if (found && approved) {
      out.line(say(words, { code: 'approved', file: basename(found.file), ...approved }));
    } else if (found) {
      const target = commandTarget(basename(found.file), batchId, rules.hintFlags);
      out.line(words.release.stillAwaiting(target));
    }
  } finally {
    await journal.close();
  }
}

export function rejectCommand(
  io: CliIo,
  { command: { reject: words }, expected }: HelpTexts,
): Command {
  return new Command('reject')
    .description(words.description)
    .argument(`<${words.argument.name}>`, words.argument.description)
    .requiredOption('--reason <text>', words.options.reason, (text: string) => {
      // The reason is what the accountant reads later in rejected/: it cannot be blank.
      if (text.trim() === '') throw new InvalidArgumentError(expected.reason);
      return text.trim();
    })
    .addHelpText('after', words.after)
    .option('--batch <batch>', words.options.batch, positive(expected.batch))
    .option('--by <name>', words.options.by)
    .action(
      (
        name: string,
        options: { reason: string; batch?: number; by?: string },
        command: Command,
      ) => {
        const { config } = openContext(io, command.optsWithGlobals<GlobalOptions>());
        // Under four eyes an accountant's rejection is theirs; the service's own stays the operator's.
        const uid = process.getuid?.() ?? 0;
        if (config.fourEyes && !serviceUids(homeFolders(config.home)).includes(uid))
          return decideAsPerson(io, 'reject', name, options.batch, options.reason, command);
        return onAwaitingFile(
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
            if (batch && !(await journal.refuseBatch(batch.id, why))) {
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
              await journal.recordBatchEvent(batch.id, 'refused', personActing(options.by), {
                code: 'eventReason',
                reason: options.reason,
              });
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
        );
      },
    );
}
