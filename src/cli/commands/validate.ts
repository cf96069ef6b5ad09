import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Command } from 'commander';
import { openAtomicCsv, type CsvDialect } from '../../csv/atomic-csv.js';
import { csvDialectOf, type ResultFormat } from '../../results/result-file.js';
import { CATALOGS } from '../../messages/catalog.js';
import type { Language } from '../../messages/language.js';
import { formatCents } from '../../messages/money.js';
import { readPayoutFile, type FileReport } from '../../csv/reader.js';
import { COLUMN_NAMES } from '../../csv/header.js';
import { mistakesSaid, type Mistake, type RowOutcome } from '../../csv/row.js';
import { validationReportHeadings, validationReportLine } from '../../results/validation-report.js';
import { planRun, type DryRunFile } from '../../engine/dry-run.js';
import { homeFolders, type Folders } from '../../inbox/folders.js';
import { hintFlagsOf, openContext, openHomeJournal, type GlobalOptions } from '../context.js';
import { systemCodeOf } from '../../errors.js';
import type { Config } from '../../config/schema.js';
import { JournalError, type JournalLocation } from '../../journal/journal.js';
import { journalAddress, journalState, sqliteJournalAt } from '../../journal/open.js';
import { homeJournalAt } from '../work-journal.js';
import { ExitError } from '../exit-error.js';
import { say, sayInEnglish } from '../../messages/say.js';
import type { Said } from '../../messages/said.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

/** For programs: the English message, and the code of the first problem it names. */
const inEnglish = ({ line, column, message }: Message) => ({
  line,
  column,
  code: message.code === 'moreMistakes' ? message.first.code : message.code,
  message: sayInEnglish(message),
});

/** An invalid row for programs: its whole message, and each mistake with its column. */
const errorInEnglish = ({ mistakes, ...error }: InvalidRow) => ({
  ...inEnglish(error),
  mistakes: mistakes.map(({ column, message }) => ({
    column,
    code: message.code,
    message: sayInEnglish(message),
  })),
});

interface ValidateOptions {
  report?: string;
}

/** Messages kept for the summary; the --report file has every row. */
const KEEP_MESSAGES = 1000;
const SHOW_MESSAGES = 50;

interface Message {
  line: number;
  /** Null: the file has no column for it, and the message names what is missing. */
  column: string | null;
  message: Said;
}

interface InvalidRow extends Message {
  mistakes: readonly Mistake[];
}

