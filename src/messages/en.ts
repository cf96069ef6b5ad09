/** English: the words the result files, summaries and tests have always used. */
import { formatCents } from './money.js';
import { globalFlags } from './hint-flags.js';
import { FIELD_ALIASES, FIELD_LABELS, type PayoutField } from './fields.js';
import type { RowState } from '../domain/row-states.js';
import type { Catalog, HelpTexts } from './catalog.js';
import type { BytePosition, ControlSource, Payees, Repeating, SaidTexts } from './said.js';

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
/** A size as people read it: 7.5 MB, 812.0 kB, 96 bytes. */
const bytes = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} bytes`;

/**
 * How to save a file as CSV, in the menus a Brazilian Excel really has: "CSV UTF-8"
 * keeps every accent; "CSV (separado por vírgulas)" writes Windows-1252, which we read too.
 */
const SAVE_AS_CSV =
  'save it again from Excel with Arquivo > Salvar como > "CSV UTF-8 (delimitado por vírgulas)" (or "CSV (separado por vírgulas)")';
const KEY_TYPES = '0-4 or CPF, CNPJ, EMAIL, TELEFONE (PHONE), RANDOM_KEY (EVP, aleatória)';
const KEEP_ZEROS = 'format the column as text so the leading zeros stay';
const THOUSANDS_PLACES =
  'has its thousands separators in the wrong places: they stand between groups of three digits, like 1.234.567,89';

const accepted = (field: PayoutField) =>
  `${FIELD_LABELS[field]} (accepted headings: ${FIELD_ALIASES[field].join(', ')})`;
const position = ({ line, offset, byte }: BytePosition) =>
  byte === undefined
    ? `line ${line}, at offset ${offset}`
    : `line ${line}, byte 0x${byte} at offset ${offset}`;
const source = (from: ControlSource) =>
  'totalLine' in from ? `the total line (line ${from.totalLine})` : from.sidecar;
const rowsAndSum = ({ rows, cents }: { rows?: number; cents?: number }) =>
  [rows === undefined ? '' : plural(rows, 'row'), cents === undefined ? '' : formatCents(cents)]
    .filter(Boolean)
    .join(' and ');

/** `2026-11-27 09:00:00`, an instant in the home's time zone (Swedish writes ISO 8601's order). */
const instant = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' }).format(
    ms,
  );

/** `09:00 on 2026-11-27`, in the home's time zone. */
const timeAndDay = (ms: number, timeZone: string) =>
  `${new Intl.DateTimeFormat('en-GB', { timeZone, timeStyle: 'short' }).format(ms)} on ${new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short' }).format(ms)}`;

const DAY_MS = 86_400_000;

/** `line 2 (Ana Souza, R$ 3.500,00) repeats folha.csv line 2 (nov-02, paid)`. */
const repeatOf = ({ line, name, cents, repeats }: Repeating) =>
  `line ${line} (${name}, ${formatCents(cents)}) repeats ${
    repeats
      ? `${repeats.file} line ${repeats.line} (${repeats.orderId}, ${repeats.state})`
      : 'an earlier payout'
  }`;

/** ` (line 2 as its line 3, line 4 as its line 2 and 1 more row)`: which rows of a copy repeat which. */
const whichRepeat = (repeats: readonly { line: number; earlierLine: number }[], more: number) =>
  repeats.length === 0
    ? ''
    : ` (${repeats.map((pair) => `line ${pair.line} as its line ${pair.earlierLine}`).join(', ')}${more > 0 ? ` and ${plural(more, 'more row')}` : ''})`;

/** `2026-10-05`, the day a payout was journaled (UTC). */
const day = (ms: number | null) =>
  ms === null ? 'an earlier run' : new Date(ms).toISOString().slice(0, 10);
/** `2026-10-05 14:30 UTC`, when a payout was journaled. */
const moment = (ms: number | null) =>
  ms === null
    ? 'in an earlier run'
    : `on ${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
/** What to run while a replacing copy waits for approval itself. */
const copyWaits = (next: { file: string; hintFlags: string } | null) =>
  next ? `; the copy waits for approval: payouts approve "${next.file}"${next.hintFlags}` : '';
/** `R$ 5.500,00: Ana Souza R$ 3.000,00, Bruno Lima R$ 2.500,00`. */
const payees = ({ rows, cents, first }: Payees) =>
  `${formatCents(cents)}: ${first
    .map((payee) => `${payee.name} ${formatCents(payee.cents)}`)
    .join(', ')}${rows > first.length ? ', …' : ''}`;
const transaction = (id: number | null) => (id === null ? '' : `, transaction ${id}`);
/** What became of a covering payout that leaves the row it covered unpaid. */
const UNDONE: Partial<Record<RowState, string>> = {
  refunded: 'was returned (refunded)',
  failed: 'failed',
  canceled: 'was canceled',
  rejected: 'was rejected',
};

const said: SaidTexts = {
  empty: () => 'is empty',
  rowSpansLines: ({ line, lastLine }) =>
    `this row runs over lines ${line}–${lastLine}: if the cell's line break is meant, put it on one line; if not, a quote (") is missing and rows may have been swallowed`,
  moreValuesThanColumns: ({ values, columns }) =>
    `this line has ${values} values but the header has ${columns} columns: a value holding the delimiter must be in quotes`,
  valueUnderBlankHeading: () =>
    'holds a value under a blank heading: a value holding the delimiter must be in quotes',
  controlCharacter: () => 'holds an invisible control character (NUL or similar): retype the cell',
  alsoWrong: ({ first, columns }, say) => `${say(first)} (also: ${columns.join(', ')})`,
  moreMistakes: ({ first, more }, say) =>
    [
      say(first),
      ...more.map(({ column, message }) =>
        column === null ? say(message) : `${column}: ${say(message)}`,
      ),
    ].join(' | '),
  totalLine: () => 'a total line, not a payout',
  identicalRows: ({ line }) =>
    `identical to line ${line} (the same name, document, Pix key and amount): held until a person confirms both are due; the run that takes the file prints the command that does`,
  referenceEmpty: () =>
    'is empty: this row is weighed as in a file without a reference (the same document and amount as a payment of the last duplicateWindow is held)',
  orderIdEmpty: () => 'is empty: each row needs its own order reference',
  orderIdUnusable: ({ orderId }) =>
    `"${orderId}" is not usable as an order reference: up to 64 letters, digits, spaces and . _ : # -, starting with a letter or digit`,
  orderIdRepeated: ({ orderId, line }) =>
    `"${orderId}" is already used on line ${line}: each row needs its own order reference`,
  orderIdLikeRowNumber: ({ orderId }) =>
    `orderId "${orderId}" looks like a row number: orderIds must be unique across every file, so next month's "${orderId}" would be refused as a conflict`,
  nameEmpty: () => "is empty: the recipient's name is required",
  nameNotAName: ({ name }) =>
    `"${name}" does not look like a name: it must start with a letter or digit (a cell starting with = + - @ may be a spreadsheet formula)`,
  nameTooLong: ({ length, max }) => `is ${length} characters long; at most ${max}`,
  noContact: ({ contact, noColumn }) => {
    const [word, key, setting] =
      contact === 'email'
        ? ['e-mail', 'an e-mail', 'recipientEmail']
        : ['phone', 'a phone', 'recipientPhone'];
    return noColumn
      ? `the file has no ${word} column (the gateway requires one, and the Pix key is not ${key}); the company can set a default ${word}: ${setting}`
      : `is empty: the recipient's ${word} is required (the Pix key is not ${key}, and ${setting} is not set)`;
  },
  emailInvalid: ({ email }) => `"${email}" is not an e-mail address (like name@example.com)`,
  phoneInvalid: ({ phone }) =>
    `"${phone}" is not a phone number with area code (like (11) 98765-4321 or +55 11 98765-4321)`,
  amountSplit: ({ written, plain }) =>
    `"${written}" looks split by the comma delimiter: put the amount in quotes, or write it as ${plain}`,
  amountOverLimit: ({ cents, limitCents }) =>
    `${formatCents(cents)} is over the limit of ${formatCents(limitCents)} per payout (maxPayoutCents)`,
  amountZero: ({ shown }) => `${shown} is zero: a payout must be more than zero`,
  amountTooLarge: ({ shown }) => `${shown} is too large`,
  amountScientific: ({ shown }) =>
    `"${shown}" was turned into scientific notation by the spreadsheet: format the column as text or number with 2 decimals`,
  amountNegative: ({ shown, cents, parentheses }) =>
    `${shown} is negative (R$ -${formatCents(cents).slice(3)})${parentheses ? ': parentheses mark a negative amount in accounting' : ''}; a payout must be more than zero`,
  notAnAmount: ({ shown, wholeReaisMissing }) =>
    `"${shown}" is not an amount in reais (${wholeReaisMissing === undefined ? 'write it like 1234,56 or R$ 1.234,56' : `write the whole reais too, like 0${wholeReaisMissing}`})`,
  notInReais: ({ shown }) =>
    `"${shown}" is not in reais: payouts are paid in reais; write the amount in R$, like 1.234,56`,
  thousandsOrDecimals: ({ shown, digits }) =>
    `${shown} could mean thousands or decimals: write ${digits} for whole reais, or use two decimals (1.234,00)`,
  tooManyDecimals: ({ shown }) =>
    `${shown} has more than two decimal places: amounts are reais and cents, like 1.234,56`,
  mixedThousands: ({ shown, separators }) =>
    `${shown} mixes thousands separators (${separators.map((s) => (s === ' ' ? 'space' : `"${s}"`)).join(' and ')}): use one kind, like 1.234.567,89`,
  misplacedThousands: ({ shown }) => `${shown} ${THOUSANDS_PLACES}`,
  misplacedSpace: ({ shown }) =>
    `"${shown}" has a space that does not separate thousands: a space may only stand between groups of three digits (1 234,56); remove it, or check the amount`,
  centsNegative: ({ shown }) => `${shown} is negative: a payout must be more than zero`,
  centsWithDecimals: ({ shown }) =>
    `${shown} is not whole cents: this column holds cents (1250 for R$ 12,50); for reais, name the column "amount" or "valor"`,
  notCents: ({ shown }) => `"${shown}" is not a whole number of cents (1250 for R$ 12,50)`,
  zerosRestored: ({ written, read }) => `leading zeros restored: ${written} read as ${read}`,
  documentScientific: ({ text }) =>
    `"${text}" was turned into scientific notation by the spreadsheet: format the column as text and type the number again`,
  documentCharacters: ({ text }) =>
    `"${text}" is not a CPF or CNPJ (only digits, with . - / allowed)`,
  cnpjCheckDigits: ({ text }) => `${text} is not a valid CNPJ (the check digits do not match)`,
  notCpfOrCnpj: ({ text }) =>
    `${text} is not a CPF (11 digits) or a CNPJ (14 characters) with valid check digits`,
  cnpjEvenRestored: ({ digits, restored, keepZeros }) =>
    keepZeros
      ? `${digits} is not a valid CNPJ, even with its leading zeros restored (${restored}): check it, and ${KEEP_ZEROS}`
      : `${digits} is not a CNPJ with valid check digits, even with its leading zeros restored (${restored})`,
  cpfOrCnpjWithoutZeros: ({ digits }) =>
    `${digits} lost its leading zeros and could be a CPF or a CNPJ: format the column as text and type it in full`,
  cpfRestored: ({ digits, restored, maybeCnpj }) =>
    `${digits} is not a valid CPF with its leading zeros restored (${restored}): ${maybeCnpj ? `check it; if it is a CNPJ, write all 14 digits (${KEEP_ZEROS})` : 'check it'}`,
  cpfCheckDigits: ({ text, hint }) =>
    `${text} is not a valid CPF (the check digits do not match)${
      hint === 'checkPerson'
        ? ": check it against the person's CPF"
        : hint === 'maybeCnpj'
          ? `: check it; if it is a CNPJ, write all 14 digits (${KEEP_ZEROS})`
          : ''
    }`,
  cpfWithSlash: ({ text, written }) =>
    `${text} has the 11 digits of a valid CPF, with a slash a CPF does not have: write it ${written}`,
  keyTypeUnknown: ({ text }) => `"${text}" is not a key type: use ${KEY_TYPES}`,
  keyNotRowDocument: ({ type, key, document }) =>
    `the ${type} key ${key} is not this row's document ${document}: a ${type} key is its owner's own document`,
  keyScientific: ({ key }) =>
    `"${key}" was turned into scientific notation by the spreadsheet: format the column as text and type the key again`,
  keyDocument: ({ type, problem }, say) => `is a ${type} key, but ${say(problem)}`,
  keyDocumentKind: ({ type, key, kind }) => `is a ${type} key, but ${key} is a ${kind}`,
  keyEmail: ({ key, problem }, say) => `is an EMAIL key, but "${key}" ${say(problem)}`,
  keyPhone: ({ key }) =>
    `is a TELEFONE key, but "${key}" is not a mobile number with area code (e.g. +55 11 98765-4321)`,
  keyRandom: ({ key }) =>
    `is a RANDOM_KEY, but "${key}" is not one (36 characters like 123e4567-e89b-12d3-a456-426614174000)`,
  keyCpfOrPhone: ({ key }) =>
    `${key} could be a CPF or a phone number: give its type (CPF or TELEFONE) in the key type column`,
  keyTypeUntold: ({ key }) =>
    `the type of key "${key}" cannot be told: give it in the key type column (${KEY_TYPES})`,
  emailKeyTooLong: ({ length, max }) =>
    `is ${length} characters long; a Pix e-mail key has at most ${max}`,
  emailKeySpace: () => 'has a space: an e-mail address has none',
  emailKeyNotAscii: ({ character }) =>
    `has "${character}", a character outside plain ASCII: Pix e-mail keys are ASCII only (no accents); check the key with the payee`,
  emailKeyShape: () =>
    'is not an e-mail address: it needs a name, one @ and a domain (like name@example.com)',
  emailKeyTwoDots: () => 'has two dots in a row',
  emailKeyDotAtEdge: () => 'starts or ends with a dot, before or after the @',
  emailKeyNameCharacter: ({ character }) =>
    `has "${character}" before the @, which a Pix e-mail key cannot hold`,
  emailKeyNoDomain: () => 'has no domain after the @ (like example.com)',
  emailKeyDomainUnderscore: () => 'has "_" in its domain (after the @), which a domain cannot hold',
  emailKeyDomainHyphen: ({ label }) => `has a domain part starting or ending with "-" ("${label}")`,
  emailKeyDomainPartLong: () => 'has a domain part longer than 63 characters',
  emailKeyDomainCharacter: ({ character }) =>
    `has "${character}" in its domain (after the @), which a domain cannot hold`,
  emailKeyNoDomainName: () => 'does not end in a domain name (like .com or .com.br)',
  notAFile: () => 'is not a file',
  fileMissing: () => 'does not exist: check its name and folder',
  fileUnreadable: ({ errorCode }) => `cannot be read (${errorCode})`,
  fileEmpty: () => 'is empty (0 bytes)',
  fileTooLarge: ({ bytes, limit }) =>
    `is ${bytes} bytes, over the limit of ${limit} (maxFileBytes): split it, or raise the limit`,
  fileBinary: () =>
    `is not a CSV text file: it holds NUL bytes (is it an .xlsx workbook, or UTF-16 without a byte-order mark?); ${SAVE_AS_CSV}`,
  notUtf8: ({ at }) =>
    `is not valid UTF-8 (${position(at)}) but encoding is set to utf-8: use auto or windows-1252, or ${SAVE_AS_CSV}`,
  mixedEncodings: ({ good, bad }) =>
    `mixes encodings: UTF-8 characters (${position(good)}) and bytes that are not UTF-8 (${position(bad)}); ${SAVE_AS_CSV}, or set encoding to the one it is in`,
  lineTooLong: ({ bytes, line, max }) =>
    `has a line of ${bytes} bytes (line ${line}), over ${max}: this is not a payout file`,
  headerUnusable: ({ line, problem }, say) =>
    `has a header (line ${line}) that cannot be used: ${say(problem)}`,
  tooManyColumns: ({ count, max }) =>
    `the header has ${count} columns; a payout file has at most ${max}`,
  sameColumnTwice: ({ first, second, field }) =>
    `columns "${first}" and "${second}" both give the ${FIELD_LABELS[field]}: keep one`,
  twoAmountColumns: ({ cents, reais }) =>
    `both "${cents}" (cents) and "${reais}" (reais) give the amount: keep one`,
  missingColumns: ({ fields }) =>
    `missing columns: ${fields
      .map((field) =>
        field === 'amountReais'
          ? `the amount: ${accepted('amountReais')}, or ${accepted('valueCents')}`
          : accepted(field),
      )
      .join('; ')}`,
  blankRun: ({ max, line }) =>
    `has more than ${max} blank lines in a row from line ${line}: this is not a payout file`,
  quoteNotClosed: ({ line }) =>
    `has a quote opened on line ${line} that is never closed, so the rest of the file cannot be read (was the file cut short?)`,
  recordTooLong: ({ line, max }) =>
    `has a record from line ${line} longer than ${max} characters: this is not a payout file, or a quote is missing`,
  notCsv: ({ line, detail }) => `cannot be read as CSV from line ${line}: ${detail}`,
  noHeader: () => 'has no header row (only blank lines)',
  noRows: () => 'has a header but no payout rows',
  totalLineUnreadable: ({ line, text }) =>
    `the total line (line ${line}) gives an amount that cannot be read ("${text}"), so the file cannot be checked against it`,
  sidecarLine: ({ sidecar, line, text }) =>
    `${sidecar} line ${line} ("${text}") is not "rows: N", "total: 1.234,56" or "cents: 123456"`,
  sidecarSaysNothing: ({ sidecar }) =>
    `${sidecar} gives neither a row count ("rows: N") nor a sum ("total: 1.234,56")`,
  controlUncheckable: ({ source: from, cents, lines }) =>
    `${source(from)} gives a sum of ${formatCents(cents)}, which cannot be checked while the amounts on line ${lines.slice(0, 5).join(', ')}${lines.length > 5 ? '…' : ''} cannot be read: fix them and drop the file again`,
  controlMismatch: ({ source: from, file, control }) =>
    `control total mismatch: the file has ${rowsAndSum(file)}, but ${source(from)} says ${rowsAndSum(control)}; the file may be truncated or edited, so none of it is paid: export it again, or fix the rows or the total, and drop the corrected file in the inbox`,
  overFileLimit: ({ cents, limitCents }) =>
    `its valid rows add up to ${formatCents(cents)}, over the limit of ${formatCents(limitCents)} per file (maxFileCents)`,
  fileChanged: () =>
    'the file changed while it was being read (still being written?): nothing of it is sent; it is read again as a new file once it stops changing',
  fileOld: ({ changedAt, ageMs }) =>
    `it was last changed ${ageMs < DAY_MS ? plural(Math.floor(ageMs / 3_600_000), 'hour') : plural(Math.floor(ageMs / DAY_MS), 'day')} ago (on ${day(changedAt)}), longer ago than duplicateWindow: it may be an old file dropped again, so none of it is paid; if it is due now, save it again and drop it in the inbox`,
  heldJournaled: ({ orderId, file, line, at, state, retry, hintFlags }) =>
    `orderId ${orderId} is already journaled from ${file}, line ${line}, on ${day(at)} (now ${state}): not sent again${retry ? `; to send that payment again on purpose, run: payouts retry ${orderId}${hintFlags}` : ''}. If this is another payment, give it an orderId of its own`,
  heldDuplicate: ({ file, line, at, state, transactionId, newFile, hintFlags }) =>
    `possible duplicate: the same document and amount as ${file}, line ${line}, journaled on ${day(at)} (now ${state}${transaction(transactionId)}); not sent. If it is a new payment after all: payouts approve "${newFile}" --new-batch${hintFlags} lists it, and pays it again only when also given the option --repeats and the count of such rows it lists`,
  heldSameReference: ({ reference, file, line, at, state, transactionId, ...held }) =>
    `possible duplicate: the same reference (${reference}) for the same document as ${file}, line ${line}, journaled on ${day(at)} (now ${state}${transaction(transactionId)}; ${formatCents(held.paidCents)} there, ${formatCents(held.cents)} here); held whatever its age, not sent. If it is a new payment after all: payouts approve "${held.newFile}" --new-batch${held.hintFlags} lists it, and pays it again only when also given the option --repeats and the count of such rows it lists`,
  heldCovered: ({ file, line, at, state, transactionId }) =>
    `already ${state === 'paid' ? 'paid' : 'sent'} by ${file}, line ${line}, on ${day(at)}${transaction(transactionId)}: not sent again`,
  heldChangesPaid: ({ file, line, state, paidCents, cents }) =>
    `changes a row ${file} already ${state === 'paid' ? 'paid' : 'sent'} (line ${line}, the same document, ${formatCents(paidCents)} there, ${formatCents(cents)} here): not sent as a new payment; if it corrects that amount, pay the difference in a file of its own; if it is another payment, pay it in a file of another name`,
  heldChangesPayee: ({
    file,
    line,
    at,
    state,
    transactionId,
    cents,
    paidKey,
    paidName,
    key,
    name,
    newFile,
    hintFlags,
  }) =>
    `changes the Pix key or name of ${file}, line ${line}: its ${formatCents(cents)} ${state === 'paid' ? 'went' : 'was sent'} to Pix key ${paidKey} (${paidName}) on ${day(at)}${transaction(transactionId)}; this row names ${key} (${name}). Not paid here, and not sent: if the money went to the wrong person, ask the receiver to return it through their bank, then pay the right key: payouts approve "${newFile}" --new-batch${hintFlags} lists this row as a repeat of that payout, and pays it only when you also give it the option --repeats with the count it lists`,
  heldFailedBefore: ({ file, line, orderId, transactionId, state, hintFlags }) =>
    `repeats ${file}, line ${line} (orderId ${orderId}${transaction(transactionId)}), which ${state === 'rejected' ? 'the gateway refused' : `ended ${state} at the gateway`}: a failed payout is not sent again because a file repeats it; to send it again on purpose, run: payouts retry ${orderId}${hintFlags}`,
  heldForCopy: ({ file, batchId, at, earlierBatchId, hintFlags }) =>
    `not sent while a later file of the same name, ${file} (batch ${batchId}, ${day(at)}), waits for a person, even once the balance covers it: if it corrects this file, run: payouts approve "${file}" --corrects ${earlierBatchId}${hintFlags} (only its rows are paid); if it is a new payroll, run: payouts approve "${file}" --new-batch${hintFlags} (both are paid)`,
  heldIdentical: ({ line, file, hintFlags }) =>
    `identical to line ${line} of this file (the same name, document, Pix key and amount): not sent until a person confirms both are due: payouts approve "${file}" --identical${hintFlags}`,
  heldSameName: ({ file, batchId, at, newFile, hintFlags, repeats = [], moreRepeats = 0 }) =>
    `held with its whole file: it has the same name as ${file} (batch ${batchId}, ${day(at)}) and repeats some of its rows${whichRepeat(repeats, moreRepeats)}, so it may be that file again or the next payroll; if it is a new payroll, run: payouts approve "${newFile}" --new-batch${hintFlags}`,
  english: ({ text }) => text,
  rowsRepeatInFile: ({ rows, cents, example }, say) =>
    `${rows === 1 ? '1 row repeats' : `${rows} rows repeat`} an earlier row of the same file exactly (${formatCents(cents)}), held for a person: ${say(example)}`,
  rowsChangePaid: ({ rows, example }, say) =>
    `${rows === 1 ? '1 row changes' : `${rows} rows change`} a payout already made, held for a person: ${say(example)}`,
  copyFreezes: ({ file, batchId, rows, cents, newFile, hintFlags }) =>
    `while it waits, nothing of ${file} (batch ${batchId}: ${plural(rows, 'row')}, ${formatCents(cents)}) is sent, even once the balance covers it: if this file corrects it, run: payouts approve "${newFile}" --corrects ${batchId}${hintFlags} (only this file's rows are paid); if it is a new payroll, run: payouts approve "${newFile}" --new-batch${hintFlags} (both are paid)`,
  rowsRepeatFailed: ({ rows, cents, file, hintFlags, example }, say) =>
    `${rows === 1 ? '1 row repeats' : `${rows} rows repeat`} unchanged a payout that failed at the gateway (${formatCents(cents)}): a failed payout is never sent again because a file repeats it; to send it again on purpose, run: payouts retry "${file}"${hintFlags} (e.g. ${say(example)})`,
  heldRowAt: ({ line, name, cents, why }, say) =>
    `line ${line}: ${name}, ${formatCents(cents)}: ${say(why)}`,
  heldRowsMore: ({ rows }) =>
    `… and ${rows} more held ${rows === 1 ? 'row' : 'rows'}, all in the result file`,
  rowsRepeatOtherFile: ({ rows, cents }) =>
    `${rows === 1 ? '1 row repeats' : `${rows} rows repeat`} a payout of another file, by document and amount or by reference (${formatCents(cents)}): not sent until a person answers; each answer pays:`,
  namedAsEarlier: ({ file, batchId, at, repeats = [], moreRepeats = 0 }) =>
    `held with its whole file: it has the same name as ${file} (batch ${batchId}, ${day(at)}) and repeats some of its rows${whichRepeat(repeats, moreRepeats)}; only a person can tell what it is, and each answer pays:`,
  readingCorrects: ({ file, batchId, pays, hintFlags }) =>
    `the same file, corrected (rows added or fixed): payouts approve "${file}" --corrects ${batchId}${hintFlags} pays ${plural(pays.rows, 'row')} (${payees(pays)}); what batch ${batchId} paid is not paid again`,
  readingNewBatch: ({ file, pays, repeating, hintFlags }) => {
    const command = `payouts approve "${file}" --new-batch${hintFlags}`;
    const those =
      repeating.rows === 1 ? 'the 1 row that repeats' : `the ${repeating.rows} rows that repeat`;
    const again =
      repeating.rows === 1
        ? 'paid again only when you also give it the option --repeats with the number 1, once you have checked it is due twice'
        : `paid again only when you also give it the option --repeats with their count, ${repeating.rows}, once you have checked each is due twice`;
    if (pays.rows === 0) {
      return `new payments after all: ${command} lists ${those} a payout already made or under way (${payees(repeating)}); ${repeating.rows === 1 ? 'it is' : 'they are'} ${again}`;
    }
    const fresh = `a new payroll: ${command} pays ${pays.rows === 1 ? 'the 1 row that repeats' : `the ${pays.rows} rows that repeat`} nothing (${payees(pays)})`;
    return repeating.rows === 0
      ? fresh
      : `${fresh}; ${those} a payout already made or under way (${payees(repeating)}) ${repeating.rows === 1 ? 'is' : 'are'} ${again}`;
  },
  orderIdsJournaled: ({ rows, example }, say) =>
    `${rows === 1 ? '1 row has an orderId' : `${rows} rows have orderIds`} already journaled from another file: not sent (${say(example)})`,
  pendingTooLong: ({ rows, age, orderId, hintFlags }) => {
    const lookUp = `payouts get --order-id ${orderId}${hintFlags}`;
    return rows === 1
      ? `1 pending for ${age} since it was sent: look it up at the gateway (${lookUp}); Pix settles in seconds`
      : `${rows} pending for up to ${age} since they were sent: look them up at the gateway (the oldest: ${lookUp}); Pix settles in seconds`;
  },
  resultNotWritten: ({ path, why }) =>
    `its result file ${path} could not be written (${why}); it is written again on the next run`,
  balanceShortfall: ({ cents, count, feeCents, availableCents, readError }) => {
    const fees = feeCents * count;
    const described =
      fees === 0
        ? formatCents(cents)
        : `${formatCents(cents + fees)} (${formatCents(cents)} in ${plural(count, 'payout')} and ${formatCents(fees)} in fees at ${formatCents(feeCents)} each, feePerPayoutCents)`;
    return availableCents === undefined
      ? `the balance could not be read (${readError ?? 'no answer'}), so ${described} cannot be checked against it`
      : `the balance leaves ${formatCents(availableCents)} for this batch's ${described}`;
  },
  balanceBlocks: ({ shortfall }, say) =>
    `${say(shortfall)} (balanceCheck: block): nothing of it is sent`,
  waitingToSettle: ({ settle, file }) =>
    `waiting for it to settle: it is taken once its size and time have not changed for ${settle} (inboxSettle), or when a ${file}.done beside it says it is complete`,
  processingFull: () =>
    'nine files of that name are still in processing/: it is taken once one of them is archived',
  takenByHost: ({ host }) =>
    `the host ${host} is taking it in: its rows are sent by whichever host is free once it has read it whole`,
  cannotRead: ({ systemCode, permission }) =>
    permission
      ? `cannot be read (${systemCode}): the user running payouts may not read it (it was saved readable by its owner only); give it read access and drop it in the inbox again, and see payouts doctor for making every file dropped in the inbox readable`
      : `cannot be read (${systemCode}): check the file and the disk, then drop it in the inbox again`,
  awaitingApproval: ({ file, hintFlags }) =>
    `nothing of it is sent until a person moves it into approved/ or runs: payouts approve "${file}"${hintFlags} (its .report.txt says what would be sent)`,
  answerApproves: () =>
    'an answer above that frees a row approves the file too: the next run sends the freed rows with the rest of it',
  replacedByCopy: ({ copyFile, copyBatchId, at, next }) =>
    `replaced by its corrected copy ${copyFile} (batch ${copyBatchId}), which arrived ${moment(at)}: nothing of it is sent${copyWaits(next)}`,
  fileReplaced: ({ verb, file, batchId, copyFile, copyBatchId, at, next }) =>
    `${verb ? `payouts ${verb}: ` : ''}${file} (batch ${batchId}) was replaced by its corrected copy ${copyFile} (batch ${copyBatchId}), which arrived ${moment(at)}: nothing of it is sent, and nothing is left to approve${copyWaits(next)}`,
  cutShort: ({ file }) =>
    `a run stopped while reading ${file}, and the file is no longer in processing/: none of its rows is sent until the same file is dropped in the inbox again`,
  fileNotInProcessing: ({ file }) =>
    `${file} is no longer in processing/: its rows are still sent and followed, and its result is written in results/`,
  takenOnceRenamed: () => 'it is taken once it is renamed to its final name',
  hiddenPayoutFile: () =>
    'none of its rows is paid: rename it without the leading dot to have it paid, or remove it',
  notARegularFile: () => 'put the payout file itself in the inbox',
  clockBehindJournal: ({ nowMs, latestMs, timeZone }) =>
    `this computer's clock reads ${instant(nowMs, timeZone)} (${timeZone}), before ${instant(latestMs, timeZone)}, the latest time in the journal: nothing was done. The rules on who is paid compare these times, and a clock that went back could pay a file again. Set the host's clock right (turn on NTP time sync, e.g. timedatectl set-ntp true) and run again`,
  hostClockOff: ({ host, offsetMs, way, boundMs, watching }) =>
    `the clock of host ${host} reads ${Math.round(Math.abs(offsetMs) / 1000)} s ${way} of the journal's database, more than maxClockSkew (${Math.round(boundMs / 1000)} s) allows: it pays nothing until its clock is set right. Keep it by NTP (chrony or systemd-timesyncd), then ${watching ? 'it goes on by itself' : 'run again'}`,
  journalNewerSchema: ({ path, schema, latest }) =>
    `the journal ${path} is at schema version ${schema}, newer than this program knows (${latest}): use a newer payouts (payouts --version says which this is). Nothing was sent`,
  journalMoved: ({ address, at }) =>
    `the journal of this home was moved to PostgreSQL (${address}) on ${instant(at, 'UTC')} UTC by payouts journal copy, and is no longer worked with here: set journal (PAYOUTS_JOURNAL) to that database's URL on every host of this home`,
  journalOnNetworkFilesystem: ({ folder, fsType }) =>
    `the journal folder ${folder} is on a network filesystem (type ${fsType}): SQLite locking is not safe there; put the home folder on a local disk. Nothing was sent`,
  retryIdTaken: ({ orderId, retryId }) =>
    `${orderId}: cannot be sent again as ${retryId}: that orderId is already in the journal (from another file); nothing changed`,
  journalRefused: ({ detail }) =>
    `the journal refused the change (${detail}): what it had committed before stays as it was; run again`,
  releaseTurnedDown: () =>
    'it was turned down (payouts reject); to send it after all, drop it in the inbox to be validated again',
  releaseAlreadyReleased: () => 'these bytes were already released: nothing is sent twice',
  releaseUnknownBytes: () =>
    'its bytes match no file awaiting approval (changed since it was validated?): drop it in the inbox to be validated again',
  heldForBalance: ({ why }, say) =>
    `held: ${why === null ? 'the balance did not cover this file' : say(why)}; checked again on every run`,
  heldWithFile: ({ problems, state }, say) =>
    `held, nothing in this file is sent: ${problems.map(say).join('; ') || state}`,
  coverUndone: ({ orderId, file, line, state, own, hintFlags }) =>
    `not paid: the payout that covered it (${orderId}, ${file}, line ${line}) ${UNDONE[state] ?? state}; it is paid again only by retrying that payout (payouts retry ${orderId}${hintFlags}), never this row. ${own}`,
  takenOverByLine: ({ state, line, file }) =>
    `was ${state}, never sent; taken over by line ${line} of ${file}`,
  takenOverBy: ({ file }) => `never sent; taken over by ${file}`,
  leftOutByCopy: ({ file }) => `never sent; changed or left out by its corrected copy ${file}`,
  correctedIn: ({ first, file }, say) => `${say(first)}; corrected in ${file}`,
  sentAgainOnPurpose: ({ by, at, retryId, earlier }) =>
    `${earlier === null ? '' : `${earlier}; `}sent again on purpose by ${by} on ${day(at)} (payouts retry), as ${retryId}`,
  repeatSentAgain: ({ by, at, retryId }) =>
    `the payout it repeats is sent again on purpose by ${by} on ${day(at)} (payouts retry), as ${retryId}: not sent from this file`,
  auditJournaled: ({ batchId, line }) => `journaled from batch ${batchId}, line ${line}`,
  auditReplaced: ({ batchId, line }) =>
    `replaced by batch ${batchId}, line ${line}: the earlier payload never reached the gateway`,
  auditClaimed: ({ owner, attempt }) => `claimed by ${owner} (attempt ${attempt})`,
  auditCheckedAgain: ({ when, said }, say) =>
    `${when === 'claimed' ? 'checked again as it was claimed' : 'weighed as the correction was answered'}: ${say(said)}`,
  auditLookedUpAfterLoss: () =>
    'recovery: looked up at the gateway before its first send from this journal (the lost journal may have sent it)',
  auditLeaseEnded: ({ owner }) =>
    `no answer recorded before its lease ended: resolving by lookup (${owner})`,
  auditResending: ({ notFound, secondsSinceSent }) =>
    `not found ${notFound} times, the last just now, ${secondsSinceSent}s after its last send: sending again with the same orderId`,
  auditClaimedNotSent: ({ why }, say) => `claimed and not sent (${say(why)}): queued again`,
  auditClaimedAheadNotSent: ({ why }, say) =>
    `claimed ahead of its request and not sent (${say(why)}): queued again`,
  auditClaimTooOld: () =>
    'not sent: its claim was older than half its lease when its request was to leave (the process was stopped or paused); given back',
  runStopped: () => 'the run stopped',
  runFailed: () => 'the run failed',
  sendingPaused: () => 'sending paused',
  claimWaitedTooLong: () => 'it waited too long for a free place',
  auditBalanceCovers: () => 'the balance now covers its batch',
  auditFrozen: ({ said }, say) => `frozen: ${say(said)}`,
  auditUnfrozen: ({ why }, say) => `unfrozen: ${say(why)}`,
  auditCoverEnded: ({ orderId, state, said }, say) =>
    `the payout that covered it, ${orderId}, ended ${state}: ${say(said)}`,
  auditRetry: ({ attempt, base, orderId, state, why }, say) =>
    `attempt ${attempt} of ${base}, after ${orderId} ${state}: ${say(why)}`,
  auditRetriedAs: ({ why, retryId }, say) => `${say(why)}, as ${retryId}`,
  auditSentAgainBy: ({ by, at }) => `sent again on purpose by ${by} on ${day(at)} (payouts retry)`,
  auditNameWeighed: () => 'weighed against the files of its name that day',
  auditRepeatsFailed: () => 'a repeat of a failed payout',
  auditCorrectedCopyOf: ({ batchId }) => `a corrected copy of batch ${batchId}`,
  auditCopyTurnedDown: ({ why }, say) =>
    `the copy that had taken it over was turned down (${say(why)})`,
  auditFreezerTurnedDown: ({ why }, say) =>
    `the later file that froze it was turned down (${say(why)})`,
  auditCovered: ({ why, said }, say) => `${say(why)}: ${say(said)}`,
  auditTakenOver: ({ why, by }, say) => `${say(why)}: taken over by ${by}`,
  auditTakesOver: ({ why, orderId }, say) => `${say(why)}: takes over ${orderId}`,
  auditReplaces: ({ why }, say) => `${say(why)}: replaces a row that needed a person`,
  auditLeftOut: ({ why, file }, say) => `${say(why)}: changed or left out by ${file}`,
  auditGivenBack: ({ why }, say) => `given back: ${say(why)}`,
  auditCoveredByRetry: ({ retryId, why }, say) => `covered by ${retryId}, ${say(why)}`,
  eventApproved: ({ count, cents }) => `${plural(count, 'payout')}, ${formatCents(cents)}`,
  eventReason: ({ reason }) => reason,
  eventIdenticalDue: ({ rows }) =>
    `${plural(rows, 'identical row')} ${rows === 1 ? 'is' : 'are'} due`,
  eventCorrects: ({ batchId }) => `a corrected copy of batch ${batchId}`,
  eventNewPayments: ({ rows, confirmed, repeating }) =>
    `${plural(rows, 'held row')} ${rows === 1 ? 'is a new payment' : 'are new payments'}${
      confirmed
        ? `; ${repeating.length} of them repeat payouts, as the person confirmed: ${repeating.map(repeatOf).join('; ')}`
        : repeating.length > 0
          ? `; ${plural(repeating.length, 'row')} that repeat payouts stay held`
          : ''
    }`,
  eventReplacedBy: ({ batchId }) => `by its corrected copy, batch ${batchId}`,
  eventMovedIntoApproved: () => 'moved into approved/',
  eventSentAgainAs: ({ line, orderId, state, retryId }) =>
    `line ${line}: ${orderId} (${state}) sent again as ${retryId} (payouts retry)`,
  pendingTooLongIn: ({ file, rows, age, orderId, hintFlags }) =>
    `payouts run: ${rows === 1 ? `1 payout pending for ${age} since it was sent` : `${rows} payouts pending for up to ${age} since they were sent`}, in ${file}: a person must look it up at the gateway (payouts get --order-id ${orderId}${hintFlags}); nothing is sent again meanwhile`,
  approvedSentNow: ({ file }) => `${file}: approved; it is sent now`,
  progress: ({ total, sent, sending, toCheck, settled, perSecond }) =>
    [
      `${sent}/${total} sent`,
      ...(sending > 0 ? [`${sending} sending`] : []),
      ...(toCheck > 0 ? [`${toCheck} to check`] : []),
      `${settled} settled`,
      `${perSecond.toFixed(1)} rows/s`,
    ].join(' · '),
  progressLine: ({ progress }, say) => `progress: ${say(progress)}`,
  approved: ({ file, batchId, count, cents }) =>
    `${file} (batch ${batchId}): approved: ${plural(count, 'payout')}, ${formatCents(cents)} in all. A running \`payouts watch\` sends them now; otherwise the next \`payouts run\` does.`,
  linkedAsCopy: ({ file, batchId, corrects, by, count }) =>
    `${file} (batch ${batchId}): linked as a corrected copy of batch ${corrects} by ${by}; ${plural(count, 'payout')} to be sent by the next run.`,
  releasedIdentical: ({ file, batchId, count, cents, by }) =>
    `${file} (batch ${batchId}): ${plural(count, 'payout')}, ${formatCents(cents)}, released by ${by} as due besides their identical rows; the next run sends them.`,
  notAwaiting: ({ verb, file, waiting }) =>
    `payouts ${verb}: no file named "${file}" is waiting for approval (waiting: ${waiting.join(', ') || 'none'})`,
  approveOneAnswer: () =>
    'payouts approve: give one of --new-batch, --identical and --corrects at a time',
  approveOptionsNeedNewBatch: () =>
    'payouts approve: --repeats, --rows and --except go with --new-batch',
  approveRowsOrExcept: () => 'payouts approve: give --rows or --except, not both',
  approveChanged: ({ file }) =>
    `payouts approve: ${file} changed since it was validated (its bytes match no waiting batch): nothing approved; drop it in the inbox to be validated again`,
  approveNoFreeName: ({ file }) => `payouts approve: approved/ has no free name for ${file}`,
  approveNoBatch: ({ batchId }) => `payouts approve: there is no batch ${batchId}`,
  approveNothingHeld: ({ file, hintFlags }) =>
    `payouts approve: no file named "${file}" has rows held as possible duplicates, for its name or as identical rows: nothing changed (payouts status${hintFlags} lists every file)`,
  turnedDownBy: ({ reason }) => `turned down by a person: ${reason}`,
  releasedIdenticalBy: ({ by }) =>
    `released by ${by}: both identical rows are due (payouts approve --identical)`,
  releasedNewBy: ({ by, repeats }) =>
    `released by ${by}: new payments, not copies of an earlier file (payouts approve --new-batch${repeats === null ? '' : ` --repeats ${repeats}`})`,
  linkedCopyBy: ({ by, batchId }) =>
    `linked by ${by} as a corrected copy of batch ${batchId} (payouts approve --corrects)`,
  turnedDown: ({ file, batchId, moved }) =>
    `${file}${batchId === null ? '' : ` (batch ${batchId})`}: turned down${moved ? ' and moved to rejected/' : ''}; none of its rows will be sent. A corrected file may be dropped in the inbox.`,
  rejectNoLongerWaiting: ({ file }) =>
    `payouts reject: ${file} is no longer waiting (approved meanwhile?): nothing changed`,
  retryQueued: ({ file, batchId, count, cents, by }) =>
    `${file} (batch ${batchId}): ${plural(count, 'payout')}, ${formatCents(cents)}, to be sent again, asked by ${by}; the next run sends ${count === 1 ? 'it' : 'them'}:`,
  retryLine: ({ line, from, to }) => `line ${line}: ${from} -> ${to}`,
  retryNotFailed: ({ orderId, state, retriedAs }) =>
    `payouts retry: ${orderId} is ${state}${retriedAs === null ? '' : `: it was sent again already, as ${retriedAs}`}; only a payout that failed, was refused, canceled or refunded is sent again. Nothing changed`,
  retryNothing: ({ target, file, hintFlags }) =>
    `payouts retry: no orderId "${target}", and no file named "${file}" with a payout that failed, was refused, canceled or refunded and not sent again yet: nothing changed (payouts status${hintFlags} lists every file)`,
  templateWritten: ({ path }) => `Written: ${path}`,
  templateHowToFill: ({ path }) =>
    `Fill one row per payment (Valor as 1.234,56; CPF/CNPJ with or without its dots; Tipo de chave and ID do pagamento may stay empty), then ${SAVE_AS_CSV.replace('save it again', 'save it')}, and check it with: payouts validate "${path}"`,
  templateExists: ({ path }) =>
    `payouts template: ${path} already exists: nothing was written (give another name, or remove it first)`,
  journalCopyNotPostgres: () =>
    'payouts journal copy: --to takes the URL of a PostgreSQL database, as postgres://user:password@host:5432/payouts: nothing copied',
  journalCopyBusy: ({ command, pid, host, since }) =>
    `payouts journal copy: another payouts process (${command === null ? '' : `payouts ${command}, `}pid ${pid} on ${host}, since ${new Date(since).toISOString()}) is working on this home folder: nothing copied, for a copy of a journal being written would not be exact. Stop it (the daemon, cron's runs), then copy again.`,
  journalCopyStarted: ({ from, to }) =>
    `Copying the journal ${from} into ${to}, in one transaction: cut short, it leaves the database empty.`,
  journalCopyCopied: ({ batches, payouts, lines, audit, events, journalId }) =>
    `Copied: ${batches} ${batches === 1 ? 'batch' : 'batches'}, ${plural(payouts, 'payout')}, ${lines} ${lines === 1 ? 'line that is not a payout' : 'lines that are not payouts'}, ${audit} ${audit === 1 ? 'audit entry' : 'audit entries'}, ${plural(events, 'batch event')}; the journal keeps its identity (${journalId}), so its orderIds and its loss check go on as before.`,
  journalCopyCompared: ({ batches }) =>
    `Rows and sums by state, in SQLite and in PostgreSQL (and in ${batches === 1 ? 'the one batch with payouts' : `each of the ${batches} batches with payouts`}, the same in both):`,
  journalCopyState: ({ state, sqlite, postgres }) =>
    `${state.padEnd(12)} ${String(sqlite.count).padStart(8)} ${formatCents(sqlite.cents).padStart(18)}   ${String(postgres.count).padStart(8)} ${formatCents(postgres.cents).padStart(18)}`,
  journalCopyNext: ({ address }) =>
    `Next: on every host of this home, set journal to the database's URL (PAYOUTS_JOURNAL=${address}, its password as you gave it), then start payouts again. The SQLite journal is marked moved: from now on every command refuses to work with it (payouts status still reads it), so no row is paid from both journals. Keep it as a record; docs/postgres.md says how to go back to it.`,
  journalCopyNotEmpty: ({ address, tables, schema }) =>
    `payouts journal copy: the database ${address} is not empty (${tables.length > 0 ? `tables with rows: ${tables.join(', ')}` : `a journal of schema version ${schema}`}): nothing was written. Copy into a new, empty database (CREATE DATABASE payouts).`,
  journalCopyDiffers: ({ address, batches }) =>
    `payouts journal copy: the copy in ${address} did not hold the same rows and sums as the journal${batches.length > 0 ? ` (batches ${batches.join(', ')})` : ''}: it was rolled back, nothing was written. Report this; the journal is unchanged.`,
  journalCopyLockLost: () =>
    'payouts journal copy: the home folder lock was lost while copying (this process stalled, or another took it over): the copy was rolled back, nothing was written. Copy again.',
  releasedByHost: ({ host }) =>
    `the host ${host} is releasing it: its rows are sent by whichever host is free once it is in processing/`,
  journalCompactNothing: ({ before }) =>
    `Nothing to compact: no finished batch received before ${before} has history left in the journal.`,
  journalCompactStarted: ({ before, batches, entries, archive }) =>
    `Moving the history of ${batches} ${batches === 1 ? 'finished batch' : 'finished batches'} received before ${before} (${entries} ${entries === 1 ? 'audit entry' : 'audit entries'}) into ${archive}, a thousand payouts at a time: stopped, run it again.`,
  journalCompactDone: ({ batches, entries, archive, longestHoldMs }) =>
    `Moved: ${entries} ${entries === 1 ? 'audit entry' : 'audit entries'} of ${batches} ${batches === 1 ? 'batch' : 'batches'}, now in ${archive}; the journal was held for writing at most ${longestHoldMs} ms at a time. Every orderId, and all the rules on who is paid read, stay.`,
  journalCompactBytes: ({ fileBefore, walBefore, fileAfter, walAfter, free, checkpointed }) =>
    `Journal ${bytes(fileBefore)} + WAL ${bytes(walBefore)} before, ${bytes(fileAfter)} + WAL ${bytes(walAfter)} after${checkpointed ? '' : ' (a reader was still on the WAL: the next checkpoint empties it)'}; ${bytes(free)} of the file is free, filled by new payouts before the file grows again.`,
  hostClockUnknown: ({ host, roundTripMs, boundMs, watching }) =>
    `the clock of host ${host} could not be measured against the journal's database: each reading took ${roundTripMs} ms or so, too long to tell whether it is within maxClockSkew (${Math.round(boundMs / 1000)} s): it pays nothing until a reading tells. Check the network and the load between this host and the database, then ${watching ? 'it goes on by itself' : 'run again'}`,
  journalCompactTables: ({ tablesBefore, auditBefore, tablesAfter, auditAfter, vacuumed }) =>
    `Journal tables ${bytes(tablesBefore)} (audit ${bytes(auditBefore)}) before, ${bytes(tablesAfter)} (audit ${bytes(auditAfter)}) after, by pg_total_relation_size; ${vacuumed ? "VACUUM made the freed rows' space reusable: new payouts fill it before the tables grow again" : "VACUUM could not run now: autovacuum makes the freed rows' space reusable later"}. VACUUM FULL audit gives it back to the disk, but locks the table: only while no payouts process runs.`,
  historyMoved: ({ archive }) => `history moved out of the journal into ${archive}`,
  fourEyesWaits: ({
    file,
    dropper,
    approvers,
    approvalCode,
    approvedBy,
    needed,
    second,
    hintFlags,
  }) =>
    `nothing of it is sent until ${needed === 2 ? 'two approvers' : 'an approver'} (${approvers.join(', ') || 'none named but its dropper'}; not ${dropper}, who dropped it) ${needed === 2 ? 'each leave' : 'leaves'} in awaiting-approval/ a file ${file}.aprovado (or ${file}.NAME.aprovado) holding its approval code ${approvalCode}, or ${needed === 2 ? 'each run' : 'runs'} under their own login: payouts approve "${file}"${hintFlags}; moving it into approved/ releases nothing${
      approvedBy.length > 0 ? `; approved so far by ${approvedBy.join(' and ')}` : ''
    }${
      second === null
        ? ''
        : second.rule === 'above'
          ? `; two approvers: its total ${formatCents(second.cents)} is above secondApprovalAbove (${formatCents(second.limit)})`
          : `; two approvers: with ${formatCents(second.cents)} approved today, it would pass dailyLimit (${formatCents(second.limit)})`
    }`,
  fourEyesNoApprovers: ({ file }) =>
    `${file}: nothing of it is released: fourEyes is on and the setting approvers names nobody; set it in the settings file (PAYOUTS_APPROVERS=ana,bruno,@financeiro)`,
  fourEyesRefused: ({ file, owner, rule, dropper, approvers }) =>
    `${file} (of ${owner}) releases nothing: ${
      {
        'not-a-file': 'it is not a regular file of at most 4 KB',
        writable: 'others than its owner may write it (save it with mode 0640 or 0600)',
        service: `it is the service's or root's: approvals are made by people under their own login`,
        dropper: `${dropper} dropped the file, and may not approve it`,
        'not-approver': `${owner} is not named in the setting approvers`,
        'other-code':
          'it does not hold the approval code of the file as it is now (see its .report.txt)',
        'changed-file':
          'the file changed since its report: no approval releases it; drop it again as a new file',
        linked:
          "it has other names too (hard links), so it may be another person's approval: an approval is a file of its own, saved by its approver",
      }[rule]
    }; who may approve: ${approvers.join(', ') || 'nobody yet (set approvers)'}`,
  fourEyesMovedBack: ({ file }) =>
    `${file}: moved into approved/ by hand, which under four eyes cannot say who released it: back in awaiting-approval/; its .report.txt says how to approve it`,
  fourEyesCode: ({ approvalCode, batchId, count, cents }) =>
    `Approval code: ${approvalCode} (batch ${batchId}: ${plural(count, 'payout')}, ${formatCents(cents)}, these very bytes)`,
  eventFourEyesApproved: ({ approvalCode, count, cents, needed, via }) =>
    `approval code ${approvalCode}: ${plural(count, 'payout')}, ${formatCents(cents)} (${via}; ${needed === 2 ? 'two approvers needed' : 'one approver needed'})`,
  eventDropped: ({ uid }) => `dropped into inbox/ (uid ${uid})`,
  fourEyesByService: ({ user }) =>
    `payouts approve: approvals are made by people under their own login, never as ${user}: each approver runs payouts approve under their own user, or leaves FILE.aprovado holding the approval code in awaiting-approval/. Nothing was approved.`,
  fourEyesApprovalWritten: ({ file, approvalFile, approvalCode, by, rejects }) =>
    `${file}: your ${rejects ? 'rejection' : 'approval'} as ${by} is in awaiting-approval/${approvalFile}, with the approval code ${approvalCode}; the service weighs it on its next run`,
  fourEyesNoCode: ({ file }) =>
    `payouts approve: ${file}.report.txt has no approval code yet: wait for the service's next run, then approve again. Nothing was approved.`,
  fourEyesReleased: ({ file, approvedBy, approvalCode }) =>
    `${file}: approved by ${approvedBy.join(' and ')} (approval code ${approvalCode}); it is sent now`,
  fourEyesChanged: ({ file, approvalCode, hintFlags }) =>
    `${file} changed since its report: what it holds now was never checked, and no approval releases it (the approval code ${approvalCode} is of the file as it was reported). Drop the corrected file in the inbox again: it is checked and reported anew, with a new approval code to approve; then turn this one down (leave ${file}.rejeitado, or payouts reject "${file}" --reason "why"${hintFlags}). Or put back the file as it was reported`,
  fourEyesDecisionExists: ({ file, approvalFile, rejects }) =>
    `payouts ${rejects ? 'reject' : 'approve'}: awaiting-approval/${approvalFile} is there already: your ${rejects ? 'rejection' : 'approval'} of ${file} was left before, and is never written over. To change it, delete that file, then run this again. Nothing was written.`,
  fourEyesInboxRefused: ({ file, why, links, mode }) =>
    `${file} is not taken: under four eyes the person who dropped a file is its owner, and ${
      {
        link: "it is a symbolic link, whose target may be anyone's: copy the file itself into the inbox",
        'not-a-file': 'it is not a regular file: copy the file itself into the inbox',
        linked: `it has ${links} names (hard links), so it may be another person's file: copy it into the inbox as a file of its own (cp, not ln)`,
        writable: `others than its owner may change it (mode ${mode}): chmod 640 "${file}", or save it through a share with create mask 0640`,
      }[why]
    }. It stays in the inbox, and is taken on the run after`,
  fourEyesNotAsDropped: ({ file }) =>
    `${file}: the file read is not the one whose owner was checked in the inbox (it was replaced while it was taken in): nothing of it is sent; drop it again`,
  fourEyesAnswerReleased: ({ file, batchId, dropper, approvers }) =>
    `payouts approve: ${file} (batch ${batchId}) was released by its approvers; under four eyes its held rows are sent only once approvers release them, and nobody else's answer frees them (${dropper} dropped it). Answer while a file waits in awaiting-approval/, before its approvers release it, or drop these rows again in a new file, which waits for them. Who may approve: ${approvers.join(', ') || 'nobody yet (set approvers)'}. Nothing was freed.`,
  fourEyesDropped: ({ file, dropper }) =>
    `payouts approve: ${file} was dropped under four eyes (by ${dropper}): only approvers release it, each under their own login, by leaving ${file}.NAME.aprovado holding the approval code of its .report.txt in awaiting-approval/, or by payouts approve run as themselves where fourEyes is on. Nothing was approved.`,
  approvalsNone: ({ since }) => `No file was approved${since === null ? '' : ` since ${since}`}.`,
  approvalsRelease: ({ batchId, file, droppedBy, approvedBy, approvalCode, state, done }) =>
    `batch ${batchId}  ${file}  dropped by ${droppedBy ?? 'unknown'}  approved by ${approvedBy.map(({ by, at }) => `${by} at ${at}`).join(', ')}${approvalCode === null ? '' : `  code ${approvalCode}`}  ${state}: ${done}`,
  heldCoverConflict: ({ file, line, orderId, newFile, hintFlags }) =>
    `was covered by ${file}, line ${line} (orderId ${orderId}), but the gateway holds another transaction under that orderId (conflict): that payout may not have been made, so this row is not counted as paid, and it is not sent. Look it up at the gateway: payouts get --order-id ${orderId}${globalFlags(hintFlags)}; if it did not pay this person, payouts approve "${newFile}" --new-batch${hintFlags} lists this row, and pays it only when also given the option --repeats and the count of such rows it lists`,
  retryWhichBatch: ({ file, batches, hintFlags }) =>
    `payouts retry: ${batches.length} files named ${file} have payouts to send again (${batches.map((batch) => `batch ${batch.batchId}, arrived ${moment(batch.at)}`).join('; ')}): nothing is sent again. Say which with --batch and its number, as the run's summary gives it: payouts retry "${file}" --batch ${batches.at(-1)?.batchId ?? ''}${hintFlags}`,
};

