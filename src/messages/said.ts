/**
 * What the reading of a file says of it and of its rows, as values: a code and what the
 * sentence needs. The catalogs (en.ts, pt-BR.ts) turn them into words, so `validate` and
 * its report speak the accountant's language while the journal keeps English.
 */
import type { DocumentKind, PayoutField } from './fields.js';
import type { RowState } from '../domain/row-states.js';

/** Where a control total comes from: the file's own total line, or a sidecar file. */
export type ControlSource = { totalLine: number } | { sidecar: string };

/** Where a byte not in UTF-8 sits. */
export interface BytePosition {
  line: number;
  offset: number;
  /** The byte in hex (`E3`), where it is known. */
  byte?: string;
}

/**
 * Rows a reading of a held file pays or leaves held: how many, their sum, and the first
 * few by name and amount.
 */
export interface Payees {
  rows: number;
  cents: number;
  first: { name: string; cents: number }[];
}

/** A held row that repeats an earlier payout, and that payout where it is known. */
export interface Repeating {
  line: number;
  name: string;
  cents: number;
  repeats: { file: string; line: number; orderId: string; state: RowState } | null;
}

/** The progress of a pass, in rows. */
export interface Progress {
  /** Rows this pass has in play: not settled when it began, or journaled since. */
  total: number;
  /** Of those, taken by the gateway (settled, or pending there). */
  sent: number;
  /** Claimed, with no answer yet: not the gateway's until it answers. */
  sending: number;
  /** Sent with no clear answer (`unknown`): looked up before anyone counts them. */
  toCheck: number;
  settled: number;
  /** Rows sent by this pass a second, since it began. */
  perSecond: number;
}

