/**
 * Approval (requireApproval, docs/operations.md, "Approval"): a validated file waits in
 * `awaiting-approval/` with a report of what would be sent, its rows journaled and
 * queued but its batch closed. A person releases it by moving it into `approved/` (or
 * `payouts approve FILE`), or turns it down (`payouts reject FILE`): its rows are then
 * held, never sent, and a later file may take them over.
 *
 * Files are matched to batches by their bytes, never by name: what is released is
 * exactly what was validated and reported, whatever a person renamed.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { formatCents } from '../messages/money.js';
import { givenName, commandTarget } from '../csv/given-name.js';
import { heldRowSaid, OWN_HOLDS } from '../journal/answers.js';
import type {
  BatchRecord,
  JournalApproval,
  JournalBatches,
  JournalGateway,
  JournalReports,
  PayeeEntry,
  RowTotals,
} from '../journal/journal.js';
import type { Config } from '../config/schema.js';
import { CATALOGS, type Catalog } from '../messages/catalog.js';
import type { Language } from '../messages/language.js';
import { collectGarbage, WORK_BETWEEN_COLLECTIONS } from '../runtime/collect.js';
import { failpoint } from '../runtime/failpoint.js';
import { maskPersonalData } from '../runtime/mask.js';
import { moveInto, payoutFiles, reject, sha256Of, type Folders } from './folders.js';
import { releasedByApprovals, underFourEyes } from './four-eyes.js';
import { ANSWERED } from './holds.js';
import { fileClaimOf, type WorkerClaims } from './lock.js';
import type { Said } from '../messages/said.js';
import { say } from '../messages/say.js';
import { withHintFlags } from '../messages/hint-flags.js';

/** What a batch's report reads: its lines, its holds, its result lines, its gateway. */
type Reporting = JournalBatches & JournalReports & JournalGateway;

/** What telling a corrected copy's replacement reads and writes. */
type Replacing = JournalBatches & JournalReports & JournalApproval;

/** Invalid rows listed in a report; the result file has them all. */
const REPORT_ERRORS = 200;

/** What a waiting batch would send once approved: its queued payouts. */
export async function toBeSent(
  journal: JournalReports,
  batchId: number,
): Promise<{ count: number; cents: number }> {
  const totals = await journal.rowTotalsOfBatch(batchId);
  return { count: totals.rows.queued ?? 0, cents: totals.cents.queued ?? 0 };
}

/** The corrected copy that replaced a waiting batch, and whether it waits for approval itself. */
export interface Replacement {
  copy: BatchRecord;
  copyWaits: boolean;
}

/** What a replaced batch may have: its rows closed by a copy, and lines that were never payouts. */
const LEFT_OF_REPLACED: readonly string[] = ['superseded', 'invalid', 'skipped'];

/**
 * A batch is replaced when corrected copies took over or closed every payout it had, none
 * sent: approving it would send nothing. While a copy waits for approval, turning it down
 * gives the rows back and the batch waits again.
 */
export function replacementOf(
  totals: RowTotals,
  copies: readonly BatchRecord[],
): Replacement | undefined {
  const copy = copies.at(-1);
  const left = Object.entries(totals.rows).filter(([, rows]) => (rows ?? 0) > 0);
  if (!copy || !left.every(([outcome]) => LEFT_OF_REPLACED.includes(outcome))) return undefined;
  return { copy, copyWaits: copies.some((each) => each.state === 'awaiting-approval') };
}

/** What replaced a batch, as the journal has it now. */
export async function replacementOfBatch(
  journal: JournalReports & JournalApproval,
  batchId: number,
): Promise<Replacement | undefined> {
  return replacementOf(
    await journal.rowTotalsOfBatch(batchId),
    await journal.supersededBy(batchId),
  );
}

/**
 * What is said of a batch its corrected copy replaced, by `verb` (null: in its report),
 * with the copy's approve command while the copy waits.
 */
export async function replacedSaid(
  journal: Replacing,
  batchId: number,
  verb: string | null,
  hintFlags: string,
): Promise<Said | undefined> {
  const batch = await journal.batch(batchId);
  const replaced = batch && (await replacementOfBatch(journal, batchId));
  if (!batch || !replaced) return undefined;
  const { copy, copyWaits } = replaced;
  return {
    code: 'fileReplaced',
    verb,
    file: givenName(batch.fileName),
    batchId,
    copyFile: givenName(copy.fileName),
    copyBatchId: copy.id,
    at: copy.receivedAt,
    next: copyWaits
      ? {
          file: givenName(copy.awaitingName ?? copy.fileName),
          hintFlags: ` --batch ${copy.id}${hintFlags}`,
        }
      : null,
  };
}

