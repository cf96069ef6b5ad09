/**
 * What a run would do, without doing it: every waiting file read and validated, each
 * valid row weighed against the journal by the rules on who is paid (new, or held: an
 * orderId of another file, a possible duplicate), and the new ones against the balance.
 * Nothing is moved, written or sent.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { readPayoutFile, type OrderIdDerivation, type ReadOptions } from '../csv/reader.js';
import { toCashOutRequest, type RowOutcome } from '../csv/row.js';
import { batchStem, homeTag } from '../csv/order-id.js';
import { givenName } from '../csv/given-name.js';
import { foldText } from '../csv/fold.js';
import { oldFile } from './ingest.js';
import { duplicateSaid, failedBeforeSaid, journaledSaid } from '../journal/admission.js';
import { addPayee, readingsOf } from '../journal/answers.js';
import {
  JournalError,
  type HeldRow,
  type JournalAdmission,
  type JournalBatches,
  type JournalReports,
  type JournalStore,
} from '../journal/journal.js';
import type { Payees, Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';
import { withHintFlags } from '../messages/hint-flags.js';
import { cannotReadSaid } from './ingest.js';

export interface DryRunHold {
  line: number;
  rule:
    'orderId of another file' | 'possible duplicate' | 'repeats a failed payout' | 'identical rows';
  /** Why, in English (the journal's words, `--json`'s). */
  message: string;
  /** Why, as a value: said in the reader's language. */
  said: Said;
}

/** Held rows listed per file; the count covers them all. */
const LISTED_HOLDS = 200;

/** Valid rows weighed against the journal together: a PostgreSQL journal reads them in three queries. */
const WEIGHED_TOGETHER = 1000;

type ValidRow = Extract<RowOutcome, { kind: 'valid' }>;

export interface DryRunFile {
  file: string;
  /** The journal's batch for these bytes, when they are already journaled. */
  batchId?: number;
  /** Rows that would be sent, and their sum. */
  wouldSend: number;
  wouldSendCents: number;
  /** Rows a rule on who is paid would hold for a person. */
  held: number;
  /** The first of them, row by row, with the rule that holds each and its words. */
  holds: DryRunHold[];
  invalid: number;
  skipped: number;
  problems: string[];
  /** The answers a person may give to its held rows, each with what it pays (as a run says them). */
  readings: Said[];
}

/**
 * `journal` is undefined when there is none yet: every row is then new. What a run would
 * send now is the rows of new files, and the rows already journaled but never sent
 * (queued after a stop or a refused token, held by the balance check): those are counted
 * under the file of their batch, or as a batch of their own when its file is gone. The
 * journal's batches come first, oldest first, as a run funds them.
 */
/** What a rehearsal reads: the journal's identity, its batches, admission's weighing, totals. */
export type RehearsalJournal = JournalStore & JournalBatches & JournalAdmission & JournalReports;

