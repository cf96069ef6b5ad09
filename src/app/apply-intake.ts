/**
 * Intake, done: reads the home's folders and the journal, asks the plan (intake.ts) what
 * to do with each file, and does it: files that settled move from the inbox into
 * processing/, every file there is journaled (or found journaled), and each becomes a
 * summary, with the batches only the journal knows of (approval, a retry, a reading cut
 * short).
 */
import { basename, dirname, join } from 'node:path';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { formatDuration } from '../config/duration.js';
import { systemCodeOf } from '../errors.js';
import type { Config } from '../config/schema.js';
import { givenName } from '../csv/given-name.js';
import { cannotReadSaid, ingestFile } from '../engine/ingest.js';
import {
  awaitApproval,
  closeReplaced,
  releaseApproved,
  replacementOfBatch,
  reportReplaced,
  toBeSent,
  writeReport,
} from '../inbox/approval.js';
import {
  fourEyesApprovals,
  underFourEyes,
  waitingCommandFlags,
  weighApprovals,
  type Weighing,
} from '../inbox/four-eyes.js';
import type { FileState } from '../messages/file-state.js';
import { moveDropped, type Dropper } from '../inbox/dropped.js';
import { moveInto, payoutFiles, reject, userNameOf, type Folders } from '../inbox/folders.js';
import { fileClaimOf, type WorkerClaims } from '../inbox/lock.js';
import { settledByAge } from '../inbox/readiness.js';
import { skippedFiles } from '../inbox/skipped.js';
import type {
  BatchRecord,
  JournalAdmission,
  JournalApproval,
  JournalBatches,
  JournalGateway,
  JournalIntake,
  JournalReports,
  JournalRetries,
  WorkClaim,
} from '../journal/journal.js';
import { JournalError } from '../journal/journal.js';
import { CATALOGS } from '../messages/catalog.js';
import type { Language } from '../messages/language.js';
import type { Said } from '../messages/said.js';
import { say } from '../messages/say.js';
import { failpoint } from '../runtime/failpoint.js';
import { planFile, planListedBatches, type BatchFacts, type ReadAction } from './intake.js';
import type { FileSummary, PassOptions } from './pass.js';

/** What intake reads and writes: files journaled, approvals, replacements, their reports. */
export type IntakeJournal = JournalIntake &
  JournalAdmission &
  JournalBatches &
  JournalApproval &
  JournalReports &
  JournalGateway &
  JournalRetries;