export function validateCommand(io: CliIo, { command: { validate: words } }: HelpTexts): Command {
  return new Command('validate')
    .description(words.description)
    .argument(`<${words.argument.name}>`, words.argument.description)
    .option('--report <out.csv>', words.options.report)
    .addHelpText('after', words.after)
    .action(async (file: string, options: ValidateOptions, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'offline');
      const { config, out } = context;
      const format = { dialect: config.resultDialect, language: config.language ?? 'en' } as const;
      const errors: InvalidRow[] = [];
      const notes: Message[] = [];
      const skipped: { line: number; reason: Said }[] = [];
      let moreErrors = 0;
      let moreNotes = 0;
      // Rows a run would hold for a person: identical to an earlier row of the file.
      let identical = 0;
      const report =
        options.report === undefined ? undefined : openReport(resolve(options.report), format);

      // A promise only when a report line is written: a tick per row is measurable on a million rows.
      const onRow = (row: RowOutcome): Promise<void> | undefined => {
        if (row.kind === 'invalid') {
          if (errors.length < KEEP_MESSAGES)
            errors.push({
              line: row.line,
              column: row.mistakes[0].column,
              message: mistakesSaid(row.mistakes),
              mistakes: row.mistakes,
            });
          else moreErrors++;
        } else if (row.kind === 'valid') {
          if (row.payout.identicalTo !== undefined) identical++;
          for (const note of row.notes) {
            if (notes.length < KEEP_MESSAGES) notes.push({ line: row.line, ...note });
            else moreNotes++;
          }
        } else if (row.kind === 'skipped' && skipped.length < KEEP_MESSAGES) {
          skipped.push({ line: row.line, reason: row.reason });
        }
        if (!report) return undefined;
        const line = validationReportLine(row, format);
        return line ? report.write(line) : undefined;
      };

      let result: FileReport;
      try {
        result = await readPayoutFile(resolve(file), config, onRow);
      } catch (error) {
        await report?.abandon();
        throw error;
      }
      try {
        await report?.commit();
      } catch (error) {
        throw cannotWrite(report?.path ?? '', error);
      }

      const unusable = result.problems.filter((p) => p.kind === 'unusable');
      // The rules on who is paid weigh each valid row against the home's journal, if it
      // has one: held rows are said row by row, with why, before the file is dropped.
      let against: JournalToWeigh | undefined;
      let weighed: DryRunFile | undefined;
      try {
        against =
          unusable.length === 0
            ? await journalToWeigh(homeFolders(config.home), config)
            : undefined;
        weighed =
          against?.location === undefined
            ? undefined
            : await weighAgainstJournal(resolve(file), against.location, io.clock.now, {
                ...config,
                hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
                now: io.clock.now(),
              });
      } catch (error) {
        // A database away: the file's own checks are still said, with what was not done.
        const location = homeJournalAt(homeFolders(config.home), config);
        if (!(error instanceof JournalError) || error.kind !== 'unavailable') throw error;
        if (location.kind !== 'postgres') throw error;
        const code = error.storeCode === undefined ? '' : `${error.storeCode}: `;
        against = {
          unreachable: { journal: journalAddress(location), cause: `${code}${error.message}` },
        };
      }
      const journalPath = against?.location && journalAddress(against.location);
      const held = weighed?.held ?? identical;
      // What the journal says of the file as a whole (its name is an earlier batch's).
      const fileMessages = new Set(result.problems.map((problem) => sayInEnglish(problem.message)));
      const journalNotes = weighed?.problems.filter((problem) => !fileMessages.has(problem)) ?? [];
      const exitCode =
        unusable.length > 0 || against?.unreachable !== undefined
          ? 1
          : result.invalid > 0 || result.problems.length > 0 || held > 0 || journalNotes.length > 0
            ? 2
            : 0;
      out.data({
        file: result.file,
        rows: result.rows,
        valid: result.valid,
        invalid: result.invalid,
        skipped: result.skipped,
        blank: result.blank,
        total: result.totalCents,
        encoding: result.encoding ?? null,
        delimiter: result.delimiter ?? null,
        sha256: result.sha256 ?? null,
        orderIdsDerived: result.header?.orderIdsDerived ?? null,
        filled: result.filled,
        identical,
        journal: weighed ? journalPath : null,
        // When the journal weighed is the service's view: when the service wrote it.
        journalAsOf:
          against?.writtenAt === undefined ? null : new Date(against.writtenAt).toISOString(),
        notWeighed:
          against?.unreachable !== undefined
            ? CATALOGS.en.journalUnreachable(against.unreachable)
            : against?.unread === undefined
              ? null
              : CATALOGS.en.notWeighed({ journal: against.unread }),
        held,
        // Programs read English, and each hold's code.
        holds: (weighed?.holds ?? []).map(({ said, ...hold }) => ({ ...hold, code: said.code })),
        journalNotes,
        readings: (weighed?.readings ?? []).map(sayInEnglish),
        // Programs read English, and each message's code.
        errors: errors.map(errorInEnglish),
        moreErrors,
        warnings: notes.map(inEnglish),
        moreWarnings: moreNotes,
        skippedLines: skipped.map(({ line, reason }) => ({
          line,
          code: reason.code,
          reason: sayInEnglish(reason),
        })),
        fileErrors: result.problems.map(({ kind, message }) => ({
          kind,
          code: message.code,
          message: sayInEnglish(message),
        })),
        report: report?.path ?? null,
      });
      if (!out.json)
        printSummary(
          result,
          config,
          { errors, notes, skipped, moreErrors, moreNotes },
          weighed && journalPath !== undefined
            ? {
                journal: journalPath,
                ...weighed,
                notes: journalNotes,
                hintFlags: hintFlagsOf(command.optsWithGlobals<GlobalOptions>()),
              }
            : undefined,
          against,
          report?.path,
          out.line,
        );
      if (exitCode !== 0) throw new ExitError(exitCode);
    });
}

