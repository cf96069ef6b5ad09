import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../../src/messages/catalog.js';
import type { Said, SaidCode } from '../../src/messages/said.js';
import { say } from '../../src/messages/say.js';

/** One of every Said, typed so that a code added without a sample does not compile. */
const SAMPLES: { [C in SaidCode]: Extract<Said, { code: C }> } = {
  empty: { code: 'empty' },
  rowSpansLines: { code: 'rowSpansLines', line: 4, lastLine: 6 },
  moreValuesThanColumns: { code: 'moreValuesThanColumns', values: 9, columns: 8 },
  valueUnderBlankHeading: { code: 'valueUnderBlankHeading' },
  controlCharacter: { code: 'controlCharacter' },
  alsoWrong: { code: 'alsoWrong', first: { code: 'nameEmpty' }, columns: ['CPF', 'Valor'] },
  moreMistakes: {
    code: 'moreMistakes',
    first: { code: 'nameEmpty' },
    more: [{ column: 'Valor', message: { code: 'amountZero', shown: '0,00' } }],
  },
  totalLine: { code: 'totalLine' },
  identicalRows: { code: 'identicalRows', line: 3 },
  referenceEmpty: { code: 'referenceEmpty' },
  orderIdEmpty: { code: 'orderIdEmpty' },
  orderIdUnusable: { code: 'orderIdUnusable', orderId: '=1+1' },
  orderIdRepeated: { code: 'orderIdRepeated', orderId: 'nov-01', line: 2 },
  orderIdLikeRowNumber: { code: 'orderIdLikeRowNumber', orderId: '12' },
  nameEmpty: { code: 'nameEmpty' },
  nameNotAName: { code: 'nameNotAName', name: '=HYPERLINK()' },
  nameTooLong: { code: 'nameTooLong', length: 141, max: 140 },
  noContact: { code: 'noContact', contact: 'phone', noColumn: true },
  emailInvalid: { code: 'emailInvalid', email: 'ana@' },
  phoneInvalid: { code: 'phoneInvalid', phone: '1234' },
  amountSplit: { code: 'amountSplit', written: '1234,56', plain: '1234.56' },
  amountOverLimit: { code: 'amountOverLimit', cents: 2_000_000, limitCents: 1_000_000 },
  amountZero: { code: 'amountZero', shown: '0,00' },
  amountTooLarge: { code: 'amountTooLarge', shown: '9'.repeat(20) },
  amountScientific: { code: 'amountScientific', shown: '1,23E+05' },
  amountNegative: { code: 'amountNegative', shown: '(10,00)', cents: 1000, parentheses: true },
  notAnAmount: { code: 'notAnAmount', shown: ',50', wholeReaisMissing: ',50' },
  notInReais: { code: 'notInReais', shown: 'US$ 10' },
  thousandsOrDecimals: { code: 'thousandsOrDecimals', shown: '1.234', digits: '1234' },
  tooManyDecimals: { code: 'tooManyDecimals', shown: '1,234' },
  mixedThousands: { code: 'mixedThousands', shown: '1.234 567,00', separators: ['.', ' '] },
  misplacedThousands: { code: 'misplacedThousands', shown: '12.34,00' },
  misplacedSpace: { code: 'misplacedSpace', shown: '9 99' },
  centsNegative: { code: 'centsNegative', shown: '-100' },
  centsWithDecimals: { code: 'centsWithDecimals', shown: '12,50' },
  notCents: { code: 'notCents', shown: 'dez' },
  zerosRestored: { code: 'zerosRestored', written: '1234567890', read: '01234567890' },
  documentScientific: { code: 'documentScientific', text: '5,29982E+10' },
  documentCharacters: { code: 'documentCharacters', text: '529#982' },
  cnpjCheckDigits: { code: 'cnpjCheckDigits', text: '11.222.333/0001-00' },
  notCpfOrCnpj: { code: 'notCpfOrCnpj', text: '123' },
  cnpjEvenRestored: {
    code: 'cnpjEvenRestored',
    digits: '1222333000181',
    restored: '01222333000181',
    keepZeros: true,
  },
  cpfOrCnpjWithoutZeros: { code: 'cpfOrCnpjWithoutZeros', digits: '1234567890' },
  cpfRestored: { code: 'cpfRestored', digits: '123', restored: '00000000123', maybeCnpj: true },
  cpfCheckDigits: { code: 'cpfCheckDigits', text: '529.982.247-26', hint: 'checkPerson' },
  cpfWithSlash: { code: 'cpfWithSlash', text: '656.393.827/24', written: '656.393.827-24' },
  keyTypeUnknown: { code: 'keyTypeUnknown', text: 'PIX' },
  keyNotRowDocument: {
    code: 'keyNotRowDocument',
    type: 'CPF',
    key: '52998224725',
    document: '11144477735',
  },
  keyScientific: { code: 'keyScientific', key: '1,1E+10' },
  keyDocument: { code: 'keyDocument', type: 'CPF', problem: { code: 'notCpfOrCnpj', text: '1' } },
  keyDocumentKind: { code: 'keyDocumentKind', type: 'CPF', key: '11222333000181', kind: 'CNPJ' },
  keyEmail: { code: 'keyEmail', key: 'ana@@x.com', problem: { code: 'emailKeyShape' } },
  keyPhone: { code: 'keyPhone', key: '1234' },
  keyRandom: { code: 'keyRandom', key: 'abc' },
  keyCpfOrPhone: { code: 'keyCpfOrPhone', key: '11987654321' },
  keyTypeUntold: { code: 'keyTypeUntold', key: 'abc' },
  emailKeyTooLong: { code: 'emailKeyTooLong', length: 80, max: 77 },
  emailKeySpace: { code: 'emailKeySpace' },
  emailKeyNotAscii: { code: 'emailKeyNotAscii', character: 'ã' },
  emailKeyShape: { code: 'emailKeyShape' },
  emailKeyTwoDots: { code: 'emailKeyTwoDots' },
  emailKeyDotAtEdge: { code: 'emailKeyDotAtEdge' },
  emailKeyNameCharacter: { code: 'emailKeyNameCharacter', character: '%' },
  emailKeyNoDomain: { code: 'emailKeyNoDomain' },
  emailKeyDomainUnderscore: { code: 'emailKeyDomainUnderscore' },
  emailKeyDomainHyphen: { code: 'emailKeyDomainHyphen', label: '-x' },
  emailKeyDomainPartLong: { code: 'emailKeyDomainPartLong' },
  emailKeyDomainCharacter: { code: 'emailKeyDomainCharacter', character: '!' },
  emailKeyNoDomainName: { code: 'emailKeyNoDomainName' },
  notAFile: { code: 'notAFile' },
  fileMissing: { code: 'fileMissing' },
  fileUnreadable: { code: 'fileUnreadable', errorCode: 'EACCES' },
  fileEmpty: { code: 'fileEmpty' },
  fileTooLarge: { code: 'fileTooLarge', bytes: 600, limit: 500 },
  fileBinary: { code: 'fileBinary' },
  notUtf8: { code: 'notUtf8', at: { line: 3, offset: 112, byte: 'E7' } },
  mixedEncodings: {
    code: 'mixedEncodings',
    good: { line: 2, offset: 40, byte: 'C3' },
    bad: { line: 5, offset: 200 },
  },
  lineTooLong: { code: 'lineTooLong', bytes: 2_000_000, line: 1, max: 1_000_000 },
  headerUnusable: {
    code: 'headerUnusable',
    line: 1,
    problem: { code: 'missingColumns', fields: ['cpfCnpj', 'amountReais'] },
  },
  tooManyColumns: { code: 'tooManyColumns', count: 2000, max: 1000 },
  sameColumnTwice: { code: 'sameColumnTwice', first: 'CPF', second: 'Documento', field: 'cpfCnpj' },
  twoAmountColumns: { code: 'twoAmountColumns', cents: 'centavos', reais: 'Valor' },
  missingColumns: { code: 'missingColumns', fields: ['name'] },
  blankRun: { code: 'blankRun', max: 1000, line: 4 },
  quoteNotClosed: { code: 'quoteNotClosed', line: 7 },
  recordTooLong: { code: 'recordTooLong', line: 2, max: 1_000_000 },
  notCsv: { code: 'notCsv', line: 3, detail: 'Invalid Closing Quote' },
  noHeader: { code: 'noHeader' },
  noRows: { code: 'noRows' },
  totalLineUnreadable: { code: 'totalLineUnreadable', line: 9, text: '#VALUE!' },
  sidecarLine: { code: 'sidecarLine', sidecar: 'folha.csv.total', line: 1, text: 'hello' },
  sidecarSaysNothing: { code: 'sidecarSaysNothing', sidecar: 'folha.csv.total' },
  controlUncheckable: {
    code: 'controlUncheckable',
    source: { totalLine: 9 },
    cents: 150_000,
    lines: [2, 3, 4, 5, 6, 7],
  },
  controlMismatch: {
    code: 'controlMismatch',
    source: { sidecar: 'folha.csv.total' },
    file: { rows: 3, cents: 150_000 },
    control: { rows: 1, cents: 160_000 },
  },
  overFileLimit: { code: 'overFileLimit', cents: 2_000_000, limitCents: 1_000_000 },
  fileChanged: { code: 'fileChanged' },
  fileOld: { code: 'fileOld', changedAt: Date.UTC(2025, 5, 27), ageMs: 517 * 86_400_000 },
  heldJournaled: {
    code: 'heldJournaled',
    orderId: 'folha-1',
    file: 'folha-outubro.csv',
    line: 2,
    at: Date.UTC(2026, 9, 5),
    state: 'rejected',
    retry: true,
    hintFlags: '',
  },
  heldDuplicate: {
    code: 'heldDuplicate',
    file: 'folha-outubro.csv',
    line: 2,
    at: Date.UTC(2026, 9, 5),
    state: 'paid',
    transactionId: 1001,
    newFile: 'folha-outubro-2.csv',
    hintFlags: ' --config "/etc/payouts.json"',
  },
  heldSameReference: {
    code: 'heldSameReference',
    reference: '1002',
    file: 'aluguel-semana-02.csv',
    line: 2,
    at: Date.UTC(2026, 8, 4),
    state: 'paid',
    transactionId: 1002,
    paidCents: 400_000,
    cents: 420_000,
    newFile: 'aluguel-semana-14.csv',
    hintFlags: '',
  },
  heldCovered: {
    code: 'heldCovered',
    file: 'folha.csv',
    line: 3,
    at: Date.UTC(2026, 10, 1),
    state: 'paid',
    transactionId: null,
  },
  heldChangesPaid: {
    code: 'heldChangesPaid',
    file: 'folha.csv',
    line: 3,
    state: 'paid',
    paidCents: 100_000,
    cents: 110_000,
  },
  heldChangesPayee: {
    code: 'heldChangesPayee',
    file: 'folha.csv',
    line: 3,
    at: Date.UTC(2026, 10, 26),
    state: 'paid',
    transactionId: 1016,
    cents: 340_000,
    paidKey: 'ana@example.com',
    paidName: 'Bruno Lima',
    key: 'bruno@example.com',
    name: 'Bruno Lima',
    newFile: 'folha.csv',
    hintFlags: '',
  },
  heldFailedBefore: {
    code: 'heldFailedBefore',
    file: 'folha.csv',
    line: 4,
    orderId: 'folha-4',
    transactionId: 1002,
    state: 'failed',
    hintFlags: '',
  },
  heldForCopy: {
    code: 'heldForCopy',
    file: 'folha [2].csv',
    batchId: 2,
    at: Date.UTC(2026, 10, 2),
    earlierBatchId: 1,
    hintFlags: '',
  },
  copyFreezes: {
    code: 'copyFreezes',
    file: 'folha.csv',
    batchId: 1,
    rows: 3,
    cents: 700_000,
    newFile: 'folha [2].csv',
    hintFlags: '',
  },
  heldIdentical: { code: 'heldIdentical', line: 2, file: 'folha.csv', hintFlags: '' },
  heldSameName: {
    code: 'heldSameName',
    file: 'folha.csv',
    batchId: 1,
    at: Date.UTC(2026, 10, 1),
    newFile: 'folha (1).csv',
    hintFlags: '',
    repeats: [
      { line: 2, earlierLine: 3 },
      { line: 4, earlierLine: 2 },
    ],
    moreRepeats: 1,
  },
  english: { code: 'english', text: 'held: it has the same name as folha.csv' },
  rowsRepeatInFile: {
    code: 'rowsRepeatInFile',
    rows: 1,
    cents: 1000,
    example: { code: 'heldIdentical', line: 2, file: 'folha.csv', hintFlags: '' },
  },
  rowsChangePaid: {
    code: 'rowsChangePaid',
    rows: 2,
    example: { code: 'english', text: 'changes R$ 10,00' },
  },
  rowsRepeatFailed: {
    code: 'rowsRepeatFailed',
    rows: 1,
    cents: 1000,
    file: 'folha.csv',
    hintFlags: '',
    example: { code: 'english', text: 'failed on 2026-11-01' },
  },
  rowsRepeatOtherFile: { code: 'rowsRepeatOtherFile', rows: 3, cents: 3000 },
  heldRowAt: {
    code: 'heldRowAt',
    line: 4,
    name: 'Carla Dias',
    cents: 445050,
    why: { code: 'english', text: 'held for a person' },
  },
  heldRowsMore: { code: 'heldRowsMore', rows: 380 },
  namedAsEarlier: {
    code: 'namedAsEarlier',
    file: 'folha.csv',
    batchId: 1,
    at: Date.UTC(2026, 10, 27),
  },
  readingCorrects: {
    code: 'readingCorrects',
    file: 'folha.csv',
    batchId: 1,
    pays: { rows: 1, cents: 199_999, first: [{ name: 'Diego Reis', cents: 199_999 }] },
    hintFlags: '',
  },
  readingNewBatch: {
    code: 'readingNewBatch',
    file: 'folha.csv',
    pays: { rows: 1, cents: 199_999, first: [{ name: 'Diego Reis', cents: 199_999 }] },
    repeating: {
      rows: 4,
      cents: 1_200_000,
      first: [
        { name: 'Ana Souza', cents: 350_000 },
        { name: 'Bruno Lima', cents: 250_000 },
        { name: 'Carla Dias', cents: 300_000 },
      ],
    },
    hintFlags: ' --config "/etc/payouts.json"',
  },
  orderIdsJournaled: {
    code: 'orderIdsJournaled',
    rows: 2,
    example: { code: 'english', text: 'from folha.csv' },
  },
  pendingTooLong: {
    code: 'pendingTooLong',
    rows: 2,
    age: '2h 05m',
    orderId: 'folha-1',
    hintFlags: ' --config "/etc/payouts.json"',
  },
  resultNotWritten: { code: 'resultNotWritten', path: 'results/folha.result.csv', why: 'ENOSPC' },
  balanceShortfall: {
    code: 'balanceShortfall',
    cents: 60_000,
    count: 3,
    feeCents: 100,
    availableCents: 50_000,
  },
  balanceBlocks: {
    code: 'balanceBlocks',
    shortfall: { code: 'balanceShortfall', cents: 600, count: 1, feeCents: 0, readError: '503' },
  },
  waitingToSettle: { code: 'waitingToSettle', settle: '10s', file: 'folha.csv' },
  processingFull: { code: 'processingFull' },
  takenByHost: { code: 'takenByHost', host: 'pay-2' },
  cannotRead: { code: 'cannotRead', systemCode: 'EACCES', permission: true },
  awaitingApproval: { code: 'awaitingApproval', file: 'folha.csv', hintFlags: '' },
  answerApproves: { code: 'answerApproves' },
  replacedByCopy: {
    code: 'replacedByCopy',
    copyFile: 'folha.csv',
    copyBatchId: 2,
    at: Date.UTC(2026, 10, 27, 11, 35),
    next: { file: 'folha.csv', hintFlags: '' },
  },
  fileReplaced: {
    code: 'fileReplaced',
    verb: 'approve',
    file: 'folha.csv',
    batchId: 1,
    copyFile: 'folha.csv',
    copyBatchId: 2,
    at: Date.UTC(2026, 10, 27, 11, 35),
    next: null,
  },
  cutShort: { code: 'cutShort', file: 'folha.csv' },
  fileNotInProcessing: { code: 'fileNotInProcessing', file: 'folha.csv' },
  takenOnceRenamed: { code: 'takenOnceRenamed' },
  hiddenPayoutFile: { code: 'hiddenPayoutFile' },
  notARegularFile: { code: 'notARegularFile' },
  releaseTurnedDown: { code: 'releaseTurnedDown' },
  releaseAlreadyReleased: { code: 'releaseAlreadyReleased' },
  releaseUnknownBytes: { code: 'releaseUnknownBytes' },
  clockBehindJournal: {
    code: 'clockBehindJournal',
    nowMs: Date.parse('2026-11-27T11:58:00Z'),
    latestMs: Date.parse('2026-11-27T12:00:00Z'),
    timeZone: 'America/Sao_Paulo',
  },
  hostClockOff: {
    code: 'hostClockOff',
    host: 'pay-2',
    offsetMs: 600_400,
    way: 'ahead',
    boundMs: 30_000,
    watching: false,
  },
  journalNewerSchema: {
    code: 'journalNewerSchema',
    path: '/srv/payouts/journal.db',
    schema: 99,
    latest: 24,
  },
  journalMoved: {
    code: 'journalMoved',
    address: 'postgres://payouts:***@db.interno:5432/payouts',
    at: Date.UTC(2026, 10, 27, 21, 40),
  },
  journalOnNetworkFilesystem: {
    code: 'journalOnNetworkFilesystem',
    folder: '/mnt/nfs/payouts',
    fsType: '0x6969',
  },
  retryIdTaken: { code: 'retryIdTaken', orderId: 'folha-1', retryId: 'folha-1-r2' },
  journalRefused: { code: 'journalRefused', detail: 'folha-1: not queued any more' },
  heldForBalance: {
    code: 'heldForBalance',
    why: { code: 'balanceShortfall', cents: 10_000, count: 1, feeCents: 0, availableCents: 6_000 },
  },
  heldWithFile: {
    code: 'heldWithFile',
    problems: [{ code: 'fileOld', changedAt: Date.UTC(2026, 9, 1), ageMs: 40 * 86_400_000 }],
    state: 'held',
  },
  coverUndone: {
    code: 'coverUndone',
    orderId: 'folha-1',
    file: 'folha.csv',
    line: 2,
    state: 'refunded',
    own: 'R$ 100,00',
    hintFlags: ' --settings-file "/etc/payouts.env"',
  },
  takenOverByLine: { code: 'takenOverByLine', state: 'held', line: 2, file: 'folha (2).csv' },
  takenOverBy: { code: 'takenOverBy', file: 'folha (2).csv' },
  leftOutByCopy: { code: 'leftOutByCopy', file: 'folha (2).csv' },
  correctedIn: { code: 'correctedIn', first: { code: 'nameEmpty' }, file: 'folha (2).csv' },
  sentAgainOnPurpose: {
    code: 'sentAgainOnPurpose',
    by: 'maria',
    at: Date.UTC(2026, 10, 27),
    retryId: 'folha-1-r2',
    earlier: null,
  },
  repeatSentAgain: {
    code: 'repeatSentAgain',
    by: 'maria',
    at: Date.UTC(2026, 10, 27),
    retryId: 'folha-1-r2',
  },
  pendingTooLongIn: {
    code: 'pendingTooLongIn',
    file: 'folha.csv',
    rows: 1,
    age: '2h 05m',
    orderId: 'folha-1',
    hintFlags: '',
  },
  approvedSentNow: { code: 'approvedSentNow', file: 'folha.csv' },
  progress: {
    code: 'progress',
    total: 17,
    sent: 10,
    sending: 2,
    toCheck: 1,
    settled: 4,
    perSecond: 50,
  },
  progressLine: {
    code: 'progressLine',
    progress: {
      code: 'progress',
      total: 1,
      sent: 1,
      sending: 0,
      toCheck: 0,
      settled: 1,
      perSecond: 0.5,
    },
  },
  approved: { code: 'approved', file: 'folha.csv', batchId: 3, count: 1, cents: 123_456 },
  linkedAsCopy: {
    code: 'linkedAsCopy',
    file: 'folha.csv',
    batchId: 3,
    corrects: 2,
    by: 'maria',
    count: 3,
  },
  releasedIdentical: {
    code: 'releasedIdentical',
    file: 'bonus.csv',
    batchId: 4,
    count: 2,
    cents: 11_000,
    by: 'maria',
  },
  notAwaiting: { code: 'notAwaiting', verb: 'approve', file: 'folha.csv', waiting: [] },
  approveOneAnswer: { code: 'approveOneAnswer' },
  approveOptionsNeedNewBatch: { code: 'approveOptionsNeedNewBatch' },
  approveRowsOrExcept: { code: 'approveRowsOrExcept' },
  approveChanged: { code: 'approveChanged', file: 'folha.csv' },
  approveNoFreeName: { code: 'approveNoFreeName', file: 'folha.csv' },
  approveNoBatch: { code: 'approveNoBatch', batchId: 12 },
  approveNothingHeld: { code: 'approveNothingHeld', file: 'folha.csv', hintFlags: '' },
  auditJournaled: { code: 'auditJournaled', batchId: 3, line: 7 },
  auditReplaced: { code: 'auditReplaced', batchId: 3, line: 7 },
  auditClaimed: { code: 'auditClaimed', owner: 'run-1234', attempt: 2 },
  auditCheckedAgain: {
    code: 'auditCheckedAgain',
    when: 'claimed',
    said: {
      code: 'heldCovered',
      file: 'folha.csv',
      line: 4,
      at: 0,
      state: 'paid',
      transactionId: 9,
    },
  },
  auditLookedUpAfterLoss: { code: 'auditLookedUpAfterLoss' },
  auditLeaseEnded: { code: 'auditLeaseEnded', owner: 'run-1234' },
  auditClaimedNotSent: { code: 'auditClaimedNotSent', why: { code: 'runFailed' } },
  auditClaimedAheadNotSent: {
    code: 'auditClaimedAheadNotSent',
    why: { code: 'claimWaitedTooLong' },
  },
  auditClaimTooOld: { code: 'auditClaimTooOld' },
  runStopped: { code: 'runStopped' },
  runFailed: { code: 'runFailed' },
  sendingPaused: { code: 'sendingPaused' },
  claimWaitedTooLong: { code: 'claimWaitedTooLong' },
  auditResending: { code: 'auditResending', notFound: 2, secondsSinceSent: 31 },
  auditBalanceCovers: { code: 'auditBalanceCovers' },
  auditFrozen: { code: 'auditFrozen', said: { code: 'takenOverBy', file: 'folha (2).csv' } },
  auditUnfrozen: { code: 'auditUnfrozen', why: { code: 'auditBalanceCovers' } },
  auditCoverEnded: {
    code: 'auditCoverEnded',
    orderId: 'nov-01',
    state: 'failed',
    said: { code: 'takenOverBy', file: 'folha (2).csv' },
  },
  auditRetry: {
    code: 'auditRetry',
    attempt: 2,
    base: 'nov-01',
    orderId: 'nov-01',
    state: 'failed',
    why: { code: 'auditSentAgainBy', by: 'Maria', at: 0 },
  },
  auditRetriedAs: {
    code: 'auditRetriedAs',
    why: { code: 'auditSentAgainBy', by: 'Maria', at: 0 },
    retryId: 'folha-1-r2',
  },
  auditSentAgainBy: { code: 'auditSentAgainBy', by: 'Maria', at: 0 },
  auditNameWeighed: { code: 'auditNameWeighed' },
  auditRepeatsFailed: { code: 'auditRepeatsFailed' },
  auditCorrectedCopyOf: { code: 'auditCorrectedCopyOf', batchId: 3 },
  auditCopyTurnedDown: {
    code: 'auditCopyTurnedDown',
    why: { code: 'turnedDownBy', reason: 'mês errado' },
  },
  auditFreezerTurnedDown: {
    code: 'auditFreezerTurnedDown',
    why: { code: 'turnedDownBy', reason: 'mês errado' },
  },
  auditCovered: {
    code: 'auditCovered',
    why: { code: 'auditCorrectedCopyOf', batchId: 3 },
    said: { code: 'takenOverBy', file: 'folha (2).csv' },
  },
  auditTakenOver: {
    code: 'auditTakenOver',
    why: { code: 'auditCorrectedCopyOf', batchId: 3 },
    by: 'nov-01',
  },
  auditTakesOver: {
    code: 'auditTakesOver',
    why: { code: 'auditCorrectedCopyOf', batchId: 3 },
    orderId: 'nov-01',
  },
  auditReplaces: { code: 'auditReplaces', why: { code: 'auditCorrectedCopyOf', batchId: 3 } },
  auditLeftOut: {
    code: 'auditLeftOut',
    why: { code: 'auditCorrectedCopyOf', batchId: 3 },
    file: 'folha (2).csv',
  },
  auditGivenBack: { code: 'auditGivenBack', why: { code: 'auditNameWeighed' } },
  auditCoveredByRetry: {
    code: 'auditCoveredByRetry',
    retryId: 'folha-1-r2',
    why: { code: 'auditSentAgainBy', by: 'Maria', at: 0 },
  },
  eventApproved: { code: 'eventApproved', count: 2, cents: 170_000 },
  eventReason: { code: 'eventReason', reason: 'valores errados' },
  eventIdenticalDue: { code: 'eventIdenticalDue', rows: 3 },
  eventCorrects: { code: 'eventCorrects', batchId: 2 },
  eventNewPayments: {
    code: 'eventNewPayments',
    rows: 2,
    confirmed: true,
    repeating: [
      {
        line: 2,
        name: 'Ana Souza',
        cents: 350_000,
        repeats: { file: 'folha.csv', line: 2, orderId: 'nov-02', state: 'paid' },
      },
    ],
  },
  eventReplacedBy: { code: 'eventReplacedBy', batchId: 4 },
  eventMovedIntoApproved: { code: 'eventMovedIntoApproved' },
  eventSentAgainAs: {
    code: 'eventSentAgainAs',
    line: 3,
    orderId: 'folha-2',
    state: 'failed',
    retryId: 'folha-2-r2',
  },
  turnedDownBy: { code: 'turnedDownBy', reason: 'mês errado' },
  releasedIdenticalBy: { code: 'releasedIdenticalBy', by: 'maria' },
  releasedNewBy: { code: 'releasedNewBy', by: 'maria', repeats: 2 },
  linkedCopyBy: { code: 'linkedCopyBy', by: 'maria', batchId: 3 },
  turnedDown: { code: 'turnedDown', file: 'folha.csv', batchId: 3, moved: true },
  rejectNoLongerWaiting: { code: 'rejectNoLongerWaiting', file: 'folha.csv' },
  retryQueued: {
    code: 'retryQueued',
    file: 'folha.csv',
    batchId: 3,
    count: 2,
    cents: 17_000,
    by: 'maria',
  },
  retryLine: { code: 'retryLine', line: 3, from: 'folha-2', to: 'folha-2-r2' },
  retryNotFailed: { code: 'retryNotFailed', orderId: 'folha-1', state: 'paid', retriedAs: null },
  retryNothing: { code: 'retryNothing', target: 'folha.csv', file: 'folha.csv', hintFlags: '' },
  templateWritten: { code: 'templateWritten', path: '/home/ana/pagamentos.csv' },
  templateHowToFill: { code: 'templateHowToFill', path: '/home/ana/pagamentos.csv' },
  templateExists: { code: 'templateExists', path: '/home/ana/pagamentos.csv' },
  journalCopyNotPostgres: { code: 'journalCopyNotPostgres' },
  journalCopyBusy: {
    code: 'journalCopyBusy',
    command: 'watch',
    pid: 4242,
    host: 'pagamentos-1',
    since: Date.UTC(2026, 10, 27, 7),
  },
  journalCopyStarted: {
    code: 'journalCopyStarted',
    from: '/srv/payouts/journal.db',
    to: 'postgres://payouts:***@db.interno:5432/payouts',
  },
  journalCopyCopied: {
    code: 'journalCopyCopied',
    batches: 12,
    payouts: 1,
    lines: 3,
    audit: 1,
    events: 2,
    journalId: '6f1c2a4e-0000-4000-8000-000000000001',
  },
  journalCopyCompared: { code: 'journalCopyCompared', batches: 12 },
  journalCopyState: {
    code: 'journalCopyState',
    state: 'paid',
    sqlite: { count: 1200, cents: 123_456_78 },
    postgres: { count: 1200, cents: 123_456_78 },
  },
  journalCopyNext: {
    code: 'journalCopyNext',
    address: 'postgres://payouts:***@db.interno:5432/payouts',
  },
  journalCopyNotEmpty: {
    code: 'journalCopyNotEmpty',
    address: 'postgres://payouts:***@db.interno:5432/payouts',
    tables: ['batches', 'notes'],
    schema: 2,
  },
  journalCopyDiffers: {
    code: 'journalCopyDiffers',
    address: 'postgres://payouts:***@db.interno:5432/payouts',
    batches: [3],
  },
  journalCopyLockLost: { code: 'journalCopyLockLost' },
  releasedByHost: { code: 'releasedByHost', host: 'pay-2' },
  journalCompactNothing: { code: 'journalCompactNothing', before: '2026-06-01' },
  journalCompactStarted: {
    code: 'journalCompactStarted',
    before: '2026-06-01',
    batches: 2,
    entries: 812,
    archive: '/srv/payouts/archive/journal-history',
  },
  journalCompactDone: {
    code: 'journalCompactDone',
    batches: 2,
    entries: 812,
    archive: '/srv/payouts/archive/journal-history/2026-11-28.csv',
    longestHoldMs: 4,
  },
  journalCompactBytes: {
    code: 'journalCompactBytes',
    fileBefore: 7_500_000,
    walBefore: 4_120_000,
    fileAfter: 7_500_000,
    walAfter: 0,
    free: 3_100_000,
    checkpointed: true,
  },
  hostClockUnknown: {
    code: 'hostClockUnknown',
    host: 'pay-2',
    roundTripMs: 12_400,
    boundMs: 30_000,
    watching: true,
  },
  journalCompactTables: {
    code: 'journalCompactTables',
    tablesBefore: 812_000_000,
    auditBefore: 410_000_000,
    tablesAfter: 806_000_000,
    auditAfter: 404_000_000,
    vacuumed: true,
  },
  historyMoved: {
    code: 'historyMoved',
    archive: '/srv/payouts/archive/journal-history/2026-11-28.csv',
  },
  fourEyesWaits: {
    code: 'fourEyesWaits',
    file: 'folha.csv',
    dropper: 'maria',
    approvers: ['ana', '@financeiro'],
    approvalCode: 'K7QD-M2XA-P9RT',
    approvedBy: ['ana'],
    needed: 2,
    second: { rule: 'above', cents: 6_000_000, limit: 5_000_000 },
    hintFlags: ' --settings-file "/etc/payouts.env"',
  },
  fourEyesNoApprovers: { code: 'fourEyesNoApprovers', file: 'folha.csv' },
  fourEyesRefused: {
    code: 'fourEyesRefused',
    file: 'folha.csv.aprovado',
    owner: 'maria',
    rule: 'dropper',
    dropper: 'maria',
    approvers: ['ana', 'bruno'],
  },
  fourEyesMovedBack: { code: 'fourEyesMovedBack', file: 'folha.csv' },
  fourEyesCode: {
    code: 'fourEyesCode',
    approvalCode: 'K7QD-M2XA-P9RT',
    batchId: 3,
    count: 2,
    cents: 170_000,
  },
  eventFourEyesApproved: {
    code: 'eventFourEyesApproved',
    approvalCode: 'K7QD-M2XA-P9RT',
    count: 2,
    cents: 170_000,
    needed: 1,
    via: 'folha.csv.aprovado',
  },
  eventDropped: { code: 'eventDropped', uid: 1001 },
  fourEyesByService: { code: 'fourEyesByService', user: 'payouts' },
  fourEyesApprovalWritten: {
    code: 'fourEyesApprovalWritten',
    file: 'folha.csv',
    approvalFile: 'folha.csv.ana.aprovado',
    approvalCode: 'K7QD-M2XA-P9RT',
    by: 'ana',
    rejects: false,
  },
  fourEyesNoCode: { code: 'fourEyesNoCode', file: 'folha.csv' },
  fourEyesReleased: {
    code: 'fourEyesReleased',
    file: 'folha.csv',
    approvedBy: ['ana', 'bruno'],
    approvalCode: 'K7QD-M2XA-P9RT',
  },
  fourEyesChanged: {
    code: 'fourEyesChanged',
    file: 'folha.csv',
    approvalCode: 'K7QD-M2XA-P9RT',
    hintFlags: ' --settings-file "/etc/payouts.env"',
  },
  fourEyesDecisionExists: {
    code: 'fourEyesDecisionExists',
    file: 'folha.csv',
    approvalFile: 'folha.csv.ana.aprovado',
    rejects: false,
  },
  fourEyesInboxRefused: {
    code: 'fourEyesInboxRefused',
    file: 'folha.csv',
    why: 'writable',
    links: 1,
    mode: '0664',
  },
  fourEyesNotAsDropped: { code: 'fourEyesNotAsDropped', file: 'folha.csv' },
  fourEyesAnswerReleased: {
    code: 'fourEyesAnswerReleased',
    file: 'folha.csv',
    batchId: 3,
    dropper: 'maria',
    approvers: ['ana', 'bruno'],
  },
  fourEyesDropped: { code: 'fourEyesDropped', file: 'folha.csv', dropper: 'maria' },
  approvalsNone: { code: 'approvalsNone', since: '2026-11-01' },
  approvalsRelease: {
    code: 'approvalsRelease',
    batchId: 1,
    file: 'folha.csv',
    droppedBy: 'maria',
    approvedBy: [{ by: 'ana', at: '2026-11-28T10:00:00-03:00' }],
    approvalCode: 'K7QD-M2XA-P9RT',
    state: 'done',
    done: '2 paid (R$ 6.000,00)',
  },
  heldCoverConflict: {
    code: 'heldCoverConflict',
    file: 'folha.csv',
    line: 2,
    orderId: 'folha-2',
    newFile: 'folha_final.csv',
    hintFlags: '',
  },
  retryWhichBatch: {
    code: 'retryWhichBatch',
    file: 'folha.csv',
    batches: [
      { batchId: 1, at: Date.UTC(2026, 10, 2, 12) },
      { batchId: 2, at: Date.UTC(2026, 10, 2, 15) },
    ],
    hintFlags: '',
  },
};