/** Moves ready inbox files into processing/ and journals every file there. */
export async function applyIntake(
  journal: IntakeJournal,
  folders: Folders,
  config: Config,
  options: PassOptions,
): Promise<FileSummary[]> {
  const summaries: FileSummary[] = [];
  const hintFlags = options.hintFlags ?? '';
  const isReady = options.isReady ?? settledByAge(config.inboxSettle, () => options.clock.now());
  const words = CATALOGS[config.language ?? 'en'];
  // Approvals enough by the rules move their files into approved/, released just below.
  const weighed = new Map<number, Weighing>();
  // A batch dropped under four eyes keeps its rules on a host whose fourEyes is off.
  for (const batch of await journal.batchesIn('awaiting-approval')) {
    if (!(await underFourEyes(journal, batch.id, config.fourEyes))) continue;
    if (await replacementOfBatch(journal, batch.id)) continue;
    const now = options.clock.now();
    const weighing = await weighApprovals(journal, folders, batch, config, now, hintFlags);
    if (weighing?.turnedDown) options.note(say(words, weighing.turnedDown));
    else if (weighing) weighed.set(batch.id, weighing);
  }
  // Moved by this pass: settled, though a run's look at approved/ was before they were there.
  const movedIn = new Set([...weighed.values()].flatMap((weighing) => weighing.released || []));
  const released = await releaseApproved(
    journal,
    folders,
    (path) => movedIn.has(path) || isReady(path),
    options.claims,
    config.language ?? 'en',
    config,
  );
  // Batches of approved/ files another host is releasing.
  const releasing = new Set<number>();
  for (const release of released) {
    if ('releasedBy' in release) {
      if (release.batchId !== undefined) releasing.add(release.batchId);
      summaries.push({
        ...(await summarise(
          journal,
          release.file,
          release.batchId,
          ['waiting', 'being released by another host'],
          [{ code: 'releasedByHost', host: release.releasedBy }],
        )),
        fileWaits: true,
      });
    } else if ('sentBack' in release) {
      weighed.delete(release.batchId);
      options.note(say(words, { code: 'fourEyesMovedBack', file: release.file }));
    } else if (release.released) {
      const file = givenName(release.file);
      const approvals = fourEyesApprovals(await journal.batchEvents(release.batchId));
      const last = approvals.at(-1);
      options.note(
        say(
          words,
          last
            ? {
                code: 'fourEyesReleased',
                file,
                approvalCode: last.approvalCode,
                approvedBy: [
                  ...new Set(
                    approvals.filter((a) => a.approvalCode === last.approvalCode).map((a) => a.by),
                  ),
                ],
              }
            : { code: 'approvedSentNow', file },
        ),
      );
    } else {
      summaries.push({
        ...(await summarise(
          journal,
          release.file,
          undefined,
          ['unusable', 'moved to rejected/'],
          [release.why],
        )),
        fileNeedsAPerson: true,
      });
    }
  }
  await closeReplaced(journal, folders);
  // Never left unseen: hidden, temporary and lock files are named, with why, every run.
  for (const skipped of skippedFiles(folders.inbox)) {
    summaries.push({
      ...(await summarise(
        journal,
        skipped.name,
        undefined,
        ['skipped', skipped.why],
        skipped.advice ? [skipped.advice] : [],
      )),
      fileNeedsAPerson: skipped.needsAPerson,
      fileWaits: skipped.waits,
    });
  }
  // What arrived joins processing/, beside what an earlier run left there.
  const arrived = new Set<string>();
  // Who dropped each file that arrived: its owner in the inbox, before any move could change it.
  const droppedBy = new Map<string, Dropper>();
  // Files of processing/ this process has claimed, until it has read them.
  const reading = new Map<string, WorkClaim>();
  // Files of processing/ another host is reading: their batches are that host's to list.
  const readElsewhere = new Set<string>();
  const settle = formatDuration(config.inboxSettle);
  for (const file of payoutFiles(folders.inbox)) {
    const action = planFile({
      where: 'inbox',
      file,
      name: basename(file),
      ready: isReady(file),
      settle,
    });
    let why: Said = action.kind === 'leave' ? action.why : { code: 'processingFull' };
    let moved: string | undefined;
    // Left by four eyes, which cannot tell who dropped it: a person fixes it.
    let refused = false;
    if (action.kind === 'take') {
      // Claimed before it is moved: a host that finds it claimed leaves it to the claim's.
      const taken = await claimFile(options.claims, file);
      if (taken === undefined) continue; // moved on by another host meanwhile
      if ('host' in taken) why = { code: 'takenByHost', host: taken.host };
      else {
        const taking = config.fourEyes
          ? await moveDropped(file, folders.processing)
          : { moved: moveInto(file, folders.processing) };
        if ('refused' in taking) [why, refused] = [taking.refused, true];
        else moved = taking.moved;
        if (moved && 'dropper' in taking && taking.dropper) droppedBy.set(moved, taking.dropper);
        if (moved && taken.claim) reading.set(moved, taken.claim);
        else if (taken.claim) await options.claims?.release(taken.claim);
        if (!moved && !refused && !existsSync(file)) continue; // taken by another host meanwhile
      }
    }
    if (moved) arrived.add(moved);
    else {
      summaries.push({
        ...(await summarise(
          journal,
          file,
          undefined,
          ['waiting', 'left in the inbox for a later run'],
          [why],
        )),
        fileWaits: true,
        fileNeedsAPerson: refused,
      });
    }
  }
  const memory = options.memory;
  for (const file of payoutFiles(folders.processing)) {
    if (options.signal.aborted) break;
    const known = memory?.seen.get(file);
    const stat = statSync(file, { throwIfNoEntry: false });
    const unchanged = known && stat?.size === known.size && stat.mtimeMs === known.mtimeMs;
    const found = planFile({
      where: 'processing',
      file,
      seenAs: unchanged ? known.batchId : undefined,
    });
    let action: ReadAction;
    if (found.kind === 'resume') action = found;
    else {
      if (!reading.has(file)) {
        const taken = await claimFile(options.claims, file);
        if (taken === undefined) continue; // moved on by another host meanwhile
        if ('host' in taken) {
          readElsewhere.add(basename(file));
          summaries.push({
            ...(await summarise(
              journal,
              file,
              undefined,
              ['waiting', 'being read by another host'],
              [{ code: 'takenByHost', host: taken.host }],
            )),
            fileWaits: true,
          });
          continue;
        }
        if (taken.claim) reading.set(file, taken.claim);
      }
      let read: Awaited<ReturnType<typeof ingestFile>>;
      try {
        read = await ingestFile(
          file,
          journal,
          { ...config, now: options.clock.now() },
          config.requireApproval || config.fourEyes ? 'awaiting-approval' : 'open',
          arrived.has(file),
        );
      } catch (error) {
        // The journal's failure ends the pass, the file left where it is for the next to
        // take in again; a file that cannot be opened or read (permissions, a disk error)
        // is this file's problem, never the other files'.
        if (error instanceof JournalError) throw error;
        summaries.push(await setAside(journal, folders, file, error, config));
        continue;
      }
      failpoint('between-files');
      const batchState =
        'batchId' in read && read.batchId !== undefined
          ? (await journal.batch(read.batchId))?.state
          : undefined;
      action = planFile({ where: 'read', file, read, batchState });
    }
    const remember = (batchId: number) =>
      stat && memory?.seen.set(file, { batchId, size: stat.size, mtimeMs: stat.mtimeMs });
    if (config.fourEyes && action.kind === 'await-approval') {
      const dropper = droppedBy.get(file);
      const batch = await journal.batch(action.batchId);
      if (dropper?.sha256 !== undefined && dropper.sha256 !== batch?.sha256) {
        // What was read is not what its owner dropped: nothing of it may wait under their name.
        const why: Said = { code: 'fourEyesNotAsDropped', file: basename(file) };
        await journal.refuseBatch(action.batchId, why);
        action = { kind: 'reject', file, batchId: action.batchId, problems: [why] };
      } else await recordDropper(journal, action.batchId, dropper?.uid ?? stat?.uid);
    }
    const summary = await applyToFile(action, { journal, folders, config, hintFlags, remember });
    if (summary) summaries.push(summary);
    // Read, and moved on where the plan said: any host may follow its batch now.
    const claim = reading.get(file);
    reading.delete(file);
    if (claim) await options.claims?.release(claim);
  }
  // Stopped before reading them: any host takes them next. A pass that throws leaves its
  // claims to its lock: this process takes them again, another host once the lock is gone.
  for (const claim of reading.values()) await options.claims?.release(claim);
  const handled = new Set(summaries.flatMap((summary) => summary.batchId ?? []));
  const listed = planListedBatches({
    // A batch another host is releasing is named once, above, as that host's.
    awaitingApproval: (
      await awaitingBatches(journal, folders, {
        hintFlags,
        language: config.language ?? 'en',
        fourEyes: { config, weighed, now: options.clock.now() },
      })
    ).filter((batch) => !releasing.has(batch.id)),
    // Only once every file in processing/ was read: a stop may have cut the reading short.
    open: options.signal.aborted ? [] : await openBatches(journal, handled),
    admitting: options.signal.aborted ? [] : await journal.batchesIn('admitting'),
    handled,
    readElsewhere,
    hintFlags,
  });
  for (const {
    file,
    batchId,
    state,
    outcome,
    problems,
    fileNeedsAPerson,
    fileElsewhere,
  } of listed) {
    summaries.push({
      ...(await summarise(journal, file, batchId, [state, outcome], problems)),
      fileNeedsAPerson,
      ...(fileElsewhere ? { fileElsewhere } : {}),
    });
  }
  return summaries;
}

