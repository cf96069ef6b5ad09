/**
 * Approval (requireApproval, DESIGN.md section 6): a validated file waits in
 * `awaiting-approval/` with a report of what would be sent, its rows journaled and
 * queued but its batch closed. A person releases it by moving it into `approved/` (or
 * `payouts approve FILE`), or turns it down (`payouts reject FILE`): its rows are then
 * held, never sent, and a later file may take them over.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { formatCents } from '../csv/amount.js';
import type { Journal } from '../journal/journal.js';
import { moveInto, payoutFiles, reject, type Folders } from './folders.js';

/** Invalid rows listed in a report; the result file has them all. */
const REPORT_ERRORS = 200;

/** The bytes' SHA-256, as the journal keys batches. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Moves a journaled file into awaiting-approval/, with its report beside it. */
export function awaitApproval(
  journal: Journal,
  folders: Folders,
  file: string,
  batchId: number,
): string | undefined {
  const moved = moveInto(file, folders.awaiting);
  if (!moved) return undefined;
  const batch = journal.batch(batchId);
  const name = basename(moved);
  const invalid = journal.linesOfBatch(batchId).filter((line) => line.kind === 'invalid');
  const lines = [
    `${name}: waiting for approval; nothing of it is sent until then`,
    `${batch?.rows ?? 0} rows: ${batch?.valid ?? 0} valid (to be sent, total ${formatCents(batch?.totalCents ?? 0)}), ${batch?.invalid ?? 0} invalid (never sent)`,
    ...invalid
      .slice(0, REPORT_ERRORS)
      .map(
        (line) => `  line ${line.line}${line.column ? `, ${line.column}` : ''}: ${line.message}`,
      ),
    ...(invalid.length > REPORT_ERRORS
      ? [`  … and ${invalid.length - REPORT_ERRORS} more (see the result file)`]
      : []),
    '',
    `To approve: move ${name} into approved/, or run: payouts approve ${name}`,
    `To turn it down: payouts reject ${name} --reason "why"`,
  ];
  writeFileSync(`${moved}.report.txt`, `${lines.join('\n')}\n`);
  return moved;
}

/**
 * Files a person moved into approved/: each opens its waiting batch and goes on to
 * processing/. A file that is not one awaiting approval is refused (to rejected/): only
 * the bytes a person saw in awaiting-approval/ may be released.
 */
export async function releaseApproved(
  journal: Journal,
  folders: Folders,
): Promise<{ file: string; released: boolean; why?: string }[]> {
  const outcomes: { file: string; released: boolean; why?: string }[] = [];
  for (const file of payoutFiles(folders.approved)) {
    const sha256 = await sha256Of(file);
    const waiting = journal.batchesIn('awaiting-approval').find((batch) => batch.sha256 === sha256);
    if (!waiting) {
      const why = 'not a file awaiting approval (its bytes match none): new files go in the inbox';
      reject(file, folders.rejected, [why]);
      outcomes.push({ file: basename(file), released: false, why });
      continue;
    }
    if (!moveInto(file, folders.processing)) continue; // names all taken: next pass
    journal.setBatchState(waiting.id, 'open');
    rmSync(join(folders.awaiting, `${basename(file)}.report.txt`), { force: true });
    outcomes.push({ file: basename(file), released: true });
  }
  return outcomes;
}

/** A file waiting for approval, by its name. */
export function findAwaiting(folders: Folders, name: string): string | undefined {
  const path = join(folders.awaiting, basename(name));
  return existsSync(path) ? path : undefined;
}

/** `payouts reject`: the batch refused (its rows held), the file to rejected/ with the reason. */
export async function refuse(
  journal: Journal,
  folders: Folders,
  file: string,
  reason: string,
): Promise<boolean> {
  const sha256 = await sha256Of(file);
  const waiting = journal.batchesIn('awaiting-approval').find((batch) => batch.sha256 === sha256);
  if (!waiting) return false;
  const why = `turned down by a person: ${reason}`;
  journal.refuseBatch(waiting.id, why);
  reject(file, folders.rejected, [why]);
  rmSync(`${file}.report.txt`, { force: true });
  return true;
}