/**
 * Waiting batches replaced by a copy no longer waiting: nothing of them is left to
 * approve, so each is opened with nothing to send and its file goes on to processing/,
 * where the pass writes its result and archives it like any file whose rows are final.
 */
export async function closeReplaced(journal: Replacing, folders: Folders): Promise<void> {
  for (const batch of await journal.batchesIn('awaiting-approval')) {
    const replaced = await replacementOfBatch(journal, batch.id);
    if (!replaced || replaced.copyWaits) continue;
    await journal.recordBatchEvent(batch.id, 'replaced', 'payouts', {
      code: 'eventReplacedBy',
      batchId: replaced.copy.id,
    });
    // Opened before its file moves: a file in processing/ of a batch still waiting goes back to wait.
    await journal.setBatchState(batch.id, 'open');
    if (batch.awaitingName === null) continue;
    const file = `${folders.awaiting}/${batch.awaitingName}`;
    moveInto(file, folders.processing);
    rmSync(`${file}.report.txt`, { force: true });
  }
}

/** Moves a journaled file into awaiting-approval/, with its report beside it. */
export async function awaitApproval(
  journal: Reporting & JournalApproval,
  folders: Folders,
  file: string,
  batchId: number,
  { hintFlags = '', language = 'en' }: { hintFlags?: string; language?: Language } = {},
): Promise<string | undefined> {
  const moved = moveInto(file, folders.awaiting);
  if (!moved) return undefined;
  const name = basename(moved);
  await journal.setAwaitingName(batchId, name);
  await writeReport(journal, moved, batchId, { hintFlags, language });
  return moved;
}

/** Under four eyes, what a report says instead of how to move the file: its code, and who may release it. */
export interface FourEyesReport {
  code: Said;
  lines: readonly Said[];
}

/** What a waiting file would send, its held rows and every payee, beside it as `FILE.report.txt`. */
export async function writeReport(
  journal: Reporting,
  file: string,
  batchId: number,
  {
    hintFlags = '',
    language = 'en',
    fourEyes,
  }: { hintFlags?: string; language?: Language; fourEyes?: FourEyesReport } = {},
): Promise<void> {
  const name = basename(file);
  const target = commandTarget(name, batchId, hintFlags);
  const totals = await journal.rowTotalsOfBatch(batchId);
  const sent = await toBeSent(journal, batchId);
  // The first of them, and how many: a file's lines may be a million.
  const invalid = await journal.linesOfBatch(batchId, ['invalid'], REPORT_ERRORS);
  const notSent = await journal.linesOfBatch(batchId, ['held', 'covered'], REPORT_ERRORS);
  const holds = await journal.holdsOfBatch(batchId);
  // The first of the rows held by themselves: identical rows of one payee may be a million.
  const heldRows = await journal.ownHeldRowsOfBatch(batchId, REPORT_ERRORS);
  const ownHeld = holds.reduce(
    (rows, hold) => rows + (OWN_HOLDS.includes(hold.reason) ? hold.rows : 0),
    0,
  );
  const words = CATALOGS[language];
  // The journal's words too name commands with the flags of the command writing the report.
  const shown = (said: Said) => say(words, withHintFlags(said, hintFlags));
  const approval = words.approval;
  const report = [
    // A sandbox's approval must never pass for a real one, printed or forwarded.
    ...((await journal.gatewayKind()) === 'sandbox' ? [approval.sandbox] : []),
    approval.waiting({ file: target.file, batchId }),
    ...(fourEyes ? [shown(fourEyes.code)] : []),
    approval.onceApproved({ count: sent.count, amount: formatCents(sent.cents) }),
    approval.notSent({
      invalid: totals.rows.invalid ?? 0,
      held: totals.rows.held ?? 0,
      covered: totals.rows.covered ?? 0,
    }),
    // Rows held by themselves are each listed; a hold of the whole file says its reason once.
    ...holds.flatMap((hold) => {
      const own = OWN_HOLDS.includes(hold.reason);
      const example = own ? null : hold.said ? shown(hold.said) : hold.message || null;
      return [
        `  ${approval.heldByRule({ rows: hold.rows, amount: formatCents(hold.cents), example })}`,
        ...(own ? heldRows.filter((row) => row.reason === hold.reason) : []).map(
          (row) => `    ${shown(heldRowSaid(row))}`,
        ),
      ];
    }),
    ...(ownHeld > heldRows.length ? [`    ${approval.more}`] : []),
    ...[...invalid.first, ...notSent.first].slice(0, REPORT_ERRORS).map(
      (line) =>
        `  ${approval.atLine({
          line: line.line,
          column: line.column || null,
          message: line.said ? shown(line.said) : line.message,
        })}`,
    ),
    ...(invalid.count + notSent.count > REPORT_ERRORS ? [`  ${approval.more}`] : []),
    '',
    ...(fourEyes
      ? fourEyes.lines.map(shown)
      : [
          approval.toApprove({ ...target, inFolder: name }),
          ...(holds.some((hold) => hold.reason !== null && ANSWERED.includes(hold.reason))
            ? [approval.answerApproves(target)]
            : []),
        ]),
    approval.toReject(target),
    '',
    approval.payeesTitle,
  ];
  // Written beside its name and renamed once whole: an approver opening it meanwhile
  // reads the last report or this one, never a part of it as if it were all.
  const path = `${file}.report.txt`;
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const written = await open(temporary, 'w');
  let whole = false;
  try {
    await written.write(`${report.join('\n')}\n`);
    // Every payee, a page at a time: a finance control checks who is paid, not only totals.
    // Payees written, and at the last collection: a million payees' garbage is tens of MB.
    for (let after = 0, reported = 0, collectedAt = 0; ;) {
      const page = await journal.payeesOfBatch(batchId, after, PAGE);
      const last = page.at(-1);
      if (!last) break;
      let lines = '';
      for (const payee of page) lines += `${payeeLine(payee, words, shown)}\n`;
      // One write a page, awaited: the disk paces us, and a signal or a health line has its turn.
      await written.write(lines);
      after = last.line;
      reported += page.length;
      if (reported - collectedAt >= WORK_BETWEEN_COLLECTIONS) {
        collectGarbage();
        collectedAt = reported;
      }
    }
    whole = true;
  } finally {
    await written.close();
    if (!whole) await rm(temporary, { force: true });
  }
  await rename(temporary, path);
}