/**
 * Takes a file for this process before it is moved or read: the claim to give back once
 * it is read (none when this process is the home's only worker), the host that has it,
 * or undefined when it is gone.
 */
async function claimFile(
  claims: WorkerClaims | undefined,
  file: string,
): Promise<{ claim: WorkClaim | undefined } | { host: string } | undefined> {
  if (!claims) return { claim: undefined };
  const claim = await fileClaimOf(file);
  if (!claim) return undefined;
  const attempt = await claims.take(claim);
  return attempt.taken ? { claim } : { host: attempt.host };
}

/**
 * Batches waiting for approval, each with the copy that replaced it, if one did (its
 * report then says so).
 */
async function awaitingBatches(
  journal: JournalBatches & JournalReports & JournalApproval & JournalGateway,
  folders: Folders,
  options: {
    hintFlags: string;
    language: Language;
    /** The waiting batches under four eyes weighed this pass; the others are weighed here. */
    fourEyes: { config: Config; weighed: Map<number, Weighing>; now: number };
  },
): Promise<BatchFacts['awaitingApproval'][number][]> {
  const awaiting = [];
  for (const batch of await journal.batchesIn('awaiting-approval')) {
    const replaced = await replacementOfBatch(journal, batch.id);
    if (replaced) await reportReplaced(journal, folders, batch, options);
    const eyes = options.fourEyes;
    const early = eyes.weighed.get(batch.id);
    const weighing =
      replaced || !(await underFourEyes(journal, batch.id, eyes.config.fourEyes))
        ? undefined
        : early
          ? { ...early, said: pickedAgain(early.said, folders, batch, options.hintFlags) }
          : await weighApprovals(journal, folders, batch, eyes.config, eyes.now, options.hintFlags);
    if (weighing && !weighing.released)
      await reportWeighing(journal, folders, batch, weighing, options);
    awaiting.push({
      ...batch,
      ...(replaced ? { replacedBy: replaced.copy } : {}),
      ...(weighing && !weighing.released
        ? { fourEyes: [weighing.said, ...weighing.refusals] }
        : {}),
    });
  }
  return awaiting;
}

