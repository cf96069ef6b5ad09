/**
 * One pass over the home folder, shared by `payouts run` (once) and `payouts watch`
 * (again and again): take the files that are ready from the inbox into `processing/`,
 * journal them, check the balance, send what is queued exactly once, resolve unclear
 * answers, follow pending payouts for a while, then write each file's result and
 * archive the files whose rows are all final.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { basename, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { systemCodeOf } from '../errors.js';
import { commandTarget, givenName } from '../csv/given-name.js';
import { planFunding, type BalanceCheck } from '../engine/balance.js';
import {
  resolveUnknown,
  sendQueued,
  type EngineDeps,
  type EngineJournal,
  type EngineOptions,
} from '../engine/engine.js';
import { checkFirstSends } from '../engine/first-send.js';
import { Settling, followPending, type Doorbell } from '../engine/follow.js';
import type { PollPolicy } from '../engine/policy.js';
import type { GatewayPool } from '../engine/pool.js';
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError, needsTheOperator } from '../gateway/errors.js';
import type { FileState } from '../messages/file-state.js';
import { BATCH_STATES } from '../journal/batch-states.js';
import { batchesGivenAs } from '../inbox/holds.js';
import { groupId, moveInto, type Folders } from '../inbox/folders.js';
import type { WorkerClaims } from '../inbox/lock.js';
import {
  describePendingTooLong,
  pendingTooLong,
  type PendingTooLong,
} from '../inbox/pending-alert.js';
import {
  heldRowSaid,
  newBatchRelease,
  OWN_HOLDS,
  payeesOf,
  readingsOf,
} from '../journal/answers.js';
import { refuseClockBehind } from '../journal/clock-behind.js';
import {
  type JournalApproval,
  type JournalBatches,
  type JournalGateway,
  type JournalReports,
  type JournalStore,
  type RowTotals,
  type BatchRecord,
  type WorkClaim,
  writeJournalView,
} from '../journal/journal.js';
import { behindTheGateway } from '../journal/open-for-work.js';
import { isFinalOutcome, NEEDS_A_PERSON, UNFINISHED, type RowState } from '../journal/states.js';
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';
import { withHintFlags } from '../messages/hint-flags.js';
import { archiveFileName, resultFileNames } from '../results/names.js';
import { writeResultFile } from '../results/result-file.js';
import { applyIntake, type IntakeJournal } from './apply-intake.js';
import { engineFor } from './engine-for.js';
import type { Clock } from '../runtime/clock.js';
import { failpoint } from '../runtime/failpoint.js';

export interface FileSummary {
  file: string;
  batchId: number | null;
  state: FileState;
  outcome: string;
  rows: RowTotals['rows'];
  /** Cents of the rows in each state. */
  cents: RowTotals['cents'];
  totalCents: number;
  /** Where its result file was written, when it has one. */
  result: string | null;
  /** Why it waits for a person, as values: said in the reader's language, English in --json. */
  problems: Said[];
  /** The file itself needs a person (unusable, or its reading cut short and the file gone). */
  fileNeedsAPerson: boolean;
  /** The file could not be taken in yet: run again later. */
  fileWaits?: boolean;
  /**
   * Its batch is open and its file not in processing/ (archived before `payouts retry`
   * opened it again, or moved away): followed, and its result written, from the journal.
   */
  fileElsewhere?: boolean;
  /** Payouts pending longer than pendingAlertAfter: a person must look (exit 2). */
  pendingTooLong?: PendingTooLong;
}