function printSummary(
  result: FileReport,
  contacts: {
    recipientEmail: string | null;
    recipientPhone: string | null;
    language: Language | null;
    timeZone: string;
  },
  found: {
    errors: Message[];
    notes: Message[];
    skipped: { line: number; reason: Said }[];
    moreErrors: number;
    moreNotes: number;
  },
  weighed: (DryRunFile & { journal: string; notes: string[]; hintFlags: string }) | undefined,
  against: JournalToWeigh | undefined,
  reportPath: string | undefined,
  print: (text: string) => void,
): void {
  const words = CATALOGS[contacts.language ?? 'en'];
  const name = basename(result.file);
  const unusable = result.problems.filter((p) => p.kind === 'unusable');
  if (unusable.length > 0) {
    for (const problem of unusable) print(`${name} ${say(words, problem.message)}`);
    print(words.nothingPayable);
    return;
  }
  print(
    words.validated({
      file: name,
      rows: result.rows,
      valid: result.valid,
      invalid: result.invalid,
      skipped: result.skipped,
      total: formatCents(result.totalCents),
    }),
  );
  print(
    `  ${words.readAs({
      encoding:
        result.encoding === 'windows-1252'
          ? 'Windows-1252'
          : (result.encoding?.toUpperCase() ?? '?'),
      delimiter: result.delimiter ?? '?',
      orderIdColumn: result.header?.orderIdsDerived
        ? null
        : (result.header?.columns.find((c) => c.field === 'orderId')?.heading ?? ''),
    })}`,
  );
  const reference = result.header?.columns.find((c) => c.field === 'reference');
  if (reference) print(`  ${words.readsReference({ column: reference.heading })}`);
  for (const [contact, setting] of [
    ['email', 'recipientEmail'],
    ['phone', 'recipientPhone'],
  ] as const) {
    const { key, default: fallback } = result.filled[contact];
    if (key + fallback === 0) continue;
    print(
      `  ${words.contactsFilled({ contact, fromKey: key, fromSetting: fallback, setting, value: contacts[setting] ?? '' })}`,
    );
  }
  const configured = result.header?.columns.filter((column) => column.configured) ?? [];
  if (configured.length > 0) {
    const names = new Map(Object.entries(COLUMN_NAMES).map(([name, field]) => [field, name]));
    print(
      `  ${words.readByHeadings({ columns: configured.map((c) => ({ heading: c.heading, as: names.get(c.field) ?? c.field })) })}`,
    );
  }
  if (result.header && result.header.ignored.length > 0) {
    print(`  ${words.columnsNotUsed({ headings: result.header.ignored })}`);
  }
  for (const problem of result.problems)
    print(`\n${words.fileHeld({ message: say(words, problem.message) })}`);
  const list = (title: string, items: Message[], more: number) => {
    if (items.length === 0) return;
    print(`\n${title}`);
    for (const item of items.slice(0, SHOW_MESSAGES)) {
      const column =
        item.column === null
          ? null
          : item.column.startsWith('column ')
            ? item.column.slice(7)
            : `"${item.column}"`;
      const message = say(words, item.message);
      print(`  ${words.atLineColumn({ line: item.line, column, message })}`);
    }
    const hidden = items.length - Math.min(items.length, SHOW_MESSAGES) + more;
    if (hidden > 0)
      print(`  ${words.andMore({ count: hidden, report: reportPath !== undefined })}`);
  };
  if (against?.writtenAt !== undefined)
    print(`\n${words.weighedAgainstView({ at: against.writtenAt, timeZone: contacts.timeZone })}`);
  if (against?.unread !== undefined) print(`\n${words.notWeighed({ journal: against.unread })}`);
  if (against?.unreachable !== undefined)
    print(`\n${words.journalUnreachable(against.unreachable)}`);
  list(words.invalidRowsTitle, found.errors, found.moreErrors);
  list(words.warningsTitle, found.notes, found.moreNotes);
  for (const note of weighed?.notes ?? []) print(`\n${words.wouldHold({ note })}`);
  if (weighed && weighed.held > 0) {
    print(`\n${words.heldByRulesTitle({ journal: weighed.journal })}`);
    for (const hold of weighed.holds.slice(0, SHOW_MESSAGES)) {
      print(`  ${words.heldRow({ ...hold, message: say(words, hold.said) })}`);
    }
    const hidden = weighed.held - Math.min(weighed.holds.length, SHOW_MESSAGES);
    if (hidden > 0)
      print(`  ${words.andMoreHeld({ count: hidden, hintFlags: weighed.hintFlags })}`);
  }
  // What each answer a person may give would pay, as a run's summary says it.
  for (const reading of weighed?.readings ?? []) print(`  ${say(words, reading)}`);
  if (found.skipped.length > 0) {
    const lines = found.skipped.map(({ line, reason }) => ({ line, reason: say(words, reason) }));
    print(`\n${words.skipped({ lines })}`);
  }
  if (reportPath) print(`\n${words.reportAt({ path: reportPath })}`);
}

