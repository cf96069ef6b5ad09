/**
 * What a run would do, without doing it: every waiting file read and validated, each
 * valid row weighed against the journal (new, replay, conflict), and the new ones against
 * the balance. Nothing is moved, written or sent.
 */
import { basename } from 'node:path';
import { readPayoutFile, type ReadOptions } from '../csv/reader.js';
import { toCashOutRequest } from '../csv/row.js';
import { admit, payloadHash } from '../journal/admission.js';
import type { Journal } from '../journal/journal.js';

export interface DryRunFile {
  file: string;
  /** Rows that would be sent, and their sum. */
  wouldSend: number;
  wouldSendCents: number;
  replays: number;
  conflicts: number;
  invalid: number;
  skipped: number;
  problems: string[];
}

/** `journal` is undefined when there is none yet: every row is then new. */
export async function planRun(
  files: readonly string[],
  journal: Journal | undefined,
  options: ReadOptions,
): Promise<DryRunFile[]> {
  const planned: DryRunFile[] = [];
  for (const file of files) {
    const plan: DryRunFile = {
      file: basename(file),
      wouldSend: 0,
      wouldSendCents: 0,
      replays: 0,
      conflicts: 0,
      invalid: 0,
      skipped: 0,
      problems: [],
    };
    const report = await readPayoutFile(file, options, (row) => {
      if (row.kind === 'invalid') plan.invalid++;
      else if (row.kind === 'skipped') plan.skipped++;
      else if (row.kind === 'valid') {
        const request = toCashOutRequest(row.payout);
        const admission = admit(payloadHash(request), journal?.known(request.orderId));
        if (admission.kind === 'replay') plan.replays++;
        else if (admission.kind === 'conflict') plan.conflicts++;
        else {
          plan.wouldSend++;
          plan.wouldSendCents += request.value;
        }
      }
    });
    plan.problems = report.problems.map((problem) => problem.message);
    if (plan.problems.length > 0) {
      // A held or unusable file sends nothing.
      plan.wouldSend = 0;
      plan.wouldSendCents = 0;
    }
    planned.push(plan);
  }
  return planned;
}