/**
 * The report of a waiting file its corrected copy replaced says so, and nothing else: it
 * has nothing left to approve. Turning the copy down writes its full report again.
 */
export async function reportReplaced(
  journal: Replacing,
  folders: Folders,
  batch: BatchRecord,
  { hintFlags = '', language = 'en' }: { hintFlags?: string; language?: Language } = {},
): Promise<void> {
  const said = await replacedSaid(journal, batch.id, null, hintFlags);
  if (!said || batch.awaitingName === null) return;
  const path = `${folders.awaiting}/${batch.awaitingName}.report.txt`;
  writeFileSync(path, `${say(CATALOGS[language], said)}\n`);
}

/** Lines of a batch read per page while its report is written. */
const PAGE = 500;

/** `  line 2: Ana Souza, document ***25, Pix key a***@example.com, R$ 3.000,00: to be sent` */
function payeeLine(payee: PayeeEntry, words: Catalog, shown: (said: Said) => string): string {
  const waiting = payee.state === 'queued';
  return `  ${words.approval.payee({
    line: payee.line,
    name: payee.name,
    document: maskPersonalData(payee.cpfCnpj),
    key: maskPersonalData(payee.pixKey),
    amount: formatCents(payee.valueCents),
    state: waiting ? null : words.state[payee.state],
    message: waiting ? null : (payee.said ? shown(payee.said) : payee.message) || null,
  })}`;
}

export type Release =
  | { file: string; released: true; batchId: number }
  | { file: string; released: false; why: Said }
  /** Claimed by another host sharing the journal, which releases it: its batch, if known. */
  | { file: string; releasedBy: string; batchId: number | undefined }
  /** Under four eyes, moved in by hand without the approvals its code needs: back to wait. */
  | { file: string; sentBack: true; batchId: number };

/** What releasing a file of approved/ weighs: four eyes on this host, and how many approvers a file needs. */
export type ReleaseRules = Pick<
  Config,
  'fourEyes' | 'secondApprovalAbove' | 'dailyLimit' | 'timeZone'
>;

/**
 * Files a person moved into approved/ (once settled): each opens its waiting batch and
 * goes on to processing/. Bytes of no waiting batch are refused to rejected/, saying why:
 * only what was validated and reported may be released. Beside other hosts (`claims`),
 * a file is released under a claim on its bytes, as an inbox file is taken: by one host.
 */