export interface PassOptions {
  /** How long to follow pending payouts after sending (0: not at all). */
  followMs: number;
  /** Stop: no new file is read and no new payout sent; what is in flight is journaled. */
  signal: AbortSignal;
  pollPolicy: PollPolicy;
  postbackUrl?: string;
  doorbell?: Doorbell;
  /** Whether an inbox file may be taken now (the daemon waits for a file to settle). */
  isReady?: (path: string) => boolean;
  /** State kept between the passes of one process. */
  memory?: PassMemory;
  /**
   * What this process takes for itself beside other hosts (an inbox file, a batch to
   * finish); absent, it is the home's only worker and takes everything.
   */
  claims?: WorkerClaims;
  /** The journal's clock, which the engine reads and sleeps on (tests move both). */
  clock: Clock;
  /** The daemon's gateway pool, shared by its passes and its following; absent, the pass's own. */
  pool?: GatewayPool;
  /** Global flags the commands in hints need (` --config "…"`), '' by default. */
  hintFlags?: string;
  /**
   * A person chose recovery (`run --recover`): a journal found behind the gateway starts
   * recovering rather than stopping the command.
   */
  recover?: boolean;
  note: (text: string) => void;
}

/** What a long-running process remembers between passes, to skip work already done. */
export interface PassMemory {
  /**
   * Files of processing/ already journaled by this process, by path, with their batch and
   * the size and time they had: a file that changes since is read again.
   */
  seen: Map<string, { batchId: number; size: number; mtimeMs: number }>;
  /** The row totals each file's result was last written with, by batch. */
  written: Map<number, string>;
  /** When unknown rows were last looked up: a daemon's frequent passes do not repeat it. */
  resolvedAt: number;
  /** Status words we do not know, already told (once per process). */
  warned: Set<string>;
  /** What following learned of each batch's settle time (see followPending). */
  settling: Settling;
  /**
   * Each open file's summary as this process last finished it, by batch, with what it was
   * made of: a file nothing moved for since is not finished again (see finishFile).
   */
  finished: Map<number, { made: string; summary: FileSummary }>;
}

/** A process's memory before its first pass: nothing seen, written or learned yet. */
export function newPassMemory(): PassMemory {
  return {
    seen: new Map(),
    written: new Map(),
    resolvedAt: 0,
    warned: new Set(),
    settling: new Settling(),
    finished: new Map(),
  };
}

export interface PassReport {
  /** The files this pass took or looked at, with what became of their rows. */
  files: FileSummary[];
  stopped: string | undefined;
  /** The pass failed (credentials refused, not the gateway's address): exit 1. */
  failed: boolean;
}

/**
 * How often unknown rows are looked up while a process follows (the length of a round
 * of following), and at most how often a daemon's passes look them up: every 15 s, or
 * twice per grace period when that is shorter (a re-send needs two lookups after it).
 */
function lookupEveryMs(graceMs: number): number {
  return Math.min(15_000, Math.max(1_000, graceMs / 2));
}
const MAX_SETTLE_ROUNDS = 10_000;

/** What a pass uses: intake, the engine's loops, and the journal's own facts (its clock, its loss). */
export type PassJournal = IntakeJournal & EngineJournal & JournalStore;

