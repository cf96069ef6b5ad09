/**
 * One CSV record to one outcome: a payout ready to send, an invalid row with every mistake
 * and its column, a skipped total line, or a blank line.
 *
 * Terminology: a *row* is one data record of a file; a *payout* is a valid row as the
 * cash-out it becomes; a *batch* is the payouts of one file.
 */
import { PIX_KEY_TYPES, type CashOutRequest, type PixKeyTypeName } from '../gateway/contract.js';
import { parseCents, parseReais, type AmountReading } from './amount.js';
import { readDocument } from './documents.js';
import type { DocumentKind, PayoutField } from '../messages/fields.js';
import {
  FingerprintTables,
  fingerprint,
  fingerprintHex,
  joinedFingerprint,
} from './fingerprints.js';
import { CONTROL_CHARACTER, foldText, singleSpaced } from './fold.js';
import type { ColumnMap } from './header.js';
import { batchKey, batchSlug, contentFingerprint, deriveOrderId } from './order-id.js';
import { readReference } from './reference.js';
import type { Said } from '../messages/said.js';
import {
  inferKey,
  isEmail,
  normalisePhone,
  parseKeyType,
  readKey,
  type KeyReading,
} from './pix-key.js';

export interface Payout {
  /** Line of the file where the row starts (1 is the first line). */
  line: number;
  orderId: string;
  /** True when the file has no orderId column and the id was derived from the row. */
  orderIdDerived: boolean;
  valueCents: number;
  pixKeyType: PixKeyTypeName;
  pixKey: string;
  cpfCnpj: string;
  name: string;
  email: string;
  phone: string;
  /**
   * The line of an earlier row of this file with the same name, document, key, amount
   * and reference: this one is held until a person confirms both are due.
   */
  identicalTo?: number;
  /** The payment's reference as compared (readReference), when the row gives one. */
  reference?: string;
}

/** A payout's request: only these of its fields go into it. */
export function toCashOutRequest(
  payout: Pick<
    Payout,
    'orderId' | 'valueCents' | 'pixKeyType' | 'pixKey' | 'cpfCnpj' | 'name' | 'email' | 'phone'
  >,
): CashOutRequest {
  return {
    value: payout.valueCents,
    pixKeyType: PIX_KEY_TYPES.indexOf(payout.pixKeyType),
    pixKey: payout.pixKey,
    cpfCnpj: payout.cpfCnpj,
    person: { name: payout.name, email: payout.email, phone: payout.phone },
    orderId: payout.orderId,
  };
}

/** The cells of a row as the file wrote them, by field, for reports. */
export type RowCells = Partial<Record<PayoutField, string>>;

export interface RowNote {
  /** The heading of the column, as the file writes it. */
  column: string;
  message: Said;
}

/** What is wrong in a row: `column` null when the file has no column for it (a contact). */
export interface Mistake {
  column: string | null;
  message: Said;
}

/** An invalid row's mistakes as one message, for its one line: the first, then the others by column. */
export function mistakesSaid([first, ...more]: readonly [Mistake, ...Mistake[]]): Said {
  return more.length === 0 ? first.message : { code: 'moreMistakes', first: first.message, more };
}

export type RowOutcome =
  | {
      kind: 'valid';
      line: number;
      payout: Payout;
      notes: RowNote[];
      cells: RowCells;
      /** Contacts the row left out, and where they came from instead. */
      filled?: ContactsFilled;
    }
  | {
      kind: 'invalid';
      line: number;
      /** Every mistake of the row, in the order of its columns' checks. */
      mistakes: [Mistake, ...Mistake[]];
      cells: RowCells;
      /** Its amount, when that could be read (the row is invalid for another reason). */
      valueCents?: number;
    }
  | { kind: 'skipped'; line: number; reason: Said; cells: RowCells }
  | { kind: 'blank'; line: number };

/**
 * Where a contact the gateway requires came from when the row has none: the Pix key of
 * that type, or the configured default (recipientEmail, recipientPhone).
 */