export async function releaseApproved(
  journal: JournalBatches & JournalApproval & JournalReports,
  folders: Folders,
  isReady: (path: string) => boolean,
  claims: WorkerClaims | undefined,
  language: Language,
  rules: ReleaseRules,
): Promise<Release[]> {
  const outcomes: Release[] = [];
  for (const file of payoutFiles(folders.approved)) {
    if (!isReady(file)) continue;
    if (!claims) {
      const outcome = await release(journal, folders, file, await sha256Of(file), language, rules);
      if (outcome) outcomes.push(outcome);
      continue;
    }
    const claim = await fileClaimOf(file);
    if (claim?.kind !== 'file') continue; // released by another host meanwhile
    const attempt = await claims.take(claim);
    if (!attempt.taken) {
      const batches = await journal.batchesOf(claim.sha256);
      const waiting = batches.find((batch) => batch.state === 'awaiting-approval');
      outcomes.push({ file: basename(file), releasedBy: attempt.host, batchId: waiting?.id });
      continue;
    }
    // Claimed once another host had released it and given its claim back: gone.
    const outcome = existsSync(file)
      ? await release(journal, folders, file, claim.sha256, language, rules)
      : undefined;
    if (outcome) outcomes.push(outcome);
    // A pass that throws leaves the claim to its lock, as an inbox file's.
    await claims.release(claim);
  }
  return outcomes;
}

/** Releases one file of approved/ whose bytes are `sha256`; undefined: left for the next pass. */
async function release(
  journal: JournalBatches & JournalApproval & JournalReports,
  folders: Folders,
  file: string,
  sha256: string,
  language: Language,
  rules: ReleaseRules,
): Promise<Release | undefined> {
  const batches = await journal.batchesOf(sha256);
  const waiting = batches.find((batch) => batch.state === 'awaiting-approval');
  if (waiting && (await underFourEyes(journal, waiting.id, rules.fourEyes))) {
    if (
      !(await releasedByApprovals(journal, waiting, await toBeSent(journal, waiting.id), rules))
    ) {
      const back = moveInto(file, folders.awaiting, undefined, waiting.awaitingName ?? undefined);
      if (!back) return undefined; // names all taken: next pass
      await journal.setAwaitingName(waiting.id, basename(back));
      return { file: basename(back), sentBack: true, batchId: waiting.id };
    }
  }
  // Approved before a crash, the file not yet moved on: it goes on now.
  const released = batches.find((batch) => batch.state === 'open' || batch.state === 'underfunded');
  const batch = waiting ?? released;
  failpoint('releasing-approved');
  if (!batch || (waiting && !(await journal.approveBatch(waiting.id)))) {
    const why = refusalOf(batches);
    // Its reason file is read by the person who released it: in their language.
    reject(file, folders.rejected, [say(CATALOGS[language], why)]);
    return { file: basename(file), released: false, why };
  }
  if (!moveInto(file, folders.processing)) return undefined; // names all taken: next pass
  if (waiting && (await journal.batchEvents(waiting.id)).at(-1)?.event !== 'approved') {
    await journal.recordBatchEvent(waiting.id, 'approved', 'a person', {
      code: 'eventMovedIntoApproved',
    });
  }
  if (batch.awaitingName)
    rmSync(`${folders.awaiting}/${batch.awaitingName}.report.txt`, { force: true });
  return { file: basename(file), released: true, batchId: batch.id };
}

function refusalOf(batches: readonly BatchRecord[]): Said {
  if (batches.some((batch) => batch.state === 'refused')) return { code: 'releaseTurnedDown' };
  if (batches.length > 0) return { code: 'releaseAlreadyReleased' };
  return { code: 'releaseUnknownBytes' };
}

/**
 * A file in awaiting-approval/ and the waiting batch its bytes are, if any: the file of
 * that very name, or of that name as the accountant gave it (the one of batch `pick`,
 * when given). Several of that name and none picked: their batches, for a person to say which.
 */
export async function findAwaiting(
  journal: Replacing,
  folders: Folders,
  name: string,
  pick?: number,
): Promise<{ file: string; batch: BatchRecord | undefined } | BatchRecord[] | undefined> {
  const files = payoutFiles(folders.awaiting);
  // A name with the folder's mark is that very file; the given name, every file of it.
  const given = givenName(basename(name));
  const named = files.filter((path) =>
    given === basename(name)
      ? givenName(basename(path)) === given
      : basename(path) === basename(name),
  );
  const found = [];
  for (const file of named) {
    const batches = await journal.batchesOf(await sha256Of(file));
    const batch = batches.find((candidate) => candidate.state === 'awaiting-approval');
    // A file its corrected copy replaced is answered only when picked, to say so.
    const replaced = batch && (await replacementOfBatch(journal, batch.id));
    if (pick === undefined ? !replaced : batch?.id === pick) found.push({ file, batch });
  }
  if (found.length > 1) {
    return found.flatMap(({ batch }) => batch ?? []).sort((a, b) => a.id - b.id);
  }
  return found[0];
}
