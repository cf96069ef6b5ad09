/**
 * A file in `processing/` to a batch in the journal, streamed: its rows are journaled as
 * they are read, in a batch that stays `admitting` (nothing of it can be sent) until the
 * whole file has been read. Then the batch opens, or its rows are held: a file that is
 * damaged, over a limit or fails a control total is never half paid.
 */
import { existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { batchStem } from '../csv/order-id.js';
import { foldText, singleSpaced } from '../csv/fold.js';
import { readPayoutFile, type FileReport, type ReadOptions } from '../csv/reader.js';
import { mistakesSaid, toCashOutRequest, type Payout } from '../csv/row.js';
import type { CashOutRequest, PixKeyTypeName } from '../gateway/contract.js';
import { PayoutsError, systemCodeOf } from '../errors.js';
import { collectGarbage, WORK_BETWEEN_COLLECTIONS } from '../runtime/collect.js';
import type {
  BatchLine,
  JournalAdmission,
  JournalIntake,
  PayoutInput,
} from '../journal/journal.js';
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';

export type IngestResult =
  | { kind: 'open' | 'awaiting-approval' | 'held'; batchId: number; report: FileReport }
  /** No batch when the file could not even be read (empty, over the size limit). */
  | { kind: 'unusable'; batchId: number | undefined; report: FileReport }
  /** These very bytes were journaled before, as this batch: nothing is admitted again. */
  | { kind: 'same-file'; batchId: number }
  /** Another run moved the file on while this one looked: it is that run's now. */
  | { kind: 'gone' }
  /**
   * The temp folder could not hold the repeat keys of a big file: its reading stopped,
   * what was journaled of it waits unsent, and the file is read again next run.
   */
  | { kind: 'unfinished'; batchId: number | undefined; why: Said };

/** Why a file could not be opened or read (its permissions, a disk error). */
export function cannotReadSaid(error: unknown): Said {
  const systemCode = systemCodeOf(error) ?? (error as Error).message;
  return {
    code: 'cannotRead',
    systemCode,
    permission: systemCode === 'EACCES' || systemCode === 'EPERM',
  };
}

/**
 * Rows journaled per transaction: enough to spread a commit's wait for the disk, few enough
 * that a chunk's waiting rows live through at most one young collection (docs/benchmarks.md).
 */
const CHUNK_ROWS = 1_000;

/**
 * Repeat keys kept in memory while rows are journaled, fewer than a reading's MEMORY_KEYS:
 * the journal's cache and the waiting rows sit beside the tables (docs/benchmarks.md).
 */
const INGEST_MEMORY_KEYS = 1_000_000;

/**
 * A valid row waiting for its chunk's commit, its request made when admission reads it.
 * A class, not object literals: V8 makes a literal's objects in the old generation from
 * the moment one young collection finds nearly all of those made since the last
 * collection still alive (allocation-site pretenuring), as a chunk's waiting rows can be
 * just after a full collection; they then die there, a megabyte every young collection,
 * until the next full one. Objects a constructor makes are always made young.
 */
class WaitingPayout implements PayoutInput {
  readonly line: number;
  readonly identicalTo: number | undefined;
  readonly orderId: string;
  readonly valueCents: number;
  readonly pixKeyType: PixKeyTypeName;
  readonly pixKey: string;
  readonly cpfCnpj: string;
  readonly name: string;
  readonly email: string;
  readonly phone: string;
  readonly reference: string | undefined;

  constructor(payout: Payout) {
    this.line = payout.line;
    this.identicalTo = payout.identicalTo;
    this.orderId = payout.orderId;
    this.valueCents = payout.valueCents;
    this.pixKeyType = payout.pixKeyType;
    this.pixKey = payout.pixKey;
    this.cpfCnpj = payout.cpfCnpj;
    this.name = payout.name;
    this.email = payout.email;
    this.phone = payout.phone;
    this.reference = payout.reference;
  }

  /** Made at each read, for admission to use at once: a spread copy would not have it. */
  get request(): CashOutRequest {
    return toCashOutRequest(this);
  }
}

export interface IngestOptions extends ReadOptions {
  /** duplicateWindow, in ms. */
  duplicateWindow: number;
  /** sameNameNewBatchAfter, in ms. */
  sameNameNewBatchAfter: number | null;
  /** The journal's clock, now: a file first seen last changed before duplicateWindow is held. */
  now: number;
}

/**
 * Why a file first seen at `now` is held whole for its age, if it is: last year's export
 * dropped by mistake looks like this month's, and only a person can say it is due.
 */
export function oldFile(changedAt: number, now: number, duplicateWindow: number): Said | undefined {
  const ageMs = now - changedAt;
  return ageMs > duplicateWindow ? { code: 'fileOld', changedAt, ageMs } : undefined;
}

/**
 * `awaiting-approval`: a usable file waits for a person before anything of it is sent.
 * `arrived`: the file has just come from the inbox (not left in processing/ by a run).
 */
export async function ingestFile(
  path: string,
  journal: JournalIntake & JournalAdmission,
  options: IngestOptions,
  opensAs: 'open' | 'awaiting-approval' = 'open',
  arrived = true,
): Promise<IngestResult> {
  // The batch is found or made from the fingerprint the reader takes on its first pass.
  let batch: { kind: 'new' | 'resume' | 'same-file'; batchId: number } | undefined;
  const rules = { duplicateWindowMs: options.duplicateWindow };
  const batchId = (): number => {
    if (!batch) throw new Error('ingestFile: a row before the fingerprint');
    return batch.batchId;
  };
  // Compared after the read: a file that changed meanwhile was read half (still being written).
  const before = statSync(path, { throwIfNoEntry: false });
  let payouts: PayoutInput[] = [];
  let lines: BatchLine[] = [];
  // Rows handed over by the reader, and at the last collection.
  let read = 0;
  let collectedAt = 0;
  const flush = async (): Promise<void> => {
    if (payouts.length > 0) await journal.admitPayouts(batchId(), payouts, rules);
    if (lines.length > 0) await journal.recordLines(batchId(), lines);
    payouts = [];
    lines = [];
    if (read - collectedAt >= WORK_BETWEEN_COLLECTIONS) {
      collectGarbage();
      collectedAt = read;
    }
  };
  let report: FileReport;
  try {
    report = await readPayoutFile(
      path,
      { ...options, memoryKeys: options.memoryKeys ?? INGEST_MEMORY_KEYS },
      // A promise only when a chunk is written: a tick per row is measurable on a million rows.
      (row): Promise<void> | undefined => {
        read++;
        if (row.kind === 'valid') payouts.push(new WaitingPayout(row.payout));
        else if (row.kind === 'invalid') {
          const orderId = row.cells.orderId?.trim() || null;
          const written = (row.cells.valueCents ?? row.cells.amountReais ?? '').trim();
          const said = mistakesSaid(row.mistakes);
          lines.push({
            line: row.line,
            kind: 'invalid',
            orderId,
            column: row.mistakes[0].column,
            message: sayInEnglish(said),
            said,
            name: singleSpaced(row.cells.name ?? '') || null,
            valueCents: row.valueCents ?? null,
            valueWritten: row.valueCents === undefined ? written || null : null,
            cpfCnpj: row.cells.cpfCnpj?.trim() || null,
            pixKeyType: row.cells.pixKeyType?.trim() || null,
            pixKey: row.cells.pixKey?.trim() || null,
          });
        } else if (row.kind === 'skipped') {
          lines.push({
            line: row.line,
            kind: 'skipped',
            orderId: null,
            column: null,
            message: sayInEnglish(row.reason),
            said: row.reason,
          });
        }
        return payouts.length + lines.length >= CHUNK_ROWS ? flush() : undefined;
      },
      async (sha256) => {
        const name = basename(path);
        const found = await journal.batchForFile({
          name,
          nameKey: foldText(batchStem(name)),
          sha256,
          arrived,
        });
        batch = found;
        return found.kind === 'same-file'
          ? false
          : { batchNumber: found.nameNumber, home: found.orderIdHome };
      },
    );
  } catch (error) {
    // The machine's problem, not the file's: neither rejected nor called unreadable.
    if (error instanceof PayoutsError && error.code === 'temp-folder')
      return {
        kind: 'unfinished',
        batchId: batch?.batchId,
        why: { code: 'english', text: error.message },
      };
    throw error;
  }
  if (batch?.kind === 'same-file') return { kind: 'same-file', batchId: batch.batchId };
  if (!batch)
    return existsSync(path) ? { kind: 'unusable', batchId: undefined, report } : { kind: 'gone' };
  await flush();

  const after = statSync(path, { throwIfNoEntry: false });
  if (after?.size !== before?.size || after?.mtimeMs !== before?.mtimeMs) {
    report.problems.push({
      kind: 'held',
      message: { code: 'fileChanged' },
    });
  }
  // Read whole for the first time now, though a run that died may have moved it in.
  const old = before && oldFile(before.mtimeMs, options.now, options.duplicateWindow);
  if (old) report.problems.push({ kind: 'held', message: old });
  const unusable = report.problems.some((problem) => problem.kind === 'unusable');
  const kind = unusable ? 'unusable' : report.problems.length > 0 ? 'held' : opensAs;
  await journal.finishBatch(
    batch.batchId,
    {
      state: kind,
      rows: report.rows,
      valid: report.valid,
      invalid: report.invalid,
      totalCents: report.totalCents,
      problems: report.problems.map((problem) => problem.message),
    },
    `the file ${unusable ? 'cannot be used' : 'is held'}: ${report.problems[0] ? sayInEnglish(report.problems[0].message) : ''}`,
    { ...rules, sameNameNewBatchAfterMs: options.sameNameNewBatchAfter },
  );
  // The reader's tables are dead now: a big file's, tens of MB, go before its report.
  if (read >= WORK_BETWEEN_COLLECTIONS) collectGarbage();
  return { kind, batchId: batch.batchId, report };
}