export async function planRun(
  files: readonly string[],
  journal: RehearsalJournal | undefined,
  options: ReadOptions & { duplicateWindow: number; hintFlags?: string; now: number },
): Promise<DryRunFile[]> {
  const unsent = new Map(
    ((await journal?.queuedByBatch()) ?? []).map((batch) => [batch.batchId, batch] as const),
  );
  const journaled: DryRunFile[] = [];
  const planned: DryRunFile[] = [];
  // A new file's derived orderIds as a run would make them, with this home's tag.
  const identity = await journal?.identity();
  const home = identity ? homeTag(identity.journalId) : null;
  for (const file of files) {
    const plan = nothingYet(basename(file));
    // What each answer would pay: the rows that would be sent (held if the file is named
    // as an earlier batch), and the possible duplicates with the payout each repeats.
    const fresh: Payees = { rows: 0, cents: 0, first: [] };
    const repeating: Pick<HeldRow, 'name' | 'cents' | 'repeats'>[] = [];
    const hold = (line: number, rule: DryRunHold['rule'], weighed: Said) => {
      plan.held++;
      if (plan.holds.length < LISTED_HOLDS) {
        // The journal's words name commands bare: these take the flags of the command weighing.
        const said = withHintFlags(weighed, options.hintFlags ?? '');
        plan.holds.push({ line, rule, message: sayInEnglish(said), said });
      }
    };
    let batchId: number | undefined;
    const nameKey = foldText(batchStem(file));
    const onFingerprint = async (sha256: string): Promise<OrderIdDerivation> => {
      // Bytes a run would resume (or reject as a copy), not journal again.
      const made = (await journal?.batchesOf(sha256))?.find(
        (batch) => batch.state !== 'unusable' && batch.state !== 'refused',
      );
      batchId = made?.id;
      // The batch number a run derives orderIds with: the next of its name, when new.
      const batchNumber =
        made?.nameNumber ?? ((await journal?.latestOfName(nameKey))?.nameNumber ?? 0) + 1;
      return { batchNumber, home: made ? made.orderIdHome : home };
    };
    // Valid rows are weighed a chunk at a time: a few reads each, not a round trip a row.
    let chunk: ValidRow[] = [];
    const weighChunk = async () => {
      const taken = chunk;
      if (taken.length === 0) return;
      chunk = [];
      const rows = taken.map((row) => ({
        request: toCashOutRequest(row.payout),
        reference: row.payout.reference,
      }));
      const rules = { duplicateWindowMs: options.duplicateWindow };
      const weighed = (await journal?.weighMany(rows, nameKey, rules)) ?? [];
      for (const [at, { request, reference }] of rows.entries()) {
        const { admission, failed } = weighed[at] ?? {};
        const { line, payout } = taken[at]!;
        if (admission?.kind === 'journaled') {
          hold(line, 'orderId of another file', journaledSaid(request.orderId, admission.previous));
        } else if (admission?.kind === 'duplicate') {
          // Not journaled yet: no batch of its own for a command to pick.
          const named =
            batchId === undefined
              ? { id: 0, fileName: givenName(basename(file)) }
              : { id: batchId, fileName: basename(file) };
          hold(
            line,
            'possible duplicate',
            duplicateSaid(admission.covering, named, { cents: request.value, reference }),
          );
          const { covering } = admission;
          repeating.push({
            name: request.person.name,
            cents: request.value,
            repeats: {
              orderId: covering.orderId,
              batchId: covering.batchId,
              fileName: covering.fileName,
              line: covering.line,
              at: covering.admittedAt,
              state: covering.state,
            },
          });
        } else if (failed) {
          hold(line, 'repeats a failed payout', failedBeforeSaid(failed));
        } else if (payout.identicalTo !== undefined) {
          hold(line, 'identical rows', { code: 'identicalRows', line: payout.identicalTo });
        } else {
          plan.wouldSend++;
          plan.wouldSendCents += request.value;
          addPayee(fresh, { name: request.person.name, cents: request.value });
        }
      }
    };
    const report = await readPayoutFile(
      file,
      options,
      async (row) => {
        if (row.kind === 'invalid') plan.invalid++;
        else if (row.kind === 'skipped') plan.skipped++;
        else if (row.kind === 'valid') {
          chunk.push(row);
          if (chunk.length === WEIGHED_TOGETHER) await weighChunk();
        }
      },
      onFingerprint,
    )
      .then(async (read) => {
        await weighChunk();
        return read;
      })
      .catch((error: unknown) => {
        // A file that cannot be opened or read is this file's problem, never the others'.
        if (error instanceof JournalError) throw error;
        return cannotReadSaid(error);
      });
    if ('code' in report) {
      // What was counted of it before its reading failed is not sent.
      planned.push({ ...nothingYet(plan.file), problems: [sayInEnglish(report)] });
      continue;
    }
    plan.problems = report.problems.map((problem) => sayInEnglish(problem.message));
    const changedAt = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    const old =
      batchId === undefined && changedAt !== undefined
        ? oldFile(changedAt, options.now, options.duplicateWindow)
        : undefined;
    if (old) plan.problems.push(sayInEnglish(old));
    const earlier = batchId === undefined ? await journal?.latestOfName(nameKey) : undefined;
    if (earlier) {
      const when = new Date(earlier.receivedAt).toISOString().slice(0, 10);
      plan.problems.push(
        `named as ${earlier.fileName} (batch ${earlier.id}, ${when}): a run takes it as that file's corrected copy when it comes within a day and only repeats or fixes its rows, and otherwise holds it whole if it repeats any of them, until a person answers`,
      );
    }
    if (earlier || repeating.length > 0) {
      plan.readings = readingsOf({
        file: basename(file),
        hintFlags: options.hintFlags ?? '',
        // Without its name an earlier batch's, only the repeats are held.
        fresh: earlier ? fresh : { rows: 0, cents: 0, first: [] },
        repeating,
        ...(earlier ? { sameName: { batchId: earlier.id, rows: earlier.valid } } : {}),
      });
    }
    if (plan.problems.length > 0) {
      // A held or unusable file sends nothing.
      plan.wouldSend = 0;
      plan.wouldSendCents = 0;
    }
    const batch = batchId === undefined ? undefined : unsent.get(batchId);
    if (batchId !== undefined) plan.batchId = batchId;
    if (batch) {
      // Its rows are journaled (weighed above against themselves): those never sent go now.
      unsent.delete(batch.batchId);
      plan.held = (await journal?.rowTotalsOfBatch(batch.batchId))?.rows.held ?? 0;
      plan.wouldSend = batch.count;
      plan.wouldSendCents = batch.cents;
      journaled.push(plan);
    } else planned.push(plan);
  }
  // Batches whose file is no longer here still send their queued rows.
  for (const batch of unsent.values()) {
    journaled.push({
      ...nothingYet(
        `${(await journal?.batch(batch.batchId))?.fileName ?? '?'} (batch ${batch.batchId}, journaled)`,
      ),
      batchId: batch.batchId,
      wouldSend: batch.count,
      wouldSendCents: batch.cents,
    });
  }
  journaled.sort((a, b) => (a.batchId ?? 0) - (b.batchId ?? 0));
  return [...journaled, ...planned];
}

/** A file's plan before any of its rows is read. */
function nothingYet(file: string): DryRunFile {
  return {
    file,
    wouldSend: 0,
    wouldSendCents: 0,
    held: 0,
    holds: [],
    invalid: 0,
    skipped: 0,
    problems: [],
    readings: [],
  };
}
