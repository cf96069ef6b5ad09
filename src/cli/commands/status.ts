import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { replacementOfBatch, toBeSent } from '../../inbox/approval.js';
import { approvalCode } from '../../inbox/four-eyes.js';
import { Command, InvalidArgumentError } from 'commander';
import { formatCents } from '../../messages/money.js';
import { foldText } from '../../csv/fold.js';
import { batchStem } from '../../csv/order-id.js';
import { givenName } from '../../csv/given-name.js';
import { archiveFileName } from '../../results/names.js';
import { inTimeZone } from '../../results/cells.js';
import { homeFolders, sha256Of, type Folders } from '../../inbox/folders.js';
import { COMPACTED_BY, COMPACTED_EVENT } from '../../journal/compaction.js';
import {
  describePendingTooLong,
  pendingTooLong,
  type PendingTooLong,
} from '../../inbox/pending-alert.js';
import { skippedFiles } from '../../inbox/skipped.js';
import type {
  BatchRecord,
  JournalApproval,
  JournalBatches,
  JournalReports,
  ResultEntry,
} from '../../journal/journal.js';
import {
  SANDBOX_MARK,
  entriesOf,
  holdMessage,
  resultRecord,
  type ResultRecord,
} from '../../results/result-file.js';
import {
  hintFlagsOf,
  openContext,
  requireJournal,
  type GlobalOptions,
  type Output,
} from '../context.js';
import { ExitError } from '../exit-error.js';
import { homeJournalAt, readHomeJournal } from '../work-journal.js';
import { describeTotals } from '../../app/describe-file.js';
import { keyValueLines } from '../format.js';
import { CATALOGS } from '../../messages/catalog.js';
import { say, sayInEnglish } from '../../messages/say.js';
import { withHintFlags } from '../../messages/hint-flags.js';
import type { Language } from '../../messages/language.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { Said } from '../../messages/said.js';
import type { CliIo } from '../../runtime/io.js';

interface StatusOptions {
  approvals?: boolean;
  since?: string;
}

/** Longer than any time zone is ahead of UTC: a day starts no sooner than this before its UTC midnight. */
const DAY_MS = 24 * 3_600_000;

/** The day of an instant in the home's time zone, `2026-11-28`. */
const dayOf = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date(ms));

/**
 * Every release of a file a person approved, oldest first, from `since` on: for an
 * auditor, who dropped it, who approved it and when, with its code and what it sent.
 */
async function listApprovals(
  journal: JournalBatches & JournalReports,
  out: Output,
  { timeZone, language }: { timeZone: string; language: Language },
  since: string | undefined,
): Promise<void> {
  const words = CATALOGS[language];
  const releases = [];
  // Only batches approved from a day before `since` on (a range of the approvals' index),
  // whatever the time zone; the day of each batch's last approval decides below.
  const from = since === undefined ? 0 : Date.parse(since) - DAY_MS;
  const approved = new Set((await journal.approvalsSince(from)).map((event) => event.batchId));
  for (const batchId of [...approved].sort((a, b) => a - b)) {
    const batch = await journal.batch(batchId);
    if (!batch) continue;
    const events = await journal.batchEvents(batch.id);
    const approvals = events.filter((event) => event.event === 'approved');
    const last = approvals.at(-1);
    if (!last || (since !== undefined && dayOf(last.at, timeZone) < since)) continue;
    const dropped = events.find((event) => event.event === 'dropped');
    const coded = approvals.flatMap((event) =>
      event.detail.code === 'eventFourEyesApproved' ? [event.detail.approvalCode] : [],
    );
    releases.push({
      batchId: batch.id,
      file: batch.fileName,
      droppedBy: dropped?.by ?? null,
      approvedBy: approvals.map((event) => ({ by: event.by, at: timeOf(event.at, timeZone) })),
      approvalCode: coded.at(-1) ?? null,
      state: batch.state,
      totals: await journal.rowTotalsOfBatch(batch.id),
    });
  }
  out.data(
    releases.map(({ totals, ...release }) => ({ ...release, done: describeTotals(totals) })),
  );
  // An auditor's list: in the reader's language, as what accountants read.
  if (releases.length === 0) out.line(say(words, { code: 'approvalsNone', since: since ?? null }));
  for (const { totals, ...release } of releases)
    out.line(
      say(words, { code: 'approvalsRelease', ...release, done: describeTotals(totals, words) }),
    );
}

/** What listing batches reads: their totals, lines and events, and what replaced one. */
type Listing = JournalBatches & JournalReports & JournalApproval;