/** `--help` as commander writes it in English, and our commands' own words. */
const help: HelpTexts = {
  headings: {
    'Usage:': 'Usage:',
    'Arguments:': 'Arguments:',
    'Options:': 'Options:',
    'Global Options:': 'Global Options:',
    'Commands:': 'Commands:',
  },
  placeholders: { '[options]': '[options]', '[command]': '[command]' },
  helpOption: 'display help for command',
  helpCommand: { name: 'help [command]', description: 'display help for command' },
  byDefault: ({ value }) => `(default: ${value})`,
  program: {
    description: 'Batch Pix payouts from accounting CSV exports, each paid exactly once.',
    options: {
      version: 'the version of payouts',
      config: 'JSON file of config keys, over config/default.json',
      settingsFile:
        'file of PAYOUTS_* settings, NAME=value a line, read as written (also PAYOUTS_SETTINGS_FILE); the environment wins over it',
      json: 'machine-readable output on stdout',
      quiet: 'no remarks on stderr, only results',
      sandbox:
        'run against the embedded sandbox on purpose, where no real money moves (as "gateway": "sandbox")',
    },
  },
  command: {
    validate: {
      description: 'check a payout file without sending anything: every row, with what to fix',
      argument: { name: 'file', description: 'the CSV file to check' },
      options: { report: 'write the per-row report to this CSV file' },
      after:
        '\nExit codes: 0 every row is valid, 2 some rows need fixing (or a control total does not match,\n' +
        "or a run would hold rows for a person: against the home's journal, a possible duplicate, say),\n" +
        '1 the file cannot be used at all.\n' +
        '\nExamples:\n  payouts validate samples/fornecedores-2026-11.csv\n' +
        '  payouts validate payroll.csv --report payroll.report.csv --json',
    },
    template: {
      description:
        'write an empty payout file with every column we read, ready to fill in Excel (to FILE, or to stdout)',
      argument: {
        name: 'file',
        description: 'where to write it; an existing file is never replaced',
      },
      options: {},
      after: '\nExample:\n  payouts template pagamentos-2026-12.csv',
    },
    run: {
      description:
        'process every file in the inbox once: journal, send, and report (the cron entry point)',
      options: {
        inbox: 'take files from this folder instead of <home>/inbox',
        followTimeout:
          'follow pending payouts this long before exiting (e.g. 30s, 5m; 0: not at all); default: followTimeout',
        recover:
          'after a lost, emptied, replaced or older journal: go on, looking every payout up at the gateway before its first send from this journal',
        logTimes:
          "start every line with the time it was written (2026-11-27T09:05:01-03:00, the server's time zone), for a log such as cron's run.log; --json output stays as it is",
        dryRun:
          'read and weigh every waiting file, and say what would be sent; change and send nothing',
      },
      wait: ({ duration }) =>
        `when another run or the daemon is working on this home folder, wait for it (default ${duration}) instead of stepping back at once`,
      after:
        '\nExit codes: 0 every row paid; 2 some row needs a person (invalid, rejected, failed, held, conflict…);\n' +
        '3 nothing needs a person but some row is still pending or unknown (run again later); 1 the run failed.\n' +
        '\nExample:\n  PAYOUTS_HOME=/srv/payouts payouts run --json',
    },
    status: {
      description:
        'what the journal knows: every file, one file row by row, or one payout with its history',
      argument: {
        name: 'fileOrOrderId',
        description: 'a file name (as dropped in the inbox) or an orderId',
      },
      options: {
        approvals:
          'the releases of files for an auditor: who dropped each, who approved it and when, its approval code, what it sent',
        since: 'with --approvals: releases from this day on (YYYY-MM-DD, in timeZone)',
      },
      after:
        '\nExamples:\n  payouts status\n  payouts status payroll-2026-11.csv\n  payouts status pay-2026-11-001 --json\n  payouts status --approvals --since 2026-11-01',
    },
    watch: {
      description:
        'the daemon: take every file that settles in the inbox, pay it exactly once, follow it to the end, write results; until SIGINT/SIGTERM',
      options: { inbox: 'take files from this folder instead of <home>/inbox' },
      after:
        '\nFiles present at start (and any left in processing/ by a process that died) are taken first.\n' +
        'SIGINT/SIGTERM: no new file or payout; requests in flight get 2 s to finish and are journaled; exit 0.\n' +
        'SIGUSR2: a health line on stderr now.\n' +
        '\nExample:\n  PAYOUTS_HOME=/srv/payouts PAYOUTS_POSTBACK_LISTEN=127.0.0.1:8787 payouts watch',
    },
    approve: {
      description:
        'release a file waiting for approval, or answer for rows the rules on who is paid hold: new payments (--new-batch), or a corrected copy of an earlier batch (--corrects)',
      argument: {
        name: 'file',
        description: 'the file name in awaiting-approval/, or as the summary names it',
      },
      options: {
        newBatch:
          'its rows held as possible duplicates, held because the file is named as an earlier batch, or held for a changed Pix key or name in a corrected copy, are new payments: send them',
        repeats:
          'with --new-batch: its held rows that repeat a payout already made or under way, listed by --new-batch alone, are due again too; their count, as listed',
        rows: 'with --new-batch: only these lines of the file, as the summary lists them (2,5,9)',
        except:
          'with --new-batch: every held line of the file but these (a real duplicate among false alarms)',
        identical:
          'its rows identical to an earlier row of the same file (the same person, key and amount) are both due: send them',
        corrects:
          'it is a corrected copy of this batch (its number in the summary): rows that batch paid are covered, the others sent, and what that batch never sent is closed',
        batch:
          "when several files of that name wait: this one's batch number, as the run's summary gives it",
        by: 'a note beside the user running it, who the audit trail names',
      },
      after:
        '\nExamples:\n  payouts approve payroll-2026-11.csv\n  payouts approve folha.csv --new-batch --by "Maria (financeiro)"\n  payouts approve semanal.csv --new-batch --except 9\n  payouts approve fornecedores.csv --corrects 12',
    },
    reject: {
      description: 'turn down a file waiting for approval: nothing of it is ever sent',
      argument: { name: 'file', description: 'the file name in awaiting-approval/' },
      options: {
        reason: 'why, kept beside the file in rejected/',
        batch:
          "when several files of that name wait: this one's batch number, as the run's summary gives it",
        by: 'a note beside the user running it, who the audit trail names',
      },
      after: '\nExample:\n  payouts reject payroll-2026-11.csv --reason "wrong month"',
    },
    retry: {
      description:
        'send again, on purpose, payouts that definitely failed (failed, rejected, canceled, refunded): every such row of a file (of the batch --batch names, when several files of that name have some), or one orderId; each goes under its orderId with an attempt suffix (-r2, -r3), sent by the next run',
      argument: {
        name: 'fileOrOrderId',
        description: 'a file name as the summary names it, or an orderId',
      },
      options: {
        by: 'who asks, for the audit trail (default: the user running it)',
        batch:
          "when several files of that name have payouts to send again: this one's batch number, as the run's summary gives it",
      },
      after:
        '\nExamples:\n  payouts retry folha.csv --by "Maria (financeiro)"\n  payouts retry folha.csv --batch 2\n  payouts retry folha-1-3f9a2c71',
    },
    reconcile: {
      description:
        'read recent paid payouts again at the gateway: record the ones that came back (refunded) and rewrite their result files',
      options: { days: 'payouts sent in the last n days' },
      after:
        '\nExit codes: 0 nothing came back; 2 some payout came back or reads otherwise now (a person must look); 1 failed.\n' +
        '\nExample:\n  payouts reconcile --days 7',
    },
    doctor: {
      description:
        'check that this machine is ready to pay: configuration, gateway and token, home folder and its modes, journal; changes nothing',
      options: {},
      after:
        '\nExit 0 when every check holds, 1 when one does not (each says what to do).\n\nExample:\n  PAYOUTS_HOME=/srv/payouts payouts doctor',
    },
    sandbox: {
      description:
        'run the gateway simulator as an HTTP server (until Ctrl-C); no real money moves',
      options: {
        host: 'address to listen on',
        port: 'port to listen on; 0 picks a free one',
        settleDelay: 'time from creation to each next status',
        balance: 'starting balance in cents',
        seed: 'seed of the fault draws',
        latency: 'delay added to every answer, e.g. 50ms or 10ms-200ms',
        errorRate: 'share of requests answered 500 before anything is created',
        errorAfterCommitRate: 'share of creates answered 502 after the transaction was created',
        rateLimitRate: 'share of requests answered 429',
        retryAfter: 'Retry-After sent with each 429',
        hangRate: 'share of requests never answered',
        dropRate: 'share of creates whose connection is cut after the transaction was created',
        dedupe:
          'answer a repeated cash-out orderId with the existing transaction (default: pay it again)',
      },
      after:
        '\nThe token is PAYOUTS_TOKEN (or "token" in --config), else the public default "sandbox-token".\n' +
        'E-mail keys fail@…, cancel@… and refund@… settle to failed, canceled, and paid-then-refunded.\n' +
        '\nExample:\n  payouts sandbox --port 8080 --latency 50ms --drop-rate 0.05 --seed 7\n' +
        '  curl -H "Authorization: sandbox-token" http://127.0.0.1:8080/transaction/get/balance',
    },
    balance: {
      description: "show the account balance from the gateway's balance endpoint",
      options: {},
      after: '\nExample:\n  payouts balance --json',
    },
    get: {
      description: 'look one transaction up at the gateway, by its transactionId or your orderId',
      options: { id: "the gateway's transaction id", orderId: 'your own order identifier' },
      after:
        '\nExamples:\n  payouts get --id 1001\n  payouts get --order-id payroll-2026-11-0001 --json',
    },
    cashin: {
      description:
        'create a cash-in (payment request): prints the Pix payment code and saves its QR image',
      options: {
        value: 'amount in cents (1234 is R$ 12,34)',
        payerName: 'who pays',
        payerDocument: "the payer's CPF or CNPJ",
        payerEmail: "the payer's e-mail",
        payerPhone: "the payer's phone",
        productName: 'what is being paid for',
        productDescription: 'a longer description of it',
        orderId: 'your own reference, echoed back by the gateway',
        postbackUrl: 'where the gateway should report the result',
        qrOut: 'where to save the QR image (default: cashin-<transactionId>.png)',
      },
      after:
        '\nExample:\n  payouts cashin --value 1500 --payer-name "Ana Souza" --payer-document 52998224725 \\\n' +
        '    --payer-email ana@example.com --payer-phone +5511987654321 \\\n' +
        '    --product-name "Invoice 42" --product-description "November services" --qr-out invoice-42.png',
    },
    demo: {
      description:
        'the whole journey against an embedded sandbox with faults switched on: the sample files paid exactly once, followed to the end, results written',
      options: {},
      after:
        '\nNo real money moves. Each demo gets a fresh home folder under <home>/demo/.\n' +
        '\nExample:\n  npm start        # the same as: payouts demo',
    },
    journal: {
      description: "the home's journal: copy it into PostgreSQL, or move old history out",
      after: '\nExample:\n  payouts journal copy --to postgres://payouts@db.interno:5432/payouts',
      copy: {
        description:
          "copy this home's SQLite journal into an empty PostgreSQL database, exactly, in one transaction; compare rows and sums by state and by batch; the SQLite journal is only read (brought up to date first, as by any command)",
        options: { to: 'the URL of the empty PostgreSQL database (postgres://…)' },
        after:
          "\nStop the daemon and cron's runs first: a run holding the home folder is refused, and so is a database that is not empty.\nOnce copied, every command refuses the SQLite journal: set journal (PAYOUTS_JOURNAL) to the URL on every host.\nExit 0 copied, 1 nothing written (each says why).\n" +
          '\nExample:\n  payouts journal copy --to postgres://payouts@db.interno:5432/payouts',
      },
      compact: {
        description:
          'move the history (audit entries) of finished batches received before a day out of the journal, into a dated CSV in archive/journal-history/, then checkpoint (SQLite) or vacuum (PostgreSQL) the journal; each orderId and everything the rules on who is paid read stay',
        options: {
          before:
            'the day (YYYY-MM-DD, as result file names date batches): batches received before it',
        },
        after:
          '\nSafe beside a running daemon (the journal is written in short transactions) and safe to stop and run again. payouts status ORDER_ID then names the archive file that holds the history of a payout.\nExit 0 done or nothing to do, 1 not done (says why), 64 a day that cannot be taken.\n' +
          '\nExample:\n  payouts journal compact --before 2026-06-01',
      },
    },
  },
  expected: {
    count: 'Expected the count of repeats listed, such as 3.',
    batch: 'Expected a batch number, such as 12.',
    lines: 'Expected line numbers, such as 2,5,9.',
    reason: 'Say why the file is turned down.',
    days: ({ value }) => `Expected a whole number of days from 1, got "${value}".`,
    day: ({ value }) => `Expected a day as YYYY-MM-DD, such as 2026-06-01, got "${value}".`,
    pastDay: ({ value, today }) =>
      `Expected a day up to today (${today}), got ${value}: only the history of batches received before it is moved.`,
  },
  usage: {
    sayWhichCommand: 'say which command, e.g. payouts validate FILE or payouts run',
    sayWhichTransaction: 'say which transaction, with --id N or --order-id X',
    notADuration: ({ flag, text }) => `${flag} "${text}" is not a duration (e.g. 0, 30s, 5m)`,
    seeHelp: ({ help }) => `(see ${help})`,
    didYouMean: ({ suggestion }) => `; did you mean ${suggestion}`,
    unknownCommand: ({ name }) => `unknown command '${name}'`,
    unknownOption: ({ option }) => `unknown option '${option}'`,
    missingArgument: ({ name }) => `missing required argument '${name}'`,
    optionMissingArgument: ({ option }) => `option '${option}' argument missing`,
    missingMandatoryOptionValue: ({ option }) => `required option '${option}' not specified`,
    excessArguments: ({ expected, got }) =>
      `too many arguments: expected ${plural(expected, 'argument')}, got ${got}`,
    invalidArgument: ({ option, value, why }) =>
      `option '${option}' argument '${value}' is invalid. ${why}`,
    conflictingOption: ({ option, other }) =>
      `option '${option}' cannot be used with option '${other}'`,
  },
};