export async function runPass(
  journal: PassJournal,
  gateway: GatewayClient,
  folders: Folders,
  config: Config,
  options: PassOptions,
): Promise<PassReport> {
  const now = () => options.clock.now();
  // Each pass, not only each opening: a daemon's clock may step back while it runs.
  await refuseClockBehind(journal, now(), config);
  const summaries = await applyIntake(journal, folders, config, options);
  const { deps, engine } = engineFor(journal, gateway, config, options);
  let stopped: string | undefined;
  let failed = false;
  const toFund = await journal.queuedByBatch();
  if (toFund.length > 0) {
    const balance = await readBalance(gateway, config.balanceCheck, options.signal);
    if (options.signal.aborted) {
      // Stopped before sending (while files were read, or the balance): nothing is funded
      // or held on an answer cut short; the rows stay queued for the next pass.
      stopped = 'stopped before sending: nothing was sent';
    } else if (balance.outage && config.balanceCheck === 'block') {
      // Nobody needs to top anything up: the batches stay as they are, their rows queued,
      // and the next pass reads the balance again. Nothing else can reach the gateway now.
      stopped = `the gateway could not be reached to read the balance (${balance.error}): nothing was sent; run again later`;
    } else {
      await fundBatches(toFund, balance, journal, config, summaries, options.note);
    }
  }
  if (!stopped) {
    const check = await checkFirstSends(deps);
    if (check.kind === 'behind') {
      await behindTheGateway(journal, check, options);
    } else if (check.kind === 'unchecked') {
      stopped = check.why;
      failed = check.failed;
    }
  }
  const resolveDue = () => {
    const memory = options.memory;
    if (!memory) return true;
    if (now() - memory.resolvedAt < lookupEveryMs(engine.graceMs)) {
      return false;
    }
    memory.resolvedAt = now();
    return true;
  };
  const steps = stopped
    ? []
    : resolveDue()
      ? [resolveUnknown, sendQueued, resolveUnknown]
      : [sendQueued];
  for (const step of steps) {
    const report = await step(deps, engine);
    stopped = report.stopped;
    failed = report.failed;
    if (stopped) break;
  }
  // Each file's summary as written before following, if it was.
  let ahead: FileSummary[] | undefined;
  let followed = false;
  if (!stopped && options.followMs > 0) {
    const until = now() + options.followMs;
    const toFollow = await journal.countsByState(['unknown', 'sending', 'pending']);
    let followUntil = until;
    if (toFollow.unknown || toFollow.sending || toFollow.pending) {
      // Each result written before following, so it is there to read while the run waits,
      // and that write's time kept back from following: writing them again at the end
      // takes about as long, and the run ends by its timeout whatever the file's size.
      const writing = performance.now();
      ahead = await finishFiles(journal, folders, config, summaries, options);
      followUntil = until - (performance.now() - writing);
    }
    if (now() < followUntil) {
      const report = await settle(
        deps,
        engine,
        followUntil,
        resolveDue,
        options.memory ?? { warned: new Set(), settling: new Settling() },
        options.note,
      );
      stopped = report.stopped;
      failed = report.failed;
      followed = true;
    }
  }
  // Not followed after all (no time was left): what was written ahead is the result.
  const files =
    ahead && !followed
      ? ahead
      : await finishFiles(journal, folders, config, summaries, options, ahead);
  if (config.sharedGroup !== null) shareView(folders, config.sharedGroup, options.note);
  return { files, stopped, failed };
}

/** Whether a file's rows are all final (its file archived, or left where it was). */
const everyRowFinal = (summary: FileSummary) => ['archived', 'final'].includes(summary.state);

/** Each file's result written, its file archived once every row is final: its summary now. */
async function finishFiles(
  journal: PassJournal,
  folders: Folders,
  config: Config,
  summaries: readonly FileSummary[],
  options: PassOptions,
  ahead?: readonly FileSummary[],
): Promise<FileSummary[]> {
  const files: FileSummary[] = [];
  const memory = options.memory;
  // The batches of a file's name change its summary by their states: read once a pass, not
  // once a file. Done batches left out, so years of them are not read: one reopened comes
  // back into the list, and one finishing leaves it, either way a change.
  const unfinished = memory && summaries.length > 0 ? await unfinishedBatches(journal) : undefined;
  const open = new Set(summaries.flatMap((summary) => summary.batchId ?? []));
  for (const batchId of memory?.finished.keys() ?? []) {
    if (!open.has(batchId)) memory?.finished.delete(batchId);
  }
  for (const [index, summary] of summaries.entries()) {
    // Archived, or final, before following: its file and rows are where they were left.
    const before = ahead?.[index];
    if (before && everyRowFinal(before)) {
      files.push(before);
      continue;
    }
    files.push(
      await finishFile(
        journal,
        folders,
        config,
        summary,
        memory && unfinished !== undefined ? { ...memory, unfinished } : undefined,
        options.clock.now(),
        options.hintFlags ?? '',
        options.claims,
        options.signal,
      ),
    );
  }
  return files;
}

