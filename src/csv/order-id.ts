/**
 * orderIds for files that carry none (docs/who-is-paid.md, rule 1): derived from the file's name
 * stem and the row's normalised content, plus the occurrence of identical rows, so the
 * same file dropped again, or a corrected copy of it, gives unchanged rows the same ids.
 */
import { fingerprintHex, joinedFingerprint, type Fingerprint } from './fingerprints.js';
import { foldText } from './fold.js';
import { givenName } from './given-name.js';

export interface PayoutContent {
  pixKeyType: string;
  pixKey: string;
  cpfCnpj: string;
  valueCents: number;
  name: string;
}

/**
 * The part of a file name that names the batch: no folder, no extension, and none of
 * the words a copy gets (`folha - Cópia.csv`, `Cópia de folha.csv`, `folha - Copy.csv`,
 * `folha (corrigida).csv`), nor the ` [2]` payouts gives a file whose name is taken in
 * one of its folders. A number in parentheses stays: `13o salario (2).csv` is the
 * second installment, not a copy of the first.
 */
export function batchStem(fileName: string): string {
  const base = givenName(fileName.split(/[\\/]/).pop() ?? fileName);
  const stem = base.replace(/(\.(csv|txt|tsv))+$/i, '');
  return stem
    .replace(/^(copy of|copia de|cópia de)\s+/i, '')
    .replace(/(\s*-\s*(copy|copia|cópia)|\s*\((corrigid[oa]|corrected|final)\))+$/iu, '')
    .trim();
}

/**
 * The home's short identity in its derived orderIds: the first 8 hex digits of its
 * journal's random id, so two homes on one gateway account never derive the same orderId.
 */
export function homeTag(journalId: string): string {
  return journalId
    .replace(/[^0-9a-f]/gi, '')
    .slice(0, 8)
    .toLowerCase();
}

/**
 * The stem as letters, digits and dashes, for people to read in an orderId, with the
 * batch's number for its name from the second on (`folha-b2`) and the home's tag when the
 * batch has one (`folha-b2-1f0c9a2e`). It may be cut short, so that an orderId stays
 * within 55 characters (before an identical row's number) as it did before the tag; the
 * fingerprint covers the whole stem, so two long names never share ids.
 */
export function batchSlug(stem: string, batchNumber = 1, home: string | null = null): string {
  const text = foldText(stem)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const suffix = (batchNumber === 1 ? '' : `-b${batchNumber}`) + (home === null ? '' : `-${home}`);
  return (text.slice(0, 38 - suffix.length).replace(/-+$/, '') || 'payout') + suffix;
}

/**
 * The stem folded once per file, and the batch's number for its name: the part of every
 * fingerprint that names the batch, so next month's `folha.csv` (batch 2 of that name)
 * gets orderIds of its own. The first batch of a name keeps the ids it always had.
 */
export function batchKey(stem: string, batchNumber = 1): string {
  const folded = foldText(stem);
  return batchNumber === 1 ? folded : `${folded}\u001e${batchNumber}`;
}

/** A 64-bit fingerprint of the batch (see batchKey) and the content that identifies a payout in it. */
export function contentFingerprint(batch: string, content: PayoutContent): Fingerprint {
  // The parts as one text joined by U+001F (unit separator), hashed without joining them.
  return joinedFingerprint(
    [
      batch,
      content.pixKeyType,
      content.pixKey,
      content.cpfCnpj,
      String(content.valueCents),
      foldText(content.name),
    ],
    0x1f,
  );
}

/** `payroll-2026-11-3f9a0c1b2d4e5f60`, and `-2`, `-3`… for the second and later identical rows. */
export function deriveOrderId(slug: string, key: Fingerprint, occurrence: number): string {
  const id = `${slug}-${fingerprintHex(key)}`;
  return occurrence === 0 ? id : `${id}-${occurrence + 1}`;
}

/**
 * How many batch numbers past the highest of a name a journal may have forgotten: a home
 * folder restored from a backup numbers a file dropped again after the batches it lost.
 */
export const FORGOTTEN_BATCHES = 3;

/**
 * The orderIds a derived one would have had as batch `numbers` of its name (same stem,
 * home and content, same occurrence), so a file a restored home forgot is found at the
 * gateway under the number it had then. None for an orderId the file gave.
 */
export function orderIdsAsBatches(
  orderId: string,
  made: { stem: string; batchNumber: number; home: string | null },
  content: PayoutContent,
  numbers: readonly number[],
): string[] {
  const { stem, home } = made;
  const derived = (batchNumber: number) =>
    deriveOrderId(
      batchSlug(stem, batchNumber, home),
      contentFingerprint(batchKey(stem, batchNumber), content),
      0,
    );
  const own = derived(made.batchNumber);
  const occurrence = orderId.slice(own.length);
  if (!orderId.startsWith(own) || !/^(-\d+)?$/.test(occurrence)) return [];
  return numbers.map((batchNumber) => derived(batchNumber) + occurrence);
}