export const en: Catalog = {
  help,
  said,
  heading: {
    sandbox: 'sandbox',
    line: 'line',
    orderId: 'orderId',
    name: 'name',
    pixKeyType: 'pixKeyType',
    pixKey: 'pixKey',
    cpfCnpj: 'cpfCnpj',
    value: 'value',
    status: 'status',
    transactionId: 'transactionId',
    endToEndId: 'endToEndId',
    fee: 'fee',
    net: 'net',
    createdAt: 'createdAt',
    processedAt: 'processedAt',
    message: 'message',
    amountAsWritten: 'amountAsWritten',
    column: 'column',
    droppedBy: 'droppedBy',
    approvedBy: 'approvedBy',
  },
  state: {
    valid: 'valid',
    invalid: 'invalid',
    skipped: 'skipped',
    replay: 'replay',
    queued: 'queued',
    held: 'held',
    sending: 'sending',
    unknown: 'unknown',
    pending: 'pending',
    paid: 'paid',
    failed: 'failed',
    canceled: 'canceled',
    refunded: 'refunded',
    rejected: 'rejected',
    covered: 'covered',
    superseded: 'superseded',
    conflict: 'conflict',
    retried: 'retried',
  },
  outcome: ({ sentence }) => sentence,
  sandboxMoved: 'SANDBOX: no real money moved',
  sandboxRun: 'SANDBOX: no real money moved: these payouts went to the embedded sandbox',
  inboxEmpty: 'The inbox is empty: nothing to do.',
  validated: ({ file, rows, valid, invalid, skipped, total }) =>
    `${file}: ${plural(rows, 'row')}: ${valid} valid, ${invalid} invalid, ${skipped} skipped; valid rows total ${total}`,
  readAs: ({ encoding, delimiter, orderIdColumn }) =>
    `read as ${encoding}, delimiter ${JSON.stringify(delimiter)}, ${
      orderIdColumn === null
        ? 'orderIds derived from each row (the file has no orderId column)'
        : `orderIds from column "${orderIdColumn}"`
    }`,
  rowsIn: ({ count, state, amount }) =>
    amount === null ? `${count} ${state}` : `${count} ${state} (${amount})`,
  attemptsRetried: ({ count }) =>
    `${count} failed ${count === 1 ? 'attempt' : 'attempts'} sent again`,
  noRows: 'no rows',
  fileSummary: ({ file, batchId, outcome, totals, total }) =>
    `${file}${batchId === null ? '' : ` (batch ${batchId})`}: ${outcome}; ${totals}; valid rows total ${total}`,
  resultAt: ({ path }) => `result: ${path}`,
  atLineColumn: ({ line, column, message }) =>
    `line ${line}${column === null ? '' : `, column ${column}`}: ${message}`,
  invalidRowsTitle:
    'Invalid rows (fix them and drop the file again; valid rows are not held back by them):',
  warningsTitle: 'Warnings (the row is valid; check it was read as meant):',
  andMore: ({ count, report }) =>
    `… and ${count} more${report ? '' : ' (write them all with --report FILE)'}`,
  fileHeld: ({ message }) => `Held, nothing in this file will be paid: ${message}`,
  wouldHold: ({ note }) => `A run would hold it for a person: ${note}`,
  heldByRulesTitle: ({ journal }) =>
    `Held for a person by the rules on who is paid (against the journal ${journal}):`,
  weighedAgainstView: ({ at, timeZone }) =>
    `Weighed against what the service saw at ${timeAndDay(at, timeZone)}: the journal is the service's alone, and after each run that changes it the service writes this copy for the group.`,
  notWeighed: ({ journal }) =>
    `Not weighed against the journal ${journal}: it is the service's alone, and the service has not yet written the copy the group reads (it does after each run, when sharedGroup is set). A run may still hold rows of this file that repeat earlier payouts.`,
  heldRow: ({ line, rule, message }) => `line ${line} (${rule}): ${message}`,
  andMoreHeld: ({ count, hintFlags }) =>
    `… and ${count} more (payouts run --dry-run --json${hintFlags} lists them)`,
  skipped: ({ lines }) =>
    `Skipped: ${lines.map(({ line, reason }) => `line ${line} (${reason})`).join(', ')}`,
  nothingPayable: 'Nothing in it can be paid: fix the file and check it again.',
  contactsFilled: ({ contact, fromKey, fromSetting, setting, value }) =>
    `${contact === 'email' ? 'e-mail' : 'phone'}: not in the file for ${plural(fromKey + fromSetting, 'row')}: ${[
      fromKey > 0 ? `${fromKey} from ${fromKey === 1 ? 'its' : 'their'} Pix key` : '',
      fromSetting > 0 ? `${fromSetting} from ${setting} (${value})` : '',
    ]
      .filter(Boolean)
      .join(', ')}`,
  readByHeadings: ({ columns }) =>
    `read by the headings setting: ${columns.map((c) => `"${c.heading}" as ${c.as}`).join(', ')}`,
  columnsNotUsed: ({ headings }) =>
    `columns not used: ${headings.map((heading) => `"${heading}"`).join(', ')}`,
  readsReference: ({ column }) =>
    `each row's reference from column "${column}": a payment with the same document and reference as an earlier one is held, whatever its age; a new reference is a new payment, even of the same amount (a month, such as a competência, together with the amount)`,
  reportAt: ({ path }) => `Report: ${path}`,
  release: {
    repeatsTitle: ({ count }) =>
      `${count === 1 ? '1 held row repeats' : `${count} held rows repeat`} a payout already made or under way (the same document and amount):`,
    repeat: ({ line, name, amount, file, fileLine, at, state }) =>
      `line ${line}: ${name}, ${amount}: repeats ${file}, line ${fileLine}, journaled ${moment(at)} (now ${state})`,
    released: ({ file, batchId, count, amount, by }) =>
      `${file} (batch ${batchId}): ${plural(count, 'payout')}, ${amount}, released by ${by} as new payments; the next run sends them.`,
    repeatsStayHeld: ({ count }) =>
      `${count === 1 ? 'That row stays' : `Those ${count} rows stay`} held. If ${count === 1 ? 'it is' : 'each is'} due again, say so: the same command with the option --repeats and their count, ${count}.`,
    repeatsReleased: ({ count }) =>
      `${count === 1 ? 'That row was' : `Those ${count} rows were`} released too, as you said (--repeats ${count}): paid again.`,
    rowsNotHeld: ({ notHeld }) =>
      `payouts approve: ${notHeld.length === 1 ? `line ${notHeld[0]} is not held` : `lines ${notHeld.join(', ')} are not held`} as a possible duplicate or for the file's name: nothing released; the run's summary lists the held lines`,
    notACopy: ({ batchId, batchFile, file, candidates }) =>
      `payouts approve: batch ${batchId} (${batchFile}) is not a file ${file} repeats: a corrected copy corrects a file of its name or one whose payouts it repeats (here ${candidates.map((c) => `batch ${c.batchId}, ${c.file}`).join('; ') || 'none'}). Nothing changed.`,
    whichBatch: ({ verb, file, batches, hintFlags }) =>
      `payouts ${verb}: ${batches.length} files named ${file} wait for an answer (${batches.map((batch) => `batch ${batch.batchId}, arrived ${moment(batch.at)}`).join('; ')}): nothing changed. Say which with --batch and its number, as the run's summary gives it: payouts ${verb} "${file}" --batch ${batches.at(-1)?.batchId ?? ''}${hintFlags} and the same options`,
    alreadyApproved: ({ verb, file, batchId, by, at, totals }) =>
      `payouts ${verb}: ${file} (batch ${batchId}) was approved by ${by} ${moment(at)}: ${totals}; nothing changed`,
    stillAwaiting: ({ file, hintFlags }) =>
      `${file} still waits for approval: nothing of it is sent until a person approves the rest of it: payouts approve "${file}"${hintFlags}`,
    stayHeld: ({ count }) => `${count === 1 ? '1 row stays' : `${count} rows stay`} held:`,
    heldRow: ({ line, name, amount, message }) => `line ${line}: ${name}, ${amount}: ${message}`,
    retryHeld: ({ count }) =>
      `${count === 1 ? '1 payout sent again is' : `${count} payouts sent again are`} held, not sent: another file has paid that person that amount since:`,
    repeatsDiffer: ({ given, count }) =>
      `payouts approve: --repeats ${given} is not the count of held rows that repeat a payout (${count}, listed above): nothing released; check them and give their count`,
  },
  approval: {
    sandbox: 'SANDBOX: no real money moves: this file went through the embedded sandbox',
    waiting: ({ file, batchId }) =>
      `${file} (batch ${batchId}): waiting for approval; nothing of it is sent until then`,
    onceApproved: ({ count, amount }) =>
      `Once approved, ${plural(count, 'payout')} ${count === 1 ? 'is' : 'are'} sent, ${amount} in all.`,
    notSent: ({ invalid, held, covered }) =>
      `Not sent: ${plural(invalid, 'invalid row')}, ${plural(held, 'row')} held by the rules on who is paid, ${covered} covered by payouts already made.`,
    heldByRule: ({ rows, amount, example }) =>
      `${rows} held (${amount})${example === null ? '' : `, e.g. ${example}`}`,
    atLine: ({ line, column, message }) =>
      `line ${line}${column === null ? '' : `, ${column}`}: ${message}`,
    more: '… (the result file has them all)',
    toApprove: ({ file, inFolder, hintFlags }) =>
      `To approve: move ${inFolder} into approved/, or run: payouts approve "${file}"${hintFlags}`,
    answerApproves: ({ file, hintFlags }) =>
      `An answer to its held rows approves it too, once the answer frees a row: payouts approve "${file}"${hintFlags} with --new-batch, --corrects or --identical, as the rows above and the run's summary give it`,
    toReject: ({ file, hintFlags }) =>
      `To turn it down: payouts reject "${file}" --reason "why"${hintFlags}`,
    payeesTitle: 'Every payout of the file (documents and keys masked), and what becomes of it:',
    payee: ({ line, name, document, key, amount, state, message }) =>
      `line ${line}: ${name}, document ${document}, Pix key ${key}, ${amount}: ${
        state === null ? 'to be sent' : `${state}${message === null ? '' : ` (${message})`}`
      }`,
  },
  approvedByCell: ({ approvals, code }) =>
    `${approvals.map(({ by, at }) => `${by} ${at}`).join('; ')}${code === null ? '' : ` (code ${code})`}`,
  movedIntoApproved: 'someone (moved into approved/)',
  journalUnreachable: ({ journal, cause }) =>
    `Not weighed against the journal: its database ${journal} cannot be reached (${cause}). The file's own checks above stand, but whether a run would hold rows of it (an orderId paid before, a possible duplicate, a repeat of a failed payout) is not known. Check that the PostgreSQL server is running and reachable from this host, and that the journal setting (PAYOUTS_JOURNAL) names the right user, password and database, then run payouts validate again.`,
};