/**
 * What the group's `validate` weighs files against, written when the journal changed: a
 * view it cannot write leaves the group the one before, which is said, and pays nobody less.
 */
function shareView(folders: Folders, sharedGroup: string, note: (text: string) => void): void {
  try {
    writeJournalView(folders.journal, folders.view, groupId(sharedGroup));
  } catch (error) {
    note(
      `the journal's view for the group ${sharedGroup} could not be written to ${folders.view} (${systemCodeOf(error) ?? (error as Error).message}): payouts validate, run by its members, weighs files against the view before, until a run writes it`,
    );
  }
}

/**
 * Follows pending payouts until `until`, and between rounds resolves rows still unknown
 * (their re-send may fall due while following): what is left is the next pass's.
 */
async function settle(
  deps: EngineDeps<EngineJournal & JournalReports>,
  options: EngineOptions & { doorbell?: Doorbell },
  until: number,
  resolveDue: () => boolean,
  memory: Pick<PassMemory, 'warned' | 'settling'>,
  note: (text: string) => void,
): Promise<{ stopped: string | undefined; failed: boolean }> {
  const onUnknownStatus = unknownStatusNote(note);
  for (let round = 0; round < MAX_SETTLE_ROUNDS && deps.clock.now() < until; round++) {
    const roundEnd = Math.min(until, deps.clock.now() + lookupEveryMs(options.graceMs));
    const followed = await followPending(deps, {
      ...options,
      until: roundEnd,
      onUnknownStatus,
      warned: memory.warned,
      settling: memory.settling,
    });
    if (followed.stopped) return followed;
    const counts = await deps.journal.countsByState(['unknown', 'sending', 'pending']);
    if (!counts.unknown && !counts.sending && !counts.pending) break;
    if ((counts.unknown || counts.sending) && resolveDue()) {
      const resolved = await resolveUnknown(deps, options);
      if (resolved.stopped) return resolved;
      const sent = await sendQueued(deps, options);
      if (sent.stopped) return sent;
    }
    // The rest of the round, when following ended it early (nothing due to poll): the
    // next lookups wait for the next round, never a busy loop.
    await deps.clock.sleep(roundEnd - deps.clock.now(), deps.pool.stop);
  }
  return { stopped: undefined, failed: false };
}

/** Says a status word payouts does not know, the first time following sees it. */
function unknownStatusNote(note: (text: string) => void) {
  return (word: string, orderId: string) =>
    note(
      `the gateway answered status "${word}" (first seen on ${orderId}), which payouts does not know: kept verbatim, and the row stays pending`,
    );
}

/**
 * A daemon's following, beside its file passes rather than taking turns with them: pending
 * payouts polled as they fall due, or as a postback brings them forward, until stopped.
 * Taking turns, hundreds of open files took seconds of journal round trips each pass, and
 * payouts the gateway had settled waited for following's next slice, for hours (issue 31).
 * Unknown rows stay the passes' to look up, and `engine.doorbell` wakes it when there is
 * nothing to poll.
 */
export async function followAlongside(
  deps: EngineDeps<EngineJournal>,
  engine: EngineOptions & { doorbell: Doorbell },
  memory: Pick<PassMemory, 'warned' | 'settling'>,
  idleMs: number,
  note: (text: string) => void,
  onMoved: () => void,
): Promise<{ stopped: string | undefined; failed: boolean }> {
  const onUnknownStatus = unknownStatusNote(note);
  // Until stopped: a daemon's life is bounded by its signals.
  while (!deps.pool.stop.aborted) {
    const until = deps.clock.now() + idleMs;
    const wake = AbortSignal.any([deps.pool.stop, engine.doorbell.signal]);
    const followed = await followPending(deps, {
      ...engine,
      until,
      onUnknownStatus,
      warned: memory.warned,
      settling: memory.settling,
      onMoved,
    });
    if (followed.failed) return followed;
    // Ended early, nothing pending: until a pass sends more, or a postback rings.
    await deps.clock.sleep(until - deps.clock.now(), wake);
  }
  return { stopped: undefined, failed: false };
}