/**
 * What a file is weighed against: a PostgreSQL journal, read only, by whoever the `journal`
 * setting lets in; a SQLite journal, read only, by its owner (the service user), while
 * anyone else reads the view the service writes for its group, and never the journal;
 * with no view yet, `unread` names the journal nothing was weighed against.
 */
interface JournalToWeigh {
  location?: JournalLocation;
  /** When the service wrote the view weighed. */
  writtenAt?: number;
  unread?: string;
  /** A PostgreSQL journal away: its address and why, nothing weighed against it. */
  unreachable?: { journal: string; cause: string };
}

async function journalToWeigh(
  folders: Folders,
  config: Pick<Config, 'journal'>,
): Promise<JournalToWeigh | undefined> {
  const location = homeJournalAt(folders, config);
  // The database's own rights say who reads it; one no run has journaled in has nothing.
  if (location.kind === 'postgres')
    return (await journalState(location)) === 'absent' ? undefined : { location };
  let owner: number | undefined;
  try {
    owner = statSync(folders.journal, { throwIfNoEntry: false })?.uid;
  } catch (error) {
    // A home this user may not enter (not a member of its group): nothing to weigh against.
    if (systemCodeOf(error) === 'EACCES') return { unread: folders.journal };
    throw error;
  }
  if (owner === undefined) return undefined;
  if (owner === process.getuid?.()) return { location };
  const view = statSync(folders.view, { throwIfNoEntry: false });
  return view === undefined
    ? { unread: folders.journal }
    : { location: sqliteJournalAt(folders.view), writtenAt: view.mtimeMs };
}

/** What a run would hold of this file's valid rows, weighed against a journal opened read only. */
async function weighAgainstJournal(
  file: string,
  location: JournalLocation,
  now: () => number,
  options: Parameters<typeof planRun>[2],
): Promise<DryRunFile | undefined> {
  const journal = await openHomeJournal(location, now);
  try {
    const [plan] = await planRun([file], journal, options);
    return plan;
  } finally {
    await journal.close();
  }
}

/** The report is written beside its final name and renamed into place once complete. */
function openReport(path: string, format: Pick<ResultFormat, 'dialect' | 'language'>) {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ExitError(
      1,
      `payouts validate: --report ${path} is a folder: give a file name, like ${join(path, 'report.csv')}`,
    );
  }
  try {
    return {
      path,
      ...openAtomicCsv(path, validationReportHeadings(format), csvDialectOf(format.dialect)),
    };
  } catch (error) {
    throw cannotWrite(path, error);
  }
}

function cannotWrite(path: string, error: unknown): ExitError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new ExitError(1, `payouts validate: cannot write the report to ${path} (${code})`);
}
