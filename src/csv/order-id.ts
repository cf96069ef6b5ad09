/**
 * orderIds for files that carry none (DESIGN.md section 5): derived from the file's name
 * stem and the row's normalised content, plus the occurrence of identical rows, so the
 * same file dropped again, or a corrected copy of it, gives unchanged rows the same ids.
 */
import { fingerprint, fingerprintHex, type Fingerprint } from './fingerprints.js';
import { foldText } from './fold.js';

export interface PayoutContent {
  pixKeyType: string;
  pixKey: string;
  cpfCnpj: string;
  valueCents: number;
  name: string;
}

/**
 * The part of a file name that names the batch: no folder, no extension, and none of
 * the marks a copy gets (`payroll (1).csv` up to `(9)`, `payroll - Copy.csv`,
 * `Cópia de payroll.csv`), so a re-downloaded or copied export maps to the same
 * orderIds rather than paying twice. `folha (11).csv` keeps its number: two digits are
 * more likely a month than a copy.
 */
export function batchStem(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const stem = base.replace(/(\.(csv|txt|tsv))+$/i, '');
  return stem
    .replace(/^(copy of|copia de|cópia de)\s+/i, '')
    .replace(/(\s*-\s*(copy|copia|cópia)(\s*\(\d\))?|\s+\(\d\))+$/i, '')
    .trim();
}

/**
 * The stem as letters, digits and dashes, for people to read in an orderId. It may be
 * cut short; the fingerprint covers the whole stem, so two long names never share ids.
 */
export function batchSlug(stem: string): string {
  const text = foldText(stem)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return text.slice(0, 38).replace(/-+$/, '') || 'payout';
}

/** The whole stem, folded once per file: the part of every fingerprint that names the batch. */
export function batchKey(stem: string): string {
  return foldText(stem);
}

/** A 64-bit fingerprint of the batch (see batchKey) and the content that identifies a payout in it. */
export function contentFingerprint(batch: string, content: PayoutContent): Fingerprint {
  const separator = '\u001f';
  return fingerprint(
    batch +
      separator +
      content.pixKeyType +
      separator +
      content.pixKey +
      separator +
      content.cpfCnpj +
      separator +
      String(content.valueCents) +
      separator +
      foldText(content.name),
  );
}

/** `payroll-2026-11-3f9a0c1b2d4e5f60`, and `-2`, `-3`… for the second and later identical rows. */
export function deriveOrderId(slug: string, key: Fingerprint, occurrence: number): string {
  const id = `${slug}-${fingerprintHex(key)}`;
  return occurrence === 0 ? id : `${id}-${occurrence + 1}`;
}