/** Each batch not done, from the index on batch states. */
async function unfinishedBatches(journal: JournalBatches): Promise<BatchRecord[]> {
  const batches: BatchRecord[] = [];
  for (const state of BATCH_STATES) {
    if (state !== 'done') batches.push(...(await journal.batchesIn(state)));
  }
  return batches;
}

/**
 * What a file's summary reads beyond its own batch, rows and overdue alert, so that it is
 * made again when any of it moves and only then: the states of the batches of its name
 * (whether another waits beside it, the earlier one it repeats, those it freezes), of the
 * copies that closed its rows (one waiting for approval keeps it open), and of the payouts
 * its listed held rows repeat (a row says that payout's state now).
 */
async function readBeyondItsBatch(
  journal: JournalBatches & JournalReports & JournalApproval,
  batch: BatchRecord,
  totals: RowTotals,
  unfinished: readonly BatchRecord[],
): Promise<unknown[]> {
  const name = givenName(basename(batch.fileName));
  const ofItsName = unfinished
    .filter(
      (other) =>
        other.id !== batch.id &&
        (givenName(basename(other.fileName)) === name ||
          (other.nameKey !== null && other.nameKey === batch.nameKey)),
    )
    .map((other) => [other.id, other.state]);
  const copies = totals.rows.superseded
    ? (await journal.supersededBy(batch.id)).map((copy) => [copy.id, copy.state])
    : [];
  const repeated = totals.rows.held
    ? (await journal.ownHeldRowsOfBatch(batch.id, LISTED_HELD_ROWS)).map((row) => [
        row.line,
        row.repeats?.state ?? null,
      ])
    : [];
  return [ofItsName, copies, repeated];
}

/**
 * Counts a handled file's rows, writes its result (when they changed since this process
 * last wrote it) and, when every row is final, archives it (its batch done). A file that
 * could not be read has no rows and no result.
 */
async function finishFile(
  journal: JournalBatches & JournalReports & JournalApproval & JournalGateway,
  folders: Folders,
  config: Config,
  summary: FileSummary,
  memory: (PassMemory & { unfinished: readonly BatchRecord[] }) | undefined,
  now: number,
  hintFlags: string,
  claims: WorkerClaims | undefined,
  stop: AbortSignal,
): Promise<FileSummary> {
  const { batchId } = summary;
  // An open batch as read once this pass (a round trip less a file, hundreds of them open).
  const batch =
    batchId === null
      ? undefined
      : (memory?.unfinished.find((unfinished) => unfinished.id === batchId) ??
        (await journal.batch(batchId)));
  // No batch: the file could not even be read, so it has no rows to count.
  if (!batch) return summary;
  const totals = await journal.rowTotalsOfBatch(batch.id);
  // No row pending, none pending too long: no query.
  const overdue = totals.rows.pending
    ? await pendingTooLong(journal, batch.id, config.pendingAlertAfter, now)
    : undefined;
  // Nothing it is made of moved since this process finished it: its result is written and
  // nothing is to move, so no claim and no reads more (a hundred open files, every pass).
  const beyond = memory ? await readBeyondItsBatch(journal, batch, totals, memory.unfinished) : [];
  const made = JSON.stringify([summary, batch, totals, overdue ?? null, beyond]);
  const last = memory?.finished.get(batch.id);
  if (
    last?.made === made &&
    last.summary.result !== null &&
    existsSync(last.summary.result) &&
    existsSync(join(folders.processing, summary.file))
  ) {
    return last.summary;
  }
  memory?.finished.delete(batch.id);
  // The journal's words name commands with no flags: they take this run's.
  const held = await whyHeld(journal, batch.id, hintFlags);
  summary = {
    ...summary,
    problems: [...summary.problems, ...held].map((said) => withHintFlags(said, hintFlags)),
  };
  if (overdue) {
    summary = {
      ...summary,
      pendingTooLong: overdue,
      problems: [...summary.problems, describePendingTooLong(overdue, hintFlags)],
    };
  }
  // One host finishes a batch at a time: its result written and its file moved once.
  const claim: WorkClaim = { kind: 'batch', batchId: batch.id };
  if (claims && !(await claims.take(claim)).taken) return { ...summary, ...totals };
  let finished: FileSummary;
  try {
    finished = await finishClaimed(journal, folders, config, summary, batch, totals, {
      memory,
      stop,
      hintFlags,
    });
  } finally {
    await claims?.release(claim);
  }
  // Still open, its result written: the same again until something of it moves.
  const open = !everyRowFinal(finished) && !finished.fileNeedsAPerson;
  if (open && finished.result !== null) {
    memory?.finished.set(batch.id, { made, summary: finished });
  }
  return finished;
}