export function statusCommand(io: CliIo, { command: { status: words } }: HelpTexts): Command {
  return new Command('status')
    .description(words.description)
    .argument(`[${words.argument.name}]`, words.argument.description)
    .option('--approvals', words.options.approvals)
    .option('--since <day>', words.options.since, (day: string) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(day)))
        throw new InvalidArgumentError('expected a day, YYYY-MM-DD');
      return day;
    })
    .addHelpText('after', words.after)
    .action(async (what: string | undefined, options: StatusOptions, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>());
      // The commands it prints take the flags it was given, its journal's words too.
      const hintFlags = hintFlagsOf(command.optsWithGlobals<GlobalOptions>());
      const folders = homeFolders(context.config.home);
      // Said first, even with --quiet: what follows is not the whole truth of this home.
      const { journal, loss, moved } = await readHomeJournal(folders, context.config, io.clock.now);
      if (loss) context.out.warn(`payouts status: ${loss}`);
      if (moved) {
        const said = say(CATALOGS[context.config.language ?? 'en'], moved);
        context.out.warn(`payouts status: ${said}`);
      }
      if (journal === undefined)
        return requireJournal('status', homeJournalAt(folders, context.config));
      try {
        const sandbox = (await journal.gatewayKind()) === 'sandbox';
        // Payouts pending longer than pendingAlertAfter, shown beside their file.
        const tooLong = (batchId: number) =>
          pendingTooLong(journal, batchId, context.config.pendingAlertAfter, io.clock.now());
        if (sandbox)
          context.out.line(`${SANDBOX_MARK}: this journal has only sent to the embedded sandbox`);
        const { timeZone } = context.config;
        if (options.approvals)
          return await listApprovals(
            journal,
            context.out,
            { timeZone, language: context.config.language ?? 'en' },
            options.since,
          );
        if (what === undefined) {
          await listBatches(journal, context.out, sandbox, tooLong, { timeZone, hintFlags });
          return listSkipped(folders.inbox, context.out);
        }
        const batches = await batchesNamed(journal, basename(what));
        if (batches.length > 0)
          return await listRows(
            journal,
            batches,
            context.out,
            sandbox,
            tooLong,
            timeZone,
            folders,
            hintFlags,
          );
        if (await journal.payout(what))
          return await showPayout(journal, what, context.out, sandbox, { timeZone, hintFlags });
        throw new ExitError(
          1,
          `payouts status: no file and no orderId named "${what}" in the journal (payouts status lists the files)`,
        );
      } finally {
        await journal.close();
      }
    });
}

/**
 * Every batch a name stands for: the batches of that name (copy marks such as
 * `(corrigida)` dropped, as the rules on who is paid read names), or the one whose result
 * or archive file bears it (`fornecedores.2026-11-23.csv`).
 */
async function batchesNamed(journal: JournalBatches, name: string): Promise<BatchRecord[]> {
  const key = foldText(batchStem(name));
  const all = await journal.batches();
  const bearing = all.filter(
    (batch) =>
      batch.resultName !== null &&
      (batch.resultName === name || archiveFileName(batch.resultName, batch.fileName) === name),
  );
  if (bearing.length > 0) return bearing;
  return all.filter(
    (batch) => batch.fileName === name || (batch.nameKey !== null && batch.nameKey === key),
  );
}

/** An instant of the journal as every line of status prints it: as result files write `createdAt`. */
function timeOf(ms: number, timeZone: string): string {
  return inTimeZone(new Date(ms), timeZone);
}

/** `batch 1  pay.csv  received 2026-11-23T04:28:08-03:00  done: 2 paid (R$ 40,00)` */
async function batchLine(
  journal: JournalReports & JournalApproval,
  batch: BatchRecord,
  timeZone: string,
): Promise<string> {
  const totals = describeTotals(await journal.rowTotalsOfBatch(batch.id));
  // Waiting only for its copy's answer: nothing of it is left to approve.
  const replaced =
    batch.state === 'awaiting-approval' ? await replacementOfBatch(journal, batch.id) : undefined;
  const state = replaced ? `replaced by batch ${replaced.copy.id}` : batch.state;
  return `batch ${batch.id}  ${givenName(batch.fileName)}  received ${timeOf(batch.receivedAt, timeZone)}  ${state}: ${totals}`;
}