/**
 * A weighing's words as its file's command now picks it: weighed before this pass took in
 * its files, it did not know of a file of its name that arrived since.
 */
function pickedAgain(said: Said, folders: Folders, batch: BatchRecord, hintFlags: string): Said {
  if (batch.awaitingName === null) return said;
  if (said.code !== 'fourEyesWaits' && said.code !== 'fourEyesChanged') return said;
  return {
    ...said,
    hintFlags: waitingCommandFlags(folders, batch.awaitingName, batch.id, hintFlags),
  };
}

/** A waiting file's report, written again when what four eyes says of it changed. */
async function reportWeighing(
  journal: JournalBatches & JournalReports & JournalGateway,
  folders: Folders,
  batch: BatchRecord,
  weighing: Weighing,
  options: { hintFlags: string; language: Language },
): Promise<void> {
  if (batch.awaitingName === null) return;
  const file = join(folders.awaiting, batch.awaitingName);
  const words = CATALOGS[options.language];
  const sent = await toBeSent(journal, batch.id);
  const code: Said = {
    code: 'fourEyesCode',
    approvalCode: weighing.code,
    batchId: batch.id,
    ...sent,
  };
  const lines = [weighing.said, ...weighing.refusals];
  // A report lists every payee, maybe a million: written again only when its head would change.
  const head = readHead(`${file}.report.txt`);
  if ([code, ...lines].every((said) => head.includes(say(words, said)))) return;
  await writeReport(journal, file, batch.id, { ...options, fourEyes: { code, lines } });
}