/** finishFile, once this process has the batch to itself. */
async function finishClaimed(
  journal: JournalBatches & JournalReports & JournalApproval & JournalGateway,
  folders: Folders,
  config: Config,
  summary: FileSummary,
  batch: BatchRecord,
  totals: RowTotals,
  {
    memory,
    stop,
    hintFlags,
  }: { memory: PassMemory | undefined; stop: AbortSignal; hintFlags: string },
): Promise<FileSummary> {
  const path = join(folders.processing, summary.file);
  const inProcessing = existsSync(path);
  // Stopped: the result of a large batch would hold the stop for as long as it takes to
  // write; the next pass writes it from the journal, and archives the file.
  if (summary.fileNeedsAPerson || (!inProcessing && !summary.fileElsewhere) || stop.aborted) {
    return { ...summary, ...totals };
  }
  // Named once, with the day the batch arrived: next week's file of the same name gets
  // its own result and archive, and this one's stay as they are.
  const resultName = await journal.resultName(
    batch.id,
    resultFileNames(summary.file, batch.id, batch.receivedAt),
  );
  const result = join(folders.results, resultName);
  const fingerprint = JSON.stringify(totals);
  if (memory?.written.get(batch.id) !== fingerprint || !existsSync(result)) {
    try {
      const written = await writeResultFile(
        journal,
        batch,
        result,
        {
          dialect: config.resultDialect,
          timeZone: config.timeZone,
          language: config.language ?? 'en',
          hintFlags,
        },
        stop,
      );
      if (!written) return { ...summary, ...totals };
    } catch (error) {
      // The payouts are journaled whatever happens here; the file waits in processing/
      // and its result is written again by the next pass.
      const why = systemCodeOf(error) ?? (error as Error).message;
      return {
        ...summary,
        ...totals,
        problems: [...summary.problems, { code: 'resultNotWritten', path: result, why }],
        fileNeedsAPerson: true,
      };
    }
    memory?.written.set(batch.id, fingerprint);
  }
  // A held line (an orderId of another file) is closed for good: it never holds its file
  // back from the archive. Held payouts do, until a person releases or refuses them.
  const finished =
    Object.keys(totals.rows).every(isFinalOutcome) &&
    (await journal.holdsOfBatch(batch.id)).length === 0 &&
    !(await journal.supersededBy(batch.id)).some((copy) => copy.state === 'awaiting-approval');
  let { outcome, state } = summary;
  if (finished && !inProcessing) {
    state = 'final';
    // Its file is archived already (reopened by a retry), or not ours to move.
    await journal.setBatchState(batch.id, 'done');
    memory?.written.delete(batch.id);
    outcome = `${outcome}; every row final`;
  } else if (finished) {
    failpoint('archiving-file');
    const archived = moveInto(
      path,
      folders.archive,
      `batch ${batch.id}`,
      archiveFileName(resultName, summary.file),
    );
    if (archived) {
      await journal.setBatchState(batch.id, 'done');
      memory?.seen.delete(path);
      memory?.written.delete(batch.id);
      outcome = `${outcome}; every row final: archived as ${basename(archived)}`;
      state = 'archived';
    } else {
      state = 'final';
      outcome = `${outcome}; every row final, but it could not be moved to archive/: it stays in processing/`;
    }
  }
  return { ...summary, ...totals, state, outcome, result };
}