async function listBatches(
  journal: Listing,
  out: Output,
  sandbox: boolean,
  tooLong: (batchId: number) => Promise<PendingTooLong | undefined>,
  { timeZone, hintFlags }: { timeZone: string; hintFlags: string },
): Promise<void> {
  const batches = await journal.batches();
  const data = [];
  for (const batch of batches) {
    data.push({
      sandbox,
      batchId: batch.id,
      file: batch.fileName,
      receivedAt: new Date(batch.receivedAt).toISOString(),
      state: batch.state,
      totalCents: batch.totalCents,
      ...(await journal.rowTotalsOfBatch(batch.id)),
      pendingTooLong: (await tooLong(batch.id)) ?? null,
    });
  }
  out.data(data);
  if (batches.length === 0) out.line('The journal has no files yet.');
  for (const batch of batches) {
    out.line(await batchLine(journal, batch, timeZone));
    const pending = await tooLong(batch.id);
    if (pending) out.line(`  ${sayInEnglish(describePendingTooLong(pending, hintFlags))}`);
  }
}

/** Files of the inbox no run takes (hidden, temporary, lock files), each with why. */
function listSkipped(inbox: string, out: Output): void {
  const skipped = skippedFiles(inbox);
  if (skipped.length === 0) return;
  out.line('\nIn the inbox, not taken:');
  for (const file of skipped) {
    out.line(`  ${file.name}: ${file.why}${file.advice ? `; ${sayInEnglish(file.advice)}` : ''}`);
  }
}

/** Widths of the columns that vary: as wide as the longest orderId and transactionId. */
interface Widths {
  orderId: number;
  transactionId: number;
}

function rowLine(
  [line, orderId, status, value, transactionId, message]: string[],
  widths: Widths,
): string {
  return [
    (line ?? '').padStart(5),
    (orderId ?? '').padEnd(widths.orderId),
    (status ?? '').padEnd(10),
    (value ?? '').padStart(14),
    (transactionId ?? '').padEnd(widths.transactionId),
    message ?? '',
  ]
    .join('  ')
    .trimEnd();
}

/**
 * The gateway's fee or net for --json: its numeric text as a JSON number of the same value
 * (`12.50` as 12.5; in the gateway's unit: the interface states none), as long as a number
 * holds it exactly (up to 13 digits and 2 decimals); else its text verbatim; null when it
 * gave none.
 */
function gatewayFigure(text: string | null | undefined): number | string | null {
  if (text === null || text === undefined || text === '') return null;
  return /^-?\d{1,13}(\.\d{1,2})?$/.test(text) ? Number(text) : text;
}

/**
 * A row of `status FILE --json`: the result file's record, with what is a number given
 * as one (line, value in cents, transactionId, the gateway's fee and net).
 */
function jsonRow(record: ResultRecord, entry: ResultEntry) {
  const { line: _line, value: _value, transactionId: _transactionId, ...text } = record;
  return {
    line: entry.line,
    ...text,
    valueCents: entry.payout?.request.value ?? entry.valueCents ?? null,
    transactionId: entry.payout?.transactionId ?? null,
    fee: gatewayFigure(entry.payout?.fee),
    net: gatewayFigure(entry.payout?.net),
  };
}

/** Every line of the file's batches, in file order. */
/** A waiting file whose bytes are no longer those of its report: no approval releases it. */
async function changedSinceReport(
  journal: JournalReports,
  batch: BatchRecord,
  folders: Folders,
  hintFlags: string,
): Promise<Said | undefined> {
  if (batch.state !== 'awaiting-approval' || batch.awaitingName === null) return undefined;
  const file = join(folders.awaiting, batch.awaitingName);
  if (!existsSync(file) || (await sha256Of(file)) === batch.sha256) return undefined;
  const code = approvalCode(batch, await toBeSent(journal, batch.id));
  return { code: 'fourEyesChanged', file: batch.awaitingName, approvalCode: code, hintFlags };
}