/** What is English in every language: a sentence the journal keeps as it was written. */
// A caller's English, and a person's own words, are said as they were written.
const SAME_IN_EVERY_LANGUAGE = new Set<SaidCode>(['english', 'eventReason']);

describe('what the reading of a file says', () => {
  const en = CATALOGS.en;
  const pt = CATALOGS['pt-BR'];

  it.each(Object.values(SAMPLES))('says $code in English and in Portuguese', (said) => {
    const [english, portuguese] = [say(en, said), say(pt, said)];
    for (const text of [english, portuguese]) {
      expect(text).not.toMatch(/undefined|\[object|NaN/);
      expect(text.trim()).not.toBe('');
    }
    if (!SAME_IN_EVERY_LANGUAGE.has(said.code)) expect(portuguese).not.toBe(english);
  });

  it('renders what a Said holds in the same language', () => {
    const nested = SAMPLES.headerUnusable;
    expect(say(pt, nested)).toMatch(/^tem um cabeçalho \(linha 1\).*: faltam colunas: CPF\/CNPJ/);
    expect(say(en, nested)).toMatch(/^has a header \(line 1\).*: missing columns: recipient's CPF/);
    expect(say(pt, SAMPLES.alsoWrong)).toBe(
      'está vazio: o nome do favorecido é obrigatório (também: CPF, Valor)',
    );
    expect(say(pt, SAMPLES.moreMistakes)).toMatch(
      /^está vazio: o nome do favorecido é obrigatório \| Valor: 0,00 é zero/,
    );
  });

  it('says the balance check in both, with the fees, and 1 pagamento', () => {
    expect(say(en, SAMPLES.balanceShortfall)).toBe(
      "the balance leaves R$ 500,00 for this batch's R$ 603,00 (R$ 600,00 in 3 payouts and R$ 3,00 in fees at R$ 1,00 each, feePerPayoutCents)",
    );
    expect(say(pt, SAMPLES.balanceBlocks)).toBe(
      'o saldo não pôde ser lido (503), então R$ 6,00 não pode ser conferido com ele (balanceCheck: block): nada dele é enviado',
    );
  });

  it('says the progress line with real plurals, rows sending and to check apart', () => {
    expect(say(pt, SAMPLES.progressLine)).toBe(
      'progresso: 1/1 enviado · 1 liquidado · 0,5 linhas/s',
    );
    expect(say(en, SAMPLES.progressLine)).toBe('progress: 1/1 sent · 1 settled · 0.5 rows/s');
    expect(say(pt, SAMPLES.progress)).toBe(
      '10/17 enviados · 2 enviando · 1 a conferir · 4 liquidados · 50,0 linhas/s',
    );
  });

  it('says why a row is held in Portuguese, and in English as the journal always has', () => {
    expect(say(en, SAMPLES.heldDuplicate)).toBe(
      'possible duplicate: the same document and amount as folha-outubro.csv, line 2, journaled on 2026-10-05 (now paid, transaction 1001); not sent. If it is a new payment after all: payouts approve "folha-outubro-2.csv" --new-batch --config "/etc/payouts.json" lists it, and pays it again only when also given the option --repeats and the count of such rows it lists',
    );
    expect(say(pt, SAMPLES.heldDuplicate)).toBe(
      'possível duplicata: o mesmo documento e valor de folha-outubro.csv, linha 2, registrado no diário em 05/10/2026 (agora pago, transação 1001); não enviado. Se for mesmo um pagamento novo: payouts approve "folha-outubro-2.csv" --new-batch --config "/etc/payouts.json" o lista, e só o paga de novo quando receber também a opção --repeats e a contagem dessas linhas que ele lista',
    );
    expect(say(en, SAMPLES.heldSameReference)).toBe(
      'possible duplicate: the same reference (1002) for the same document as aluguel-semana-02.csv, line 2, journaled on 2026-09-04 (now paid, transaction 1002; R$ 4.000,00 there, R$ 4.200,00 here); held whatever its age, not sent. If it is a new payment after all: payouts approve "aluguel-semana-14.csv" --new-batch lists it, and pays it again only when also given the option --repeats and the count of such rows it lists',
    );
    expect(say(pt, SAMPLES.heldSameReference)).toBe(
      'possível duplicata: a mesma referência (1002) para o mesmo documento de aluguel-semana-02.csv, linha 2, registrado no diário em 04/09/2026 (agora pago, transação 1002; R$ 4.000,00 lá, R$ 4.200,00 aqui); retido qualquer que seja a idade, não enviado. Se for mesmo um pagamento novo: payouts approve "aluguel-semana-14.csv" --new-batch o lista, e só o paga de novo quando receber também a opção --repeats e a contagem dessas linhas que ele lista',
    );
    expect(say(en, { ...SAMPLES.heldJournaled, at: null })).toContain(
      'on an earlier run (now rejected): not sent again; to send that payment again on purpose, run: payouts retry folha-1.',
    );
    expect(say(pt, SAMPLES.rowsRepeatInFile)).toContain(
      'retida para uma pessoa decidir: idêntica à linha 2 deste arquivo',
    );
  });

  it("says a journal's copy in Portuguese plurals, its amounts as reais", () => {
    expect(say(pt, SAMPLES.journalCopyCopied)).toMatch(
      /^Copiados: 12 lotes, 1 pagamento, 3 linhas que não são pagamentos, 1 registro de auditoria, 2 eventos de lote;/,
    );
    expect(say(en, SAMPLES.journalCopyCopied)).toMatch(
      /^Copied: 12 batches, 1 payout, 3 lines that are not payouts, 1 audit entry, 2 batch events;/,
    );
    expect(say(pt, SAMPLES.journalCopyState)).toMatch(/^pago\s+1200\s+R\$ 123\.456,78\s+1200/);
    expect(say(pt, { ...SAMPLES.journalCopyCompared, batches: 1 })).toContain(
      'o único lote com pagamentos',
    );
  });

  it('says what each answer to a held file pays, the repeats named in words outside the command', () => {
    expect(say(en, SAMPLES.readingNewBatch)).toBe(
      'a new payroll: payouts approve "folha.csv" --new-batch --config "/etc/payouts.json" pays the 1 row that repeats nothing (R$ 1.999,99: Diego Reis R$ 1.999,99); the 4 rows that repeat a payout already made or under way (R$ 12.000,00: Ana Souza R$ 3.500,00, Bruno Lima R$ 2.500,00, Carla Dias R$ 3.000,00, …) are paid again only when you also give it the option --repeats with their count, 4, once you have checked each is due twice',
    );
    expect(say(pt, SAMPLES.readingCorrects)).toBe(
      'o mesmo arquivo, corrigido (linhas acrescentadas ou corrigidas): payouts approve "folha.csv" --corrects 1 paga 1 linha (R$ 1.999,99: Diego Reis R$ 1.999,99); o que o lote 1 pagou não é pago de novo',
    );
    expect(say(pt, { ...SAMPLES.readingNewBatch, pays: { rows: 0, cents: 0, first: [] } })).toBe(
      'pagamentos novos mesmo assim: payouts approve "folha.csv" --new-batch --config "/etc/payouts.json" lista as 4 linhas que repetem um pagamento já feito ou em andamento (R$ 12.000,00: Ana Souza R$ 3.500,00, Bruno Lima R$ 2.500,00, Carla Dias R$ 3.000,00, …); elas são pagas de novo só quando você der também a opção --repeats com a contagem delas, 4, depois de conferir que cada uma é devida duas vezes',
    );
  });

  it("says the audit's reasons in English as the journal wrote them, and in Portuguese", () => {
    expect(say(en, SAMPLES.auditRetry)).toBe(
      'attempt 2 of nov-01, after nov-01 failed: sent again on purpose by Maria on 1970-01-01 (payouts retry)',
    );
    expect(say(en, SAMPLES.auditTakenOver)).toBe(
      'a corrected copy of batch 3: taken over by nov-01',
    );
    expect(say(en, SAMPLES.auditCopyTurnedDown)).toBe(
      'the copy that had taken it over was turned down (turned down by a person: mês errado)',
    );
    expect(say(pt, SAMPLES.auditClaimed)).toBe('tomado por run-1234 (tentativa 2)');
    expect(say(pt, SAMPLES.auditCoverEnded)).toMatch(
      /^o pagamento que o cobria, nov-01, terminou \S+: nunca enviada; substituída por folha \(2\)\.csv$/,
    );
  });

  it('says what the commands print in Portuguese, with 1 pagamento and R$ 1.234,56', () => {
    expect(say(pt, SAMPLES.approved)).toBe(
      'folha.csv (lote 3): aprovado: 1 pagamento, R$ 1.234,56 ao todo. Um `payouts watch` em execução o envia agora; senão, o próximo `payouts run`.',
    );
    expect(say(pt, { ...SAMPLES.retryQueued, count: 1 })).toMatch(
      /^folha\.csv \(lote 3\): 1 pagamento, R\$ 170,00, a reenviar, a pedido de maria; a próxima execução o envia:$/,
    );
    expect(say(pt, SAMPLES.retryQueued)).toContain(': 2 pagamentos, R$ 170,00, a reenviar');
    expect(say(pt, SAMPLES.heldForBalance)).toBe(
      'retida: o saldo deixa R$ 60,00 para os R$ 100,00 deste lote; conferido de novo a cada execução',
    );
    expect(say(en, SAMPLES.heldForBalance)).toBe(
      "held: the balance leaves R$ 60,00 for this batch's R$ 100,00; checked again on every run",
    );
  });

  it('says 1 linha, not 1 linhas, and R$ with a decimal comma', () => {
    const mismatch = say(pt, SAMPLES.controlMismatch);
    expect(mismatch).toContain('o arquivo tem 3 linhas e R$ 1.500,00');
    expect(mismatch).toContain('diz 1 linha e R$ 1.600,00');
    expect(say(en, SAMPLES.controlMismatch)).toContain('says 1 row and R$ 1.600,00');
  });
});