/** Held rows a summary lists one by one; the result file has them all. */
const LISTED_HELD_ROWS = 20;

/**
 * Why a batch's rows are held by the rules on who is paid, a sentence per reason, so the
 * summary says what a person must decide, then each row held by itself (up to
 * LISTED_HELD_ROWS: the result file has every row's own words).
 */
async function whyHeld(
  journal: JournalBatches & JournalReports & JournalApproval,
  batchId: number,
  hintFlags: string,
): Promise<Said[]> {
  const notes: Said[] = [];
  // A row's own words (`example`): the journal's value, or its English where it kept none.
  const wordsOf = (said: Said | null, message: string | null): Said =>
    said ?? { code: 'english', text: message ?? '' };
  // Commands name the file as the accountant did, and pick its batch when that name is shared.
  const batch = await journal.batch(batchId);
  const fileName = batch?.fileName ?? '';
  const others = (await batchesGivenAs(journal, fileName)).filter(
    (other) => other.id !== batchId && !['done', 'refused', 'unusable'].includes(other.state),
  );
  const named = commandTarget(fileName, batchId, hintFlags, others.length > 0);
  const holds = await journal.holdsOfBatch(batchId);
  let sameName: { batchId: number; rows: number } | undefined;
  for (const { reason, rows, cents, message, said } of holds) {
    const example = wordsOf(said, message);
    if (reason === 'same-name' && said?.code === 'heldSameName') {
      const { file, batchId: earlier, at, repeats, moreRepeats } = said;
      notes.push({
        code: 'namedAsEarlier',
        file,
        batchId: earlier,
        at,
        ...(repeats ? { repeats } : {}),
        ...(moreRepeats ? { moreRepeats } : {}),
      });
      sameName = { batchId: earlier, rows: (await journal.batch(earlier))?.valid ?? 0 };
    } else if ((reason === 'same-name' || reason === 'copy-waiting') && message) {
      notes.push(example);
    }
    if (reason === 'identical') notes.push({ code: 'rowsRepeatInFile', rows, cents, example });
    if (reason === 'changes-paid' || reason === 'changes-payee')
      notes.push({ code: 'rowsChangePaid', rows, example });
    if (reason === 'failed-before') {
      notes.push({ code: 'rowsRepeatFailed', rows, cents, file: named.file, hintFlags, example });
    }
  }
  const duplicates = holds.find((hold) => hold.reason === 'duplicate');
  if (duplicates && !sameName) {
    // A reference held whatever its age: the summary names the payment it repeats.
    if (duplicates.said?.code === 'heldSameReference') notes.push(duplicates.said);
    notes.push({ code: 'rowsRepeatOtherFile', rows: duplicates.rows, cents: duplicates.cents });
  }
  if (duplicates || sameName) {
    const heldRows = await journal.heldRowsOfBatch(batchId);
    const { free, repeating } = newBatchRelease(heldRows, undefined);
    notes.push(
      ...readingsOf({
        ...named,
        fresh: payeesOf(free),
        repeating,
        ...(sameName ? { sameName } : {}),
      }),
    );
    if (batch?.state === 'awaiting-approval') notes.push({ code: 'answerApproves' });
  }
  for (const frozen of await journal.frozenFor(batchId)) {
    const { batchId: frozenId, fileName: file, rows, cents } = frozen;
    notes.push({
      code: 'copyFreezes',
      file: givenName(file),
      batchId: frozenId,
      rows,
      cents,
      newFile: named.file,
      hintFlags: named.hintFlags,
    });
  }
  // The first of them and their count: identical rows of one payee may be a million.
  const own = holds.reduce(
    (rows, hold) => rows + (OWN_HOLDS.includes(hold.reason) ? hold.rows : 0),
    0,
  );
  notes.push(...(await journal.ownHeldRowsOfBatch(batchId, LISTED_HELD_ROWS)).map(heldRowSaid));
  if (own > LISTED_HELD_ROWS) notes.push({ code: 'heldRowsMore', rows: own - LISTED_HELD_ROWS });
  const lines = await journal.linesOfBatch(batchId, ['held'], 1);
  if (lines.count > 0) {
    notes.push({
      code: 'orderIdsJournaled',
      rows: lines.count,
      example: wordsOf(lines.first[0]?.said ?? null, lines.first[0]?.message ?? null),
    });
  }
  return notes;
}