export type ContactsFilled = Partial<Record<'email' | 'phone', 'key' | 'default'>>;

/**
 * What the rows of a file add up to as it is read, for control totals (what became of
 * them is the journal's RowTotals).
 */
export interface ReadTotals {
  /** Data rows: valid and invalid, not blank or skipped. */
  rows: number;
  /** Sum of every data row whose amount could be read, valid or not. */
  readableCents: number;
  /**
   * The first lines of data rows whose amount could not be read: UNREADABLE_LINES_KEPT,
   * as a message names five and says whether there are more; a list of every one would
   * grow with the file (a million lines, 8 MB, then journaled with the batch).
   */
  unreadableAmountLines: number[];
  /** The last total line, when no data row follows it; `unreadable` holds an amount it cannot read. */
  trailingTotal?: { line: number; cents: number | undefined; unreadable: string | undefined };
}

export interface RowValidatorOptions {
  columns: ColumnMap;
  /** The header's cells: a value under a blank heading, or beyond the last, is an error. */
  headings: readonly string[];
  /** With `,`, an unquoted `1234,56` splits into two cells: told apart from a whole amount. */
  delimiter: string;
  /** The batch's name stem, for derived orderIds (see batchStem). */
  stem: string;
  /** The batch's number among the batches of that name (1 where no journal is read). */
  batchNumber?: number;
  /** The home's tag its derived orderIds carry (see homeTag); none where no journal is read. */
  home?: string | null;
  maxPayoutCents: number;
  /** Contacts for rows that give none and whose Pix key is of another type. */
  recipientEmail?: string | null;
  recipientPhone?: string | null;
  /** Keys the repeat tables keep in memory before the rest go to a file (MEMORY_KEYS). */
  memoryKeys?: number;
}