/** What a cell, a row or a file is told: one of these, rendered by a catalog. */
export type Said =
  // Any cell.
  | { code: 'empty' }
  // A row as a whole.
  | { code: 'rowSpansLines'; line: number; lastLine: number }
  | { code: 'moreValuesThanColumns'; values: number; columns: number }
  | { code: 'valueUnderBlankHeading' }
  | { code: 'controlCharacter' }
  // Invalid lines of journals written before every mistake was said still hold it.
  | { code: 'alsoWrong'; first: Said; columns: string[] }
  // A column null: the file has none for it, and its message names what is missing.
  | { code: 'moreMistakes'; first: Said; more: { column: string | null; message: Said }[] }
  | { code: 'totalLine' }
  | { code: 'identicalRows'; line: number }
  | { code: 'referenceEmpty' }
  // orderId, name, contacts.
  | { code: 'orderIdEmpty' }
  | { code: 'orderIdUnusable'; orderId: string }
  | { code: 'orderIdRepeated'; orderId: string; line: number }
  | { code: 'orderIdLikeRowNumber'; orderId: string }
  | { code: 'nameEmpty' }
  | { code: 'nameNotAName'; name: string }
  | { code: 'nameTooLong'; length: number; max: number }
  | { code: 'noContact'; contact: 'email' | 'phone'; noColumn: boolean }
  | { code: 'emailInvalid'; email: string }
  | { code: 'phoneInvalid'; phone: string }
  // Amounts.
  | { code: 'amountSplit'; written: string; plain: string }
  | { code: 'amountOverLimit'; cents: number; limitCents: number }
  | { code: 'amountZero'; shown: string }
  | { code: 'amountTooLarge'; shown: string }
  | { code: 'amountScientific'; shown: string }
  | { code: 'amountNegative'; shown: string; cents: number; parentheses: boolean }
  | { code: 'notAnAmount'; shown: string; wholeReaisMissing?: string }
  | { code: 'notInReais'; shown: string }
  | { code: 'thousandsOrDecimals'; shown: string; digits: string }
  | { code: 'tooManyDecimals'; shown: string }
  | { code: 'mixedThousands'; shown: string; separators: string[] }
  | { code: 'misplacedThousands'; shown: string }
  | { code: 'misplacedSpace'; shown: string }
  | { code: 'centsNegative'; shown: string }
  | { code: 'centsWithDecimals'; shown: string }
  | { code: 'notCents'; shown: string }
  // Documents.
  | { code: 'zerosRestored'; written: string; read: string }
  | { code: 'documentScientific'; text: string }
  | { code: 'documentCharacters'; text: string }
  | { code: 'cnpjCheckDigits'; text: string }
  | { code: 'notCpfOrCnpj'; text: string }
  | { code: 'cnpjEvenRestored'; digits: string; restored: string; keepZeros: boolean }
  | { code: 'cpfOrCnpjWithoutZeros'; digits: string }
  | { code: 'cpfRestored'; digits: string; restored: string; maybeCnpj: boolean }
  | { code: 'cpfCheckDigits'; text: string; hint?: 'checkPerson' | 'maybeCnpj' }
  | { code: 'cpfWithSlash'; text: string; written: string }
  // Pix keys.
  | { code: 'keyTypeUnknown'; text: string }
  | { code: 'keyNotRowDocument'; type: DocumentKind; key: string; document: string }
  | { code: 'keyScientific'; key: string }
  | { code: 'keyDocument'; type: DocumentKind; problem: Said }
  | { code: 'keyDocumentKind'; type: DocumentKind; key: string; kind: DocumentKind }
  | { code: 'keyEmail'; key: string; problem: Said }
  | { code: 'keyPhone'; key: string }
  | { code: 'keyRandom'; key: string }
  | { code: 'keyCpfOrPhone'; key: string }
  | { code: 'keyTypeUntold'; key: string }
  | { code: 'emailKeyTooLong'; length: number; max: number }
  | { code: 'emailKeySpace' }
  | { code: 'emailKeyNotAscii'; character: string }
  | { code: 'emailKeyShape' }
  | { code: 'emailKeyTwoDots' }
  | { code: 'emailKeyDotAtEdge' }
  | { code: 'emailKeyNameCharacter'; character: string }
  | { code: 'emailKeyNoDomain' }
  | { code: 'emailKeyDomainUnderscore' }
  | { code: 'emailKeyDomainHyphen'; label: string }
  | { code: 'emailKeyDomainPartLong' }
  | { code: 'emailKeyDomainCharacter'; character: string }
  | { code: 'emailKeyNoDomainName' }
  // The file as a whole.
  | { code: 'notAFile' }
  | { code: 'fileMissing' }
  | { code: 'fileUnreadable'; errorCode: string }
  | { code: 'fileEmpty' }
  | { code: 'fileTooLarge'; bytes: number; limit: number }
  | { code: 'fileBinary' }
  | { code: 'notUtf8'; at: BytePosition }
  | { code: 'mixedEncodings'; good: BytePosition; bad: BytePosition }
  | { code: 'lineTooLong'; bytes: number; line: number; max: number }
  | { code: 'headerUnusable'; line: number; problem: Said }
  | { code: 'tooManyColumns'; count: number; max: number }
  | { code: 'sameColumnTwice'; first: string; second: string; field: PayoutField }
  | { code: 'twoAmountColumns'; cents: string; reais: string }
  | { code: 'missingColumns'; fields: PayoutField[] }
  | { code: 'blankRun'; max: number; line: number }
  | { code: 'quoteNotClosed'; line: number }
  | { code: 'recordTooLong'; line: number; max: number }
  | { code: 'notCsv'; line: number; detail: string }
  | { code: 'noHeader' }
  | { code: 'noRows' }
  | { code: 'totalLineUnreadable'; line: number; text: string }
  | { code: 'sidecarLine'; sidecar: string; line: number; text: string }
  | { code: 'sidecarSaysNothing'; sidecar: string }
  | { code: 'controlUncheckable'; source: ControlSource; cents: number; lines: number[] }
  | {
      code: 'controlMismatch';
      source: ControlSource;
      file: { rows?: number; cents?: number };
      control: { rows?: number; cents?: number };
    }
  | { code: 'overFileLimit'; cents: number; limitCents: number }
  | { code: 'fileChanged' }
  | { code: 'fileOld'; changedAt: number; ageMs: number }
  // A row held by the rules on who is paid, and why: the journal keeps these beside the
  // English. `at` is when the payout it names was journaled (ms; null if not kept).
  | {
      code: 'heldJournaled';
      orderId: string;
      file: string;
      line: number;
      at: number | null;
      state: RowState;
      retry: boolean;
      hintFlags: string;
    }
  | {
      code: 'heldDuplicate';
      file: string;
      line: number;
      at: number;
      state: RowState;
      transactionId: number | null;
      newFile: string;
      hintFlags: string;
    }
  | {
      code: 'heldSameReference';
      /** The reference both rows give, as compared (readReference). */
      reference: string;
      file: string;
      line: number;
      at: number;
      state: RowState;
      transactionId: number | null;
      paidCents: number;
      cents: number;
      newFile: string;
      hintFlags: string;
    }
  | {
      code: 'heldCovered';
      file: string;
      line: number;
      at: number;
      state: RowState;
      transactionId: number | null;
    }
  | {
      code: 'heldChangesPaid';
      file: string;
      line: number;
      state: RowState;
      paidCents: number;
      cents: number;
    }
  | {
      code: 'heldChangesPayee';
      file: string;
      line: number;
      at: number;
      state: RowState;
      transactionId: number | null;
      cents: number;
      paidKey: string;
      paidName: string;
      key: string;
      name: string;
      newFile: string;
      hintFlags: string;
    }
  | {
      code: 'heldFailedBefore';
      file: string;
      line: number;
      orderId: string;
      transactionId: number | null;
      state: RowState;
      hintFlags: string;
    }
  | {
      code: 'heldForCopy';
      file: string;
      batchId: number;
      at: number;
      earlierBatchId: number;
      hintFlags: string;
    }
  | { code: 'heldIdentical'; line: number; file: string; hintFlags: string }
  | {
      code: 'heldSameName';
      file: string;
      batchId: number;
      at: number;
      newFile: string;
      hintFlags: string;
      /** Its first rows that repeat a row of that file, and how many more; absent in rows held before they were kept. */
      repeats?: { line: number; earlierLine: number }[];
      moreRepeats?: number;
    }
  // A file in a run's summary: why its rows wait for a person, with one row's reason.
  | { code: 'english'; text: string }
  | { code: 'rowsRepeatInFile'; rows: number; cents: number; example: Said }
  | { code: 'rowsChangePaid'; rows: number; example: Said }
  | {
      code: 'copyFreezes';
      file: string;
      batchId: number;
      rows: number;
      cents: number;
      newFile: string;
      hintFlags: string;
    }
  | {
      code: 'rowsRepeatFailed';
      rows: number;
      cents: number;
      file: string;
      hintFlags: string;
      example: Said;
    }
  | { code: 'rowsRepeatOtherFile'; rows: number; cents: number }
  /** A row held by a rule of its own, listed in its file's summary. */
  | { code: 'heldRowAt'; line: number; name: string; cents: number; why: Said }
  /** The held rows a summary leaves unlisted: the result file has them all. */
  | { code: 'heldRowsMore'; rows: number }
  | {
      code: 'namedAsEarlier';
      file: string;
      batchId: number;
      at: number;
      repeats?: { line: number; earlierLine: number }[];
      moreRepeats?: number;
    }
  // What each answer a person may give to a held file pays (`file` as the accountant named it).
  | { code: 'readingCorrects'; file: string; batchId: number; pays: Payees; hintFlags: string }
  | { code: 'readingNewBatch'; file: string; pays: Payees; repeating: Payees; hintFlags: string }
  | { code: 'orderIdsJournaled'; rows: number; example: Said }
  | { code: 'pendingTooLong'; rows: number; age: string; orderId: string; hintFlags: string }
  | { code: 'resultNotWritten'; path: string; why: string }
  // The balance check: what a batch needs, and what the balance leaves it.
  | {
      code: 'balanceShortfall';
      cents: number;
      count: number;
      feeCents: number;
      /** What the balance leaves this batch; absent when it could not be read. */
      availableCents?: number;
      readError?: string;
    }
  | { code: 'balanceBlocks'; shortfall: Said }
  // Files that wait, or cannot be taken.
  | { code: 'waitingToSettle'; settle: string; file: string }
  | { code: 'processingFull' }
  /** Another host sharing the journal is taking or reading it (a claim in the journal). */
  | { code: 'takenByHost'; host: string }
  /** `permission`: the user running payouts may not read it (a file saved owner-only). */
  | { code: 'cannotRead'; systemCode: string; permission: boolean }
  | { code: 'awaitingApproval'; file: string; hintFlags: string }
  /** A file waiting for approval: an answer to its held rows approves it too. */
  | { code: 'answerApproves' }
  /**
   * A waiting file whose rows its corrected copy took over or closed: nothing of it is sent.
   * `next`: the copy's approve command, while the copy waits for approval itself.
   */
  | {
      code: 'replacedByCopy';
      copyFile: string;
      copyBatchId: number;
      at: number;
      next: { file: string; hintFlags: string } | null;
    }
  | {
      code: 'fileReplaced';
      /** The command that named it (`approve`), or null in its report. */
      verb: string | null;
      file: string;
      batchId: number;
      copyFile: string;
      copyBatchId: number;
      at: number;
      next: { file: string; hintFlags: string } | null;
    }
  | { code: 'cutShort'; file: string }
  | { code: 'fileNotInProcessing'; file: string }
  | { code: 'takenOnceRenamed' }
  | { code: 'hiddenPayoutFile' }
  | { code: 'notARegularFile' }
  | { code: 'releaseTurnedDown' }
  | { code: 'releaseAlreadyReleased' }
  | { code: 'releaseUnknownBytes' }
  // A command that would write the journal.
  | { code: 'clockBehindJournal'; nowMs: number; latestMs: number; timeZone: string }
  // A host whose clock reads further from the shared journal's than maxClockSkew allows.
  | {
      code: 'hostClockOff';
      host: string;
      offsetMs: number;
      way: 'ahead' | 'behind';
      boundMs: number;
      watching: boolean;
    }
  // The journal's own word, as a JournalError of its kind carries it (journal/failures.ts).
  | { code: 'journalNewerSchema'; path: string; schema: number; latest: number }
  | { code: 'journalOnNetworkFilesystem'; folder: string; fsType: string }
  /** The SQLite journal was moved to PostgreSQL by journal copy (address without its password). */
  | { code: 'journalMoved'; address: string; at: number }
  | { code: 'retryIdTaken'; orderId: string; retryId: string }
  /** A refusal the journal gives only a developer's detail for (a row moved meanwhile). */
  | { code: 'journalRefused'; detail: string }
  // A result file's message for a row held with its whole batch (`why` null: journals
  // before the balance's reason was kept), or paid by nobody once its cover came back.
  | { code: 'heldForBalance'; why: Said | null }
  | { code: 'heldWithFile'; problems: readonly Said[]; state: string }
  | {
      code: 'coverUndone';
      orderId: string;
      file: string;
      line: number;
      state: RowState;
      own: string;
      hintFlags: string;
    }
  // Rows a later file or a person's retry took over (the journal keeps these beside the English).
  | { code: 'takenOverByLine'; state: RowState; line: number; file: string }
  | { code: 'takenOverBy'; file: string }
  | { code: 'leftOutByCopy'; file: string }
  | { code: 'correctedIn'; first: Said; file: string }
  | { code: 'sentAgainOnPurpose'; by: string; at: number; retryId: string; earlier: string | null }
  | { code: 'repeatSentAgain'; by: string; at: number; retryId: string }
  // Why the journal moved a row, as its audit keeps it (`payouts status ORDERID`). `why`:
  // what the store or a person was doing when a rule moved it (a copy linked, say).
  | { code: 'auditJournaled'; batchId: number; line: number }
  | { code: 'auditReplaced'; batchId: number; line: number }
  | { code: 'auditClaimed'; owner: string; attempt: number }
  | { code: 'auditCheckedAgain'; when: 'claimed' | 'correctionAnswered'; said: Said }
  | { code: 'auditLookedUpAfterLoss' }
  | { code: 'auditLeaseEnded'; owner: string }
  | { code: 'auditResending'; notFound: number; secondsSinceSent: number }
  // A claim given back unsent; `why`: the run's stop (its English), or one of the four below.
  | { code: 'auditClaimedNotSent'; why: Said }
  | { code: 'auditClaimedAheadNotSent'; why: Said }
  | { code: 'auditClaimTooOld' }
  | { code: 'runStopped' }
  | { code: 'runFailed' }
  | { code: 'sendingPaused' }
  | { code: 'claimWaitedTooLong' }
  | { code: 'auditBalanceCovers' }
  | { code: 'auditFrozen'; said: Said }
  | { code: 'auditUnfrozen'; why: Said }
  | { code: 'auditCoverEnded'; orderId: string; state: RowState; said: Said }
  | {
      code: 'auditRetry';
      attempt: number;
      base: string;
      orderId: string;
      state: RowState;
      why: Said;
    }
  | { code: 'auditRetriedAs'; why: Said; retryId: string }
  | { code: 'auditSentAgainBy'; by: string; at: number }
  | { code: 'auditNameWeighed' }
  | { code: 'auditRepeatsFailed' }
  | { code: 'auditCorrectedCopyOf'; batchId: number }
  | { code: 'auditCopyTurnedDown'; why: Said }
  | { code: 'auditFreezerTurnedDown'; why: Said }
  | { code: 'auditCovered'; why: Said; said: Said }
  | { code: 'auditTakenOver'; why: Said; by: string }
  | { code: 'auditTakesOver'; why: Said; orderId: string }
  | { code: 'auditReplaces'; why: Said }
  | { code: 'auditLeftOut'; why: Said; file: string }
  | { code: 'auditGivenBack'; why: Said }
  | { code: 'auditCoveredByRetry'; retryId: string; why: Said }
  // A person's decision about a batch, as its events keep it.
  | { code: 'eventSentAgainAs'; line: number; orderId: string; state: RowState; retryId: string }
  | { code: 'eventApproved'; count: number; cents: number }
  /** A person's own words (`payouts reject --reason`), kept as written. */
  | { code: 'eventReason'; reason: string }
  | { code: 'eventIdenticalDue'; rows: number }
  | { code: 'eventCorrects'; batchId: number }
  /** `confirmed`: the person gave --repeats, so the repeating rows were released too. */
  | { code: 'eventNewPayments'; rows: number; confirmed: boolean; repeating: Repeating[] }
  | { code: 'eventReplacedBy'; batchId: number }
  | { code: 'eventMovedIntoApproved' }
  // `payouts run`.
  | {
      code: 'pendingTooLongIn';
      file: string;
      rows: number;
      age: string;
      orderId: string;
      hintFlags: string;
    }
  | { code: 'approvedSentNow'; file: string }
  // Its progress on stderr, counted from the pass's start.
  | ({ code: 'progress' } & Progress)
  | { code: 'progressLine'; progress: Said }
  // `payouts approve`.
  | { code: 'approved'; file: string; batchId: number; count: number; cents: number }
  | {
      code: 'linkedAsCopy';
      file: string;
      batchId: number;
      corrects: number;
      by: string;
      count: number;
    }
  | {
      code: 'releasedIdentical';
      file: string;
      batchId: number;
      count: number;
      cents: number;
      by: string;
    }
  | { code: 'notAwaiting'; verb: string; file: string; waiting: string[] }
  | { code: 'approveOneAnswer' }
  | { code: 'approveOptionsNeedNewBatch' }
  | { code: 'approveRowsOrExcept' }
  | { code: 'approveChanged'; file: string }
  | { code: 'approveNoFreeName'; file: string }
  | { code: 'approveNoBatch'; batchId: number }
  | { code: 'approveNothingHeld'; file: string; hintFlags: string }
  // `payouts reject`.
  | { code: 'turnedDownBy'; reason: string }
  // A person's answer about held rows, as their audit keeps it.
  | { code: 'releasedIdenticalBy'; by: string }
  /** `repeats`: the count the person confirmed (--repeats), or null. */
  | { code: 'releasedNewBy'; by: string; repeats: number | null }
  | { code: 'linkedCopyBy'; by: string; batchId: number }
  | { code: 'turnedDown'; file: string; batchId: number | null; moved: boolean }
  | { code: 'rejectNoLongerWaiting'; file: string }
  // `payouts retry`.
  | { code: 'retryQueued'; file: string; batchId: number; count: number; cents: number; by: string }
  | { code: 'retryLine'; line: number; from: string; to: string }
  | { code: 'retryNotFailed'; orderId: string; state: RowState; retriedAs: string | null }
  | { code: 'retryNothing'; target: string; file: string; hintFlags: string }
  // `payouts template`.
  | { code: 'templateWritten'; path: string }
  | { code: 'templateHowToFill'; path: string }
  | { code: 'templateExists'; path: string }
  // payouts journal copy: a home's journal moved to PostgreSQL.
  | { code: 'journalCopyNotPostgres' }
  | { code: 'journalCopyBusy'; command: string | null; pid: number; host: string; since: number }
  | { code: 'journalCopyStarted'; from: string; to: string }
  | {
      code: 'journalCopyCopied';
      batches: number;
      payouts: number;
      lines: number;
      audit: number;
      events: number;
      journalId: string;
    }
  | { code: 'journalCopyCompared'; batches: number }
  | { code: 'journalCopyState'; state: RowState; sqlite: Tally; postgres: Tally }
  | { code: 'journalCopyNext'; address: string }
  | { code: 'journalCopyNotEmpty'; address: string; tables: string[]; schema: number }
  | { code: 'journalCopyDiffers'; address: string; batches: number[] }
  | { code: 'journalCopyLockLost' }
  /** A file of approved/ another host sharing the journal is releasing (a claim in the journal). */
  | { code: 'releasedByHost'; host: string }
  // payouts journal compact: old history moved out of the journal.
  | { code: 'journalCompactNothing'; before: string }
  | {
      code: 'journalCompactStarted';
      before: string;
      batches: number;
      entries: number;
      archive: string;
    }
  | {
      code: 'journalCompactDone';
      batches: number;
      entries: number;
      archive: string;
      longestHoldMs: number;
    }
  | {
      code: 'journalCompactBytes';
      fileBefore: number;
      walBefore: number;
      fileAfter: number;
      walAfter: number;
      free: number;
      checkpointed: boolean;
    }
  // A host whose clock no reading could place within or beyond maxClockSkew: too slow a round trip.
  | {
      code: 'hostClockUnknown';
      host: string;
      roundTripMs: number;
      boundMs: number;
      watching: boolean;
    }
  // payouts journal compact on PostgreSQL: the tables' bytes, and whether VACUUM ran.
  | {
      code: 'journalCompactTables';
      tablesBefore: number;
      auditBefore: number;
      tablesAfter: number;
      auditAfter: number;
      vacuumed: boolean;
    }
  // A batch's event: its payouts' history moved into this archive file.
  | { code: 'historyMoved'; archive: string }
  // Four eyes: a waiting file, who may release it, and what has not counted.
  | {
      code: 'fourEyesWaits';
      file: string;
      dropper: string;
      /** `approvers` without the dropper: names and @groups. */
      approvers: string[];
      approvalCode: string;
      approvedBy: string[];
      needed: number;
      /** Why a second approver is needed: its total above secondApprovalAbove, or the day's dailyLimit. */
      second: { rule: 'above' | 'daily'; cents: number; limit: number } | null;
      /** The global flags of the run (see hintFlagsOf), so `payouts approve` reaches its home. */
      hintFlags: string;
    }
  | { code: 'fourEyesNoApprovers'; file: string }
  | {
      code: 'fourEyesRefused';
      file: string;
      owner: string;
      rule: FourEyesRule;
      dropper: string;
      approvers: string[];
    }
  | { code: 'fourEyesMovedBack'; file: string }
  | { code: 'fourEyesCode'; approvalCode: string; batchId: number; count: number; cents: number }
  | {
      code: 'eventFourEyesApproved';
      approvalCode: string;
      count: number;
      cents: number;
      needed: number;
      via: string;
      /** Absent from approvals journaled before uids were: counted by name. */
      uid?: number;
    }
  | { code: 'eventDropped'; uid: number }
  | { code: 'fourEyesByService'; user: string }
  | {
      code: 'fourEyesApprovalWritten';
      file: string;
      approvalFile: string;
      approvalCode: string;
      by: string;
      rejects: boolean;
    }
  | { code: 'fourEyesNoCode'; file: string }
  | { code: 'fourEyesReleased'; file: string; approvedBy: string[]; approvalCode: string }
  // A waiting file whose bytes are no longer those its report was made of.
  | {
      code: 'fourEyesChanged';
      file: string;
      approvalCode: string;
      /** The global flags of the run (see hintFlagsOf), so `payouts reject` reaches its home. */
      hintFlags: string;
    }
  | { code: 'fourEyesDecisionExists'; file: string; approvalFile: string; rejects: boolean }
  // A dropped file four eyes cannot tell the dropper of: left in the inbox.
  | {
      code: 'fourEyesInboxRefused';
      file: string;
      why: 'link' | 'not-a-file' | 'linked' | 'writable';
      links: number;
      mode: string;
    }
  | { code: 'fourEyesNotAsDropped'; file: string }
  | {
      code: 'fourEyesAnswerReleased';
      file: string;
      batchId: number;
      dropper: string;
      approvers: string[];
    }
  | { code: 'fourEyesDropped'; file: string; dropper: string }
  | { code: 'approvalsNone'; since: string | null }
  | {
      code: 'approvalsRelease';
      batchId: number;
      file: string;
      droppedBy: string | null;
      approvedBy: { by: string; at: string }[];
      approvalCode: string | null;
      state: string;
      done: string;
    }
  // A covered row whose cover's orderId the gateway holds for another transaction.
  | {
      code: 'heldCoverConflict';
      file: string;
      line: number;
      orderId: string;
      newFile: string;
      hintFlags: string;
    }
  | {
      code: 'retryWhichBatch';
      file: string;
      batches: { batchId: number; at: number }[];
      hintFlags: string;
    };

/** Why an approval file releases nothing under four eyes. */
export type FourEyesRule =
  | 'not-a-file'
  | 'writable'
  | 'service'
  | 'dropper'
  | 'not-approver'
  | 'other-code'
  | 'changed-file'
  | 'linked';

/** Rows and their sum in cents, as a copy of the journal compares them. */
export interface Tally {
  count: number;
  cents: number;
}

export type SaidCode = Said['code'];

/** One catalog's words for every Said: `say` renders what one holds inside it. */
export type SaidTexts = {
  [C in SaidCode]: (said: Extract<Said, { code: C }>, say: (said: Said) => string) => string;
};