/**
 * A pass's exit code from its files: 2 when a row or file needs a person, 3 when only time
 * does (stopped, waiting, pending), else 0 (docs/row-states.md).
 */
export function exitCodeOf(files: readonly FileSummary[], stopped: string | undefined): number {
  const states = files.flatMap((file) => Object.keys(file.rows));
  const needsAPerson =
    files.some((file) => file.fileNeedsAPerson || file.pendingTooLong) ||
    states.some((state) => NEEDS_A_PERSON.includes(state as RowState));
  if (needsAPerson) return 2;
  if (
    stopped ||
    files.some((file) => file.fileWaits) ||
    states.some((state) => UNFINISHED.includes(state as RowState))
  ) {
    return 3;
  }
  return 0;
}

/** Gateway errors that say it could not be reached or did not answer in time: an outage. */
const OUTAGE_KINDS: ReadonlySet<string> = new Set(['unavailable', 'ambiguous', 'rate-limited']);

/**
 * The balance in cents, or why it could not be read, and whether that was an outage (run
 * again later) rather than an odd answer; a refused token or a wrong address ends the run.
 */
export async function readBalance(
  gateway: GatewayClient,
  check: BalanceCheck,
  signal?: AbortSignal,
): Promise<{ cents: number | undefined; error?: string; outage?: boolean }> {
  if (check === 'off') return { cents: undefined };
  try {
    // A stop ends the read at once, not after the request's whole time-out.
    return { cents: (await gateway.getBalance(signal ? { signal } : undefined)).balance };
  } catch (error) {
    if (!(error instanceof GatewayError) || needsTheOperator(error)) throw error;
    return {
      cents: undefined,
      error: `${error.kind}: ${error.message}`,
      outage: OUTAGE_KINDS.has(error.kind),
    };
  }
}

/** Opens the batches the balance covers, oldest first, and holds the others (`balanceCheck`). */
async function fundBatches(
  toFund: Awaited<ReturnType<JournalBatches['queuedByBatch']>>,
  balance: { cents: number | undefined; error?: string },
  journal: JournalBatches,
  config: Pick<Config, 'balanceCheck' | 'feePerPayoutCents'>,
  summaries: FileSummary[],
  note: (text: string) => void,
): Promise<void> {
  const plan = planFunding(
    toFund,
    balance.cents,
    config.balanceCheck,
    balance.error,
    config.feePerPayoutCents,
  );
  for (const batchId of plan.open) {
    if ((await journal.batch(batchId))?.state === 'underfunded') await journal.fundBatch(batchId);
  }
  for (const { batchId, why } of plan.underfunded) {
    await journal.underfundBatch(batchId, why);
    const summary = summaries.find((candidate) => candidate.batchId === batchId);
    if (summary) {
      summary.state = 'held';
      summary.outcome =
        balance.cents === undefined
          ? 'held: the balance could not be read'
          : 'held: the balance does not cover it';
      summary.problems.push(why);
    }
  }
  for (const warning of plan.warnings) note(warning);
}