async function listRows(
  journal: Listing,
  batches: BatchRecord[],
  out: Output,
  sandbox: boolean,
  tooLong: (batchId: number) => Promise<PendingTooLong | undefined>,
  timeZone: string,
  folders: Folders,
  hintFlags: string,
): Promise<void> {
  const all: {
    sandbox: boolean;
    batchId: number;
    file: string;
    receivedAt: string;
    state: string;
    result: string | null;
    rows: ReturnType<typeof jsonRow>[];
  }[] = [];
  for (const batch of batches) {
    out.line(await batchLine(journal, batch, timeZone));
    if (batch.resultName) out.line(`  result: results/${batch.resultName}`);
    // Why a whole file is held, refused or unusable: said here, not only in rejected/.
    for (const problem of batch.problems)
      out.line(`  ${sayInEnglish(withHintFlags(problem, hintFlags))}`);
    const changed = await changedSinceReport(journal, batch, folders, hintFlags);
    if (changed) out.line(`  ${sayInEnglish(changed)}`);
    // What people decided about it, with who and when (an approval, a release).
    for (const event of await journal.batchEvents(batch.id)) {
      out.line(
        `  ${event.event} by ${event.by} at ${timeOf(event.at, timeZone)}: ${sayInEnglish(withHintFlags(event.detail, hintFlags))}`,
      );
    }
    const pending = await tooLong(batch.id);
    if (pending) out.line(`  ${sayInEnglish(describePendingTooLong(pending, hintFlags))}`);
    const held = holdMessage(batch, undefined, hintFlags);
    const format = { dialect: 'rfc4180', timeZone, hintFlags } as const;
    const rows: ReturnType<typeof jsonRow>[] = [];
    if (out.json) {
      for await (const entry of entriesOf(journal, batch.id))
        rows.push(jsonRow(resultRecord(entry, format, held), entry));
    } else {
      // Measured first, read again to print: a long orderId keeps every column in line.
      const widths: Widths = { orderId: 'orderId'.length, transactionId: 'transactionId'.length };
      for await (const entry of entriesOf(journal, batch.id)) {
        widths.orderId = Math.max(widths.orderId, entry.orderId?.length ?? 1);
        const transactionId = entry.payout?.transactionId;
        if (transactionId != null)
          widths.transactionId = Math.max(widths.transactionId, String(transactionId).length);
      }
      out.line(rowLine(['line', 'orderId', 'status', 'value', 'transactionId', 'message'], widths));
      for await (const entry of entriesOf(journal, batch.id)) {
        const { line, orderId, status, transactionId, message } = resultRecord(entry, format, held);
        const cents = entry.payout?.request.value ?? entry.valueCents ?? undefined;
        out.line(
          rowLine(
            [
              line,
              orderId || '-',
              status,
              cents === undefined ? '-' : formatCents(cents),
              transactionId || '-',
              message,
            ],
            widths,
          ),
        );
      }
    }
    all.push({
      sandbox,
      batchId: batch.id,
      file: batch.fileName,
      receivedAt: new Date(batch.receivedAt).toISOString(),
      state: batch.state,
      result: batch.resultName,
      rows,
    });
  }
  out.data(all);
}

async function showPayout(
  journal: JournalReports & JournalBatches,
  orderId: string,
  out: Output,
  sandbox: boolean,
  { timeZone, hintFlags }: { timeZone: string; hintFlags: string },
): Promise<void> {
  const payout = await journal.payout(orderId);
  // Its words as values, with the commands in them taking the flags status was given.
  const said = (reason: Said) => sayInEnglish(withHintFlags(reason, hintFlags));
  if (!payout) return;
  const history = await journal.history(orderId);
  const batch = await journal.batch(payout.batchId);
  // Its batch's history moved out by journal compact: where it is now.
  const moved = (await journal.batchEvents(payout.batchId)).flatMap((event) =>
    event.event === COMPACTED_EVENT && event.detail.code === 'historyMoved'
      ? [{ at: event.at, archive: event.detail.archive }]
      : [],
  );
  out.data({
    sandbox,
    ...payout,
    fee: gatewayFigure(payout.fee),
    net: gatewayFigure(payout.net),
    history: history.map((entry) => ({ ...entry, reason: said(entry.reason) })),
    historyMovedTo: moved.map((entry) => entry.archive),
  });
  out.line(
    keyValueLines([
      ['orderId', payout.orderId],
      [
        'file',
        `${batch ? givenName(batch.fileName) : '?'} (batch ${payout.batchId}), line ${payout.line}`,
      ],
      ['to', `${payout.request.person.name}, key ${payout.request.pixKey}`],
      ['value', formatCents(payout.valueCents)],
      ['status', payout.state],
      ['transactionId', payout.transactionId?.toString() ?? '-'],
      ['gateway status', payout.gatewayStatus ?? '-'],
      ['endToEndId', payout.endToEndId ?? '-'],
      ['attempts', String(payout.attempts)],
      ['message', (payout.said ? said(payout.said) : payout.message) ?? '-'],
    ]),
  );
  out.line('\nHistory:');
  for (const { at, archive } of moved) {
    const said = sayInEnglish({ code: 'historyMoved', archive });
    out.line(`  until ${timeOf(at, timeZone)}: ${said} (by ${COMPACTED_BY})`);
  }
  for (const entry of history) {
    out.line(
      `  ${timeOf(entry.at, timeZone)}  ${entry.from ?? '(new)'} -> ${entry.to}: ${said(entry.reason)}`,
    );
  }
}