/** The first bytes of a report, where what four eyes says of it is written. */
function readHead(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(65_536);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Who dropped a file, as its owner's name, recorded once in the batch's audit. */
async function recordDropper(
  journal: JournalBatches,
  batchId: number,
  uid: number | undefined,
): Promise<void> {
  if (uid === undefined) return;
  const events = await journal.batchEvents(batchId);
  if (events.some((event) => event.event === 'dropped')) return;
  await journal.recordBatchEvent(batchId, 'dropped', userNameOf(uid), {
    code: 'eventDropped',
    uid,
  });
}

/**
 * Batches with rows not final, by their state (an index, not a read of every payout),
 * oldest first, with whether `payouts retry` made payouts of theirs; those `handled` (their
 * files summed up already) left out unread, as the plan leaves them out.
 */
async function openBatches(
  journal: JournalBatches & JournalRetries & JournalReports,
  handled: ReadonlySet<number>,
): Promise<BatchFacts['open'][number][]> {
  const open: BatchFacts['open'][number][] = [];
  for (const state of ['open', 'underfunded', 'held'] as const) {
    for (const batch of await journal.batchesIn(state)) {
      if (handled.has(batch.id)) continue;
      const retried = await journal.hasRetries(batch.id);
      open.push({
        id: batch.id,
        fileName: batch.fileName,
        retried,
        waitingRetry:
          !retried &&
          state === 'open' &&
          (await journal.holdsOfBatch(batch.id)).some((hold) => hold.reason === 'failed-before'),
        problems: batch.problems,
      });
    }
  }
  return open.sort((a, b) => a.id - b.id);
}

/** Does what the plan says of a file of processing/, and says what became of it. */
async function applyToFile(
  action: ReadAction,
  {
    journal,
    folders,
    config,
    hintFlags,
    remember,
  }: {
    journal: IntakeJournal;
    folders: Folders;
    config: Config;
    hintFlags: string;
    /** Notes the file as journaled as this batch, for this process's later passes. */
    remember: (batchId: number) => void;
  },
): Promise<FileSummary | undefined> {
  const { file } = action;
  switch (action.kind) {
    case 'resume': {
      remember(action.batchId);
      // A resumed file's problems (a control total that does not match, say) are said again
      // on every run while they hold it back. The balance check adds its own reason each pass.
      const batch = await journal.batch(action.batchId);
      return summaryOf(
        file,
        action.batchId,
        batch,
        ['resumed', 'resumed'],
        [...(batch?.problems ?? [])],
      );
    }
    case 'await-approval':
      // Listed below with every file waiting for a person's approval.
      if (
        !(await awaitApproval(journal, folders, file, action.batchId, {
          hintFlags,
          language: config.language ?? 'en',
        })) &&
        action.remember
      )
        remember(action.batchId);
      return undefined;
    case 'wait':
      // Its rows journaled so far stay unsent (the batch is still admitting) until it is read whole.
      return {
        ...(await summarise(
          journal,
          file,
          action.batchId,
          ['waiting', 'not read to its end: it stays in processing/ and is read again next run'],
          [action.why],
        )),
        fileNeedsAPerson: true,
      };
    case 'reject': {
      // Its reason file is read by whoever dropped it: in their language.
      const words = CATALOGS[config.language ?? 'en'];
      reject(
        file,
        folders.rejected,
        action.problems.map((problem) => say(words, problem)),
      );
      return {
        ...(await summarise(
          journal,
          file,
          action.batchId,
          ['unusable', 'cannot be used: moved to rejected/'],
          action.problems,
        )),
        fileNeedsAPerson: true,
      };
    }
    case 'journal':
      remember(action.batchId);
      return await summarise(
        journal,
        file,
        action.batchId,
        action.state === 'held' ? ['held', 'held: nothing sent'] : ['taken', 'journaled'],
        action.problems,
      );
    case 'forget':
      return undefined;
  }
}

/**
 * A file that failed to be read: moved to rejected/ with why, or, when even that fails,
 * left where it is with why. Either way it needs a person, and the pass goes on.
 */
async function setAside(
  journal: JournalBatches,
  folders: Folders,
  file: string,
  error: unknown,
  config: Config,
): Promise<FileSummary> {
  const why = cannotReadSaid(error);
  let moved: string | undefined;
  let notMoved = 'no free name in rejected/';
  try {
    // Its reason file is read by whoever dropped it: in their language.
    moved = reject(file, folders.rejected, [say(CATALOGS[config.language ?? 'en'], why)]);
  } catch (moveError) {
    notMoved = systemCodeOf(moveError) ?? (moveError as Error).message;
  }
  const where = basename(dirname(file));
  return {
    ...(await summarise(
      journal,
      file,
      undefined,
      [
        'unusable',
        moved
          ? 'cannot be read: moved to rejected/'
          : `cannot be read, nor moved to rejected/ (${notMoved}): left in ${where}/`,
      ],
      [why],
    )),
    fileNeedsAPerson: true,
  };
}

async function summarise(
  journal: JournalBatches,
  file: string,
  batchId: number | undefined,
  said: [FileState, string],
  problems: Said[],
): Promise<FileSummary> {
  const batch = batchId === undefined ? undefined : await journal.batch(batchId);
  return summaryOf(file, batchId, batch, said, problems);
}

function summaryOf(
  file: string,
  batchId: number | undefined,
  batch: BatchRecord | undefined,
  [state, outcome]: [FileState, string],
  problems: Said[],
): FileSummary {
  return {
    file: basename(file),
    batchId: batchId ?? null,
    state,
    outcome,
    // Counted once, when the pass ends (finishFile): what the pass did changes them.
    rows: {},
    cents: {},
    totalCents: batch?.totalCents ?? 0,
    result: null,
    problems,
    fileNeedsAPerson: false,
  };
}