const ORDER_ID = /^[A-Za-z0-9][A-Za-z0-9 ._:#-]{0,63}$/;
const TOTAL_WORDS = /^(total|totais|subtotal|soma|sum)\b/;
const MAX_NAME_LENGTH = 140;
const UNREADABLE_LINES_KEPT = 6;

export function createRowValidator(options: RowValidatorOptions) {
  const { columns } = options;
  const tables = new FingerprintTables(options.memoryKeys);
  const seenOrderIds = tables.table();
  // A row's content to the line it first came on; to how often it came, only once it
  // repeats, so a file of different rows keeps one number a row.
  const firstLines = tables.table();
  const repeats = tables.table();
  // Rows that differ only by their reference are two payments, not identical rows.
  const firstReferenced = tables.table();
  const totals: ReadTotals = { rows: 0, readableCents: 0, unreadableAmountLines: [] };
  // mapHeader guarantees exactly one amount column.
  const amountField: PayoutField = columns.valueCents ? 'valueCents' : 'amountReais';
  const readAmount: (text: string) => AmountReading = columns.valueCents ? parseCents : parseReais;

  const heading = (field: PayoutField) => columns[field]?.heading ?? field;
  // A column headed just CPF or CNPJ says which document it holds.
  const documentHeading = foldText(columns.cpfCnpj?.heading ?? '');
  const headingKind: DocumentKind | undefined =
    documentHeading === 'cnpj' ? 'CNPJ' : documentHeading === 'cpf' ? 'CPF' : undefined;
  // Reused by every row: an invalid row takes a copy.
  const problems: Mistake[] = [];
  const problem = (field: PayoutField, message: Said) =>
    problems.push({ column: columns[field]?.heading ?? null, message });
  const mapped = Object.entries(columns) as [PayoutField, { index: number }][];
  const headingCount = options.headings.length;
  // Which positions have a heading, told once for the file rather than on every row.
  const headed = options.headings.map((text) => text.trim() !== '');
  const slug = batchSlug(options.stem, options.batchNumber, options.home ?? null);
  const batch = batchKey(options.stem, options.batchNumber);

  /** Checks one record starting on `line` and ending on `lastLine` (later when a cell holds a line break). */
  function check(cells: readonly string[], line: number, lastLine = line): RowOutcome {
    const raw: RowCells = {};
    for (const [field, column] of mapped) raw[field] = cells[column.index] ?? '';
    if (cells.every((cell) => cell.trim() === '')) return { kind: 'blank', line };
    if (isTotalLine(cells)) {
      const text = (raw[amountField] ?? '').trim();
      const amount = readAmount(text);
      totals.trailingTotal = {
        line,
        cents: amount.ok ? amount.cents : undefined,
        unreadable: !amount.ok && text !== '' ? text : undefined,
      };
      return { kind: 'skipped', line, reason: { code: 'totalLine' }, cells: raw };
    }
    totals.rows++;
    totals.trailingTotal = undefined;

    const amount = readAmount(raw[amountField] ?? '');
    if (amount.ok) totals.readableCents += amount.cents;
    else if (totals.unreadableAmountLines.length < UNREADABLE_LINES_KEPT) {
      totals.unreadableAmountLines.push(line);
    }

    problems.length = 0;
    const notes: RowNote[] = [];

    if (lastLine > line) {
      const at = cells.findIndex((cell) => /[\r\n]/.test(cell));
      problems.push({
        column: headingAt(at),
        message: { code: 'rowSpansLines', line, lastLine },
      });
    }
    const stray = strayValue(cells);
    // A split is guessed only where the cells do not fit the header: `10.00,12` under
    // `Valor,Parcela` is an amount and an installment, not R$ 10,0012 or a split.
    const fitsHeader = cells.length === headingCount && stray < 0;
    if (options.delimiter === ',' && amountField === 'amountReais' && !fitsHeader) {
      const split = splitAmount(cells, columns.amountReais?.index ?? -1);
      if (split) problem('amountReais', split);
    }
    if (stray >= 0) {
      problems.push({
        column: `column ${stray + 1}`,
        message:
          stray >= headingCount
            ? { code: 'moreValuesThanColumns', values: cells.length, columns: headingCount }
            : { code: 'valueUnderBlankHeading' },
      });
    }
    const control = cells.findIndex((cell) => CONTROL_CHARACTER.test(cell));
    if (control >= 0) {
      problems.push({
        column: headingAt(control),
        message: { code: 'controlCharacter' },
      });
    }

    let orderId: string | undefined;
    if (columns.orderId) {
      orderId = (raw.orderId ?? '').trim();
      if (orderId === '') problem('orderId', { code: 'orderIdEmpty' });
      else if (!ORDER_ID.test(orderId)) {
        problem('orderId', { code: 'orderIdUnusable', orderId });
        orderId = undefined;
      }
    }

    const name = singleSpaced(raw.name ?? '');
    if (name === '') problem('name', { code: 'nameEmpty' });
    else if (!startsWithLetterOrDigit(name)) problem('name', { code: 'nameNotAName', name });
    else if (name.length > MAX_NAME_LENGTH) {
      problem('name', { code: 'nameTooLong', length: name.length, max: MAX_NAME_LENGTH });
    }

    const typeText = (raw.pixKeyType ?? '').trim();
    const type = typeText === '' ? undefined : parseKeyType(typeText);
    const typeKnown = typeText === '' || type !== undefined;
    const key: KeyReading | undefined = !typeKnown
      ? undefined
      : type
        ? readKey(type, raw.pixKey ?? '')
        : inferKey(raw.pixKey ?? '');

    // Read after the key: a CNPJ key type (stated, or told by a full CNPJ key) or a column
    // headed CNPJ is what lets a bare number of 11 digits or fewer be a CNPJ.
    const document = readDocument(
      raw.cpfCnpj ?? '',
      documentKind(type ?? (key?.ok ? key.type : undefined), headingKind),
    );
    if (!document.ok) problem('cpfCnpj', document.problem);
    else if (document.restoredZeros > 0) {
      notes.push({
        column: heading('cpfCnpj'),
        message: {
          code: 'zerosRestored',
          written: (raw.cpfCnpj ?? '').trim(),
          read: document.value,
        },
      });
    }
    if (!typeKnown) {
      problem('pixKeyType', { code: 'keyTypeUnknown', text: typeText });
    } else if (key && !key.ok) problem('pixKey', key.problem);
    else if (key?.ok) {
      if (key.note) notes.push({ column: heading('pixKey'), message: key.note });
      // A CPF or CNPJ key is its owner's document: another document here is a mix-up.
      const ownDocument = key.type === 'CPF' || key.type === 'CNPJ' ? key.type : undefined;
      if (ownDocument && document.ok && key.key !== document.value) {
        problem('pixKey', {
          code: 'keyNotRowDocument',
          type: ownDocument,
          key: key.key,
          document: document.value,
        });
      }
    }

    // Contacts the gateway requires, which payroll exports often leave out: the row's own,
    // else the Pix key's when it is of that type, else the configured default. They never
    // decide who is paid: the key and the document do.
    const filled: ContactsFilled = {};
    let email = (raw.email ?? '').trim();
    if (email === '' && key?.ok && key.type === 'EMAIL') [email, filled.email] = [key.key, 'key'];
    else if (email === '' && options.recipientEmail) {
      [email, filled.email] = [options.recipientEmail, 'default'];
    }
    if (email === '')
      problem('email', { code: 'noContact', contact: 'email', noColumn: !columns.email });
    else if (!isEmail(email)) problem('email', { code: 'emailInvalid', email });

    let phoneText = (raw.phone ?? '').trim();
    if (phoneText === '' && key?.ok && key.type === 'TELEFONE') {
      [phoneText, filled.phone] = [key.key, 'key'];
    } else if (phoneText === '' && options.recipientPhone) {
      [phoneText, filled.phone] = [options.recipientPhone, 'default'];
    }
    const phone = phoneText === '' ? undefined : readPersonPhone(phoneText);
    if (phoneText === '')
      problem('phone', { code: 'noContact', contact: 'phone', noColumn: !columns.phone });
    else if (!phone) problem('phone', { code: 'phoneInvalid', phone: phoneText });

    if (!amount.ok) problem(amountField, amount.problem);
    else if (amount.cents > options.maxPayoutCents) {
      problem(amountField, {
        code: 'amountOverLimit',
        cents: amount.cents,
        limitCents: options.maxPayoutCents,
      });
    }

    if (orderId !== undefined && /^\d{1,6}$/.test(orderId)) {
      notes.push({
        column: heading('orderId'),
        message: { code: 'orderIdLikeRowNumber', orderId },
      });
    }
    if (orderId !== undefined) {
      const idPrint = fingerprint(orderId);
      const earlier = seenOrderIds.claim(idPrint, line);
      if (earlier !== undefined) {
        problem('orderId', { code: 'orderIdRepeated', orderId, line: earlier });
      }
    }

    const [first, ...others] = problems;
    if (first) {
      return {
        kind: 'invalid',
        line,
        mistakes: [first, ...others],
        cells: raw,
        ...(amount.ok ? { valueCents: amount.cents } : {}),
      };
    }
    if (!key?.ok || !document.ok || !amount.ok || !phone) {
      throw new Error('unreachable: a row without problems has every field');
    }

    const contentPrint = contentFingerprint(batch, {
      pixKeyType: key.type,
      pixKey: key.key,
      cpfCnpj: document.value,
      valueCents: amount.cents,
      name,
    });
    const sameContent = firstLines.claim(contentPrint, line);
    // Derived orderIds count rows of the same content, whatever their reference.
    let occurrence = 0;
    if (sameContent !== undefined) {
      occurrence = repeats.get(contentPrint) ?? 1;
      repeats.set(contentPrint, occurrence + 1);
    }
    const reference = columns.reference ? readReference(raw.reference ?? '') : undefined;
    if (columns.reference && reference === undefined) {
      notes.push({ column: heading('reference'), message: { code: 'referenceEmpty' } });
    }
    const identicalTo =
      reference === undefined
        ? sameContent
        : firstReferenced.claim(
            joinedFingerprint([fingerprintHex(contentPrint), reference], 31),
            line,
          );
    if (identicalTo !== undefined) {
      notes.push({
        column: heading('name'),
        message: { code: 'identicalRows', line: identicalTo },
      });
    }
    let orderIdDerived = false;
    if (orderId === undefined) {
      orderId = deriveOrderId(slug, contentPrint, occurrence);
      orderIdDerived = true;
    }
    return {
      kind: 'valid',
      line,
      payout: {
        line,
        orderId,
        orderIdDerived,
        valueCents: amount.cents,
        pixKeyType: key.type,
        pixKey: key.key,
        cpfCnpj: document.value,
        name,
        email,
        phone,
        ...(identicalTo === undefined ? {} : { identicalTo }),
        ...(reference === undefined ? {} : { reference }),
      },
      notes,
      cells: raw,
      ...(filled.email || filled.phone ? { filled } : {}),
    };
  }

  /** A label such as `Total` in its first filled cell, and nothing else but the amount. */
  function isTotalLine(cells: readonly string[]): boolean {
    const label = cells.findIndex((cell) => cell.trim() !== '');
    const text = cells[label] ?? '';
    // Every label starts with t or s: most rows are told apart without folding them.
    if (!/^\s*[tsTS]/.test(text) || !TOTAL_WORDS.test(foldText(text))) return false;
    const amountAt = columns[amountField]?.index;
    return cells.every((cell, at) => at === label || at === amountAt || cell.trim() === '');
  }

  /** The first cell holding something where the header has nothing: -1 when none. */
  function strayValue(cells: readonly string[]): number {
    for (let at = 0; at < cells.length; at++) {
      if ((headed[at] ?? false) === false && (cells[at] ?? '').trim() !== '') return at;
    }
    return -1;
  }

  /** The heading of a cell by position, as the file writes it, or its column number. */
  function headingAt(at: number): string {
    const text = options.headings[at]?.trim();
    return text ? text : `column ${at + 1}`;
  }

  return {
    check,
    totals: (): Readonly<ReadTotals> => totals,
    /** Gives back the file the repeat tables spilled to, if they did. */
    close: (): void => tables.close(),
  };
}

/** The document the key type and the heading agree on; none when they disagree or say nothing. */
function documentKind(
  keyType: PixKeyTypeName | undefined,
  headingKind: DocumentKind | undefined,
): DocumentKind | undefined {
  const fromKey = keyType === 'CPF' || keyType === 'CNPJ' ? keyType : undefined;
  if (fromKey && headingKind && fromKey !== headingKind) return undefined;
  return fromKey ?? headingKind;
}

/**
 * `1234,56` unquoted in a comma file arrives as "1234" and "56", which must not pay
 * R$ 1.234,00: the message when the amount cell and the next one make an amount together.
 */
function splitAmount(cells: readonly string[], at: number): Said | undefined {
  const whole = (cells[at] ?? '').trim();
  const decimals = (cells[at + 1] ?? '').trim();
  if (!/^(R\$\s*)?[\d.]+$/.test(whole) || !/^\d{1,2}$/.test(decimals)) return undefined;
  const joined = parseReais(`${whole},${decimals}`);
  if (!joined.ok) return undefined;
  const plain = `${Math.trunc(joined.cents / 100)}.${String(joined.cents % 100).padStart(2, '0')}`;
  return { code: 'amountSplit', written: `${whole},${decimals}`, plain };
}

/** A contact phone: a Brazilian number (mobile or landline) in +55 form, or another country's +number. */
export function readPersonPhone(text: string): string | undefined {
  const brazilian = normalisePhone(text, true);
  if (brazilian) return brazilian;
  const digits = text.replace(/[\s().-]/g, '');
  return /^\+(?!55)[1-9]\d{7,14}$/.test(digits) ? digits : undefined;
}

function startsWithLetterOrDigit(text: string): boolean {
  const code = text.charCodeAt(0);
  const asciiAlphanumeric =
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return asciiAlphanumeric || /^[\p{L}\p{N}]/u.test(text);
}
