/**
 * What accountants read, one catalog per language (en.ts, pt-BR.ts). Each catalog is
 * typed as a Catalog, so a message missing from one is a compile error; a test also
 * renders every message of both.
 */
import type { FileState } from './file-state.js';
import type { RowState } from '../domain/row-states.js';
import type { Language } from './language.js';
import { en } from './en.js';
import { ptBR } from './pt-BR.js';
import type { SaidTexts } from './said.js';

/** The headings the catalogs say: the columns of a result file and of a report, the sandbox's mark. */
export type Heading =
  | 'line'
  | 'orderId'
  | 'name'
  | 'pixKeyType'
  | 'pixKey'
  | 'cpfCnpj'
  | 'value'
  | 'status'
  | 'transactionId'
  | 'endToEndId'
  | 'fee'
  | 'net'
  | 'createdAt'
  | 'processedAt'
  | 'message'
  | 'amountAsWritten'
  | 'column'
  | 'sandbox'
  | 'droppedBy'
  | 'approvedBy';

/** What a status cell may say: a row's state, a line's kind, or (a report) `valid`. */
export type StatusWord = RowState | 'skipped' | 'replay' | 'valid';

/** One command's help: what it does, its argument, its options by name, what follows them. */
interface CommandHelp<Option extends string = never> {
  description: string;
  options: Record<Option, string>;
  /** The examples and exit codes under the options, starting with a blank line. */
  after: string;
}

/** A command's one argument: its name in the usage line and what it is. */
interface ArgumentHelp {
  argument: { name: string; description: string };
}

/** `--help` and the usage errors: commander's words, the program's and each command's. */
export interface HelpTexts {
  /** Commander's headings, by their English text. */
  headings: Record<'Usage:' | 'Arguments:' | 'Options:' | 'Global Options:' | 'Commands:', string>;
  /** The usage line's placeholders, by their English text. */
  placeholders: Record<'[options]' | '[command]', string>;
  helpOption: string;
  helpCommand: { name: string; description: string };
  /** An option's default, after its description. */
  byDefault(p: { value: string }): string;
  program: Omit<
    CommandHelp<'version' | 'config' | 'settingsFile' | 'json' | 'quiet' | 'sandbox'>,
    'after'
  >;
  command: {
    validate: CommandHelp<'report'> & ArgumentHelp;
    template: CommandHelp & ArgumentHelp;
    run: CommandHelp<'inbox' | 'followTimeout' | 'recover' | 'logTimes' | 'dryRun'> & {
      wait(p: { duration: string }): string;
    };
    status: CommandHelp<'approvals' | 'since'> & ArgumentHelp;
    watch: CommandHelp<'inbox'>;
    approve: CommandHelp<
      'newBatch' | 'repeats' | 'rows' | 'except' | 'identical' | 'corrects' | 'batch' | 'by'
    > &
      ArgumentHelp;
    reject: CommandHelp<'reason' | 'batch' | 'by'> & ArgumentHelp;
    retry: CommandHelp<'by' | 'batch'> & ArgumentHelp;
    reconcile: CommandHelp<'days'>;
    doctor: CommandHelp;
    sandbox: CommandHelp<
      | 'host'
      | 'port'
      | 'settleDelay'
      | 'balance'
      | 'seed'
      | 'latency'
      | 'errorRate'
      | 'errorAfterCommitRate'
      | 'rateLimitRate'
      | 'retryAfter'
      | 'hangRate'
      | 'dropRate'
      | 'dedupe'
    >;
    balance: CommandHelp;
    get: CommandHelp<'id' | 'orderId'>;
    cashin: CommandHelp<
      | 'value'
      | 'payerName'
      | 'payerDocument'
      | 'payerEmail'
      | 'payerPhone'
      | 'productName'
      | 'productDescription'
      | 'orderId'
      | 'postbackUrl'
      | 'qrOut'
    >;
    demo: CommandHelp;
    journal: Pick<CommandHelp, 'description' | 'after'> & {
      copy: CommandHelp<'to'>;
      compact: CommandHelp<'before'>;
    };
  };
  /** A value the parser refused, by what was expected. */
  expected: {
    count: string;
    batch: string;
    lines: string;
    reason: string;
    days(p: { value: string }): string;
    day(p: { value: string }): string;
    pastDay(p: { value: string; today: string }): string;
  };
  /** A command line that cannot be taken: one line, then where to read more. */
  usage: {
    sayWhichCommand: string;
    sayWhichTransaction: string;
    notADuration(p: { flag: string; text: string }): string;
    seeHelp(p: { help: string }): string;
    didYouMean(p: { suggestion: string }): string;
    unknownCommand(p: { name: string }): string;
    unknownOption(p: { option: string }): string;
    missingArgument(p: { name: string }): string;
    optionMissingArgument(p: { option: string }): string;
    missingMandatoryOptionValue(p: { option: string }): string;
    excessArguments(p: { expected: number; got: number }): string;
    invalidArgument(p: { option: string; value: string; why: string }): string;
    conflictingOption(p: { option: string; other: string }): string;
  };
}

export interface Catalog {
  /** What the reading of a file says of it and its rows. */
  said: SaidTexts;
  help: HelpTexts;
  /** Headings of a result file (excel dialect) and of a validation report. */
  heading: Record<Heading, string>;
  /** A row's state, as its status cell and the summaries say it. */
  state: Record<StatusWord, string>;
  /** A file's outcome in a run's summary: its state, or the sentence that says it in English. */
  outcome(p: { state: FileState; sentence: string }): string;
  /** Marks what was made against the embedded sandbox. */
  sandboxMoved: string;
  /** A run's first line when it sent to the embedded sandbox. */
  sandboxRun: string;
  /** A run's only line when no file arrived and no batch is open. */
  inboxEmpty: string;
  /** `payouts validate`'s first line. */
  validated(p: {
    file: string;
    rows: number;
    valid: number;
    invalid: number;
    skipped: number;
    total: string;
  }): string;
  /** How `validate` read the file: its encoding, delimiter and where orderIds come from. */
  readAs(p: { encoding: string; delimiter: string; orderIdColumn: string | null }): string;
  /** Rows and cents of one state in a summary: `2 paid (R$ 40,00)`. */
  rowsIn(p: { count: number; state: string; amount: string | null }): string;
  /** Payouts that did not pay and were sent again (`retried`): attempts, never money. */
  attemptsRetried(p: { count: number }): string;
  noRows: string;
  /** A file's line in a run's summary. */
  /** `batchId`: given when another file of its name was beside it, to tell the two apart. */
  fileSummary(p: {
    file: string;
    batchId: number | null;
    outcome: string;
    totals: string;
    total: string;
  }): string;
  resultAt(p: { path: string }): string;
  /** `validate`'s lists: a row's problem, by line and column (the message itself is English). */
  /** `column` null: the file has no column for it, and the message names what is missing. */
  atLineColumn(p: { line: number; column: string | null; message: string }): string;
  invalidRowsTitle: string;
  warningsTitle: string;
  /** More than the list shows; `report`: whether --report was given to hold them all. */
  andMore(p: { count: number; report: boolean }): string;
  fileHeld(p: { message: string }): string;
  wouldHold(p: { note: string }): string;
  heldByRulesTitle(p: { journal: string }): string;
  /** Weighed against the view of the journal the service writes for the group, written `at`. */
  weighedAgainstView(p: { at: number; timeZone: string }): string;
  /** The journal is the service's alone, and it has written no view yet: nothing weighed. */
  notWeighed(p: { journal: string }): string;
  heldRow(p: { line: number; rule: string; message: string }): string;
  andMoreHeld(p: { count: number; hintFlags: string }): string;
  skipped(p: { lines: { line: number; reason: string }[] }): string;
  /** `validate`'s last word on a file it cannot read. */
  nothingPayable: string;
  /** Rows whose e-mail or phone came from their Pix key or a setting. */
  contactsFilled(p: {
    contact: 'email' | 'phone';
    fromKey: number;
    fromSetting: number;
    setting: string;
    value: string;
  }): string;
  readByHeadings(p: { columns: { heading: string; as: string }[] }): string;
  columnsNotUsed(p: { headings: string[] }): string;
  /** The column read as each row's reference (docs/who-is-paid.md, "A reference tells payments apart"). */
  readsReference(p: { column: string }): string;
  reportAt(p: { path: string }): string;
  /** `payouts approve FILE --new-batch`: the repeats it lists before it releases, and what it did. */
  release: {
    repeatsTitle(p: { count: number }): string;
    repeat(p: {
      line: number;
      name: string;
      amount: string;
      file: string;
      fileLine: number;
      at: number | null;
      state: string;
    }): string;
    released(p: {
      file: string;
      batchId: number;
      count: number;
      amount: string;
      by: string;
    }): string;
    repeatsStayHeld(p: { count: number }): string;
    repeatsReleased(p: { count: number }): string;
    repeatsDiffer(p: { given: number; count: number }): string;
    rowsNotHeld(p: { notHeld: number[] }): string;
    /** `--corrects N` named a batch the file neither shares a name with nor repeats. */
    notACopy(p: {
      batchId: number;
      batchFile: string;
      file: string;
      candidates: { batchId: number; file: string }[];
    }): string;
    /** Several files of one name wait for an answer, and the command did not say which. */
    whichBatch(p: {
      verb: string;
      file: string;
      batches: { batchId: number; at: number }[];
      hintFlags: string;
    }): string;
    /** Rows of a file an answer left held, each with why: the count, then a line each. */
    stayHeld(p: { count: number }): string;
    heldRow(p: { line: number; name: string; amount: string; message: string }): string;
    /** `payouts retry`: the payouts sent again that another file's payout holds. */
    retryHeld(p: { count: number }): string;
    /** `approve` or `reject` of a file a person approved already: who, when, its rows now. */
    alreadyApproved(p: {
      verb: string;
      file: string;
      batchId: number;
      by: string;
      at: number;
      totals: string;
    }): string;
    /** An answer that freed nothing, or lines picked by hand: the file still waits for approval. */
    stillAwaiting(p: { file: string; hintFlags: string }): string;
  };
  /** The report beside a file in awaiting-approval/ (`requireApproval`). */
  approval: {
    sandbox: string;
    waiting(p: { file: string; batchId: number }): string;
    onceApproved(p: { count: number; amount: string }): string;
    notSent(p: { invalid: number; held: number; covered: number }): string;
    heldByRule(p: { rows: number; amount: string; example: string | null }): string;
    atLine(p: { line: number; column: string | null; message: string }): string;
    more: string;
    /** `inFolder`: its name in awaiting-approval/, which a person moves; `file`, as commands name it. */
    toApprove(p: { file: string; inFolder: string; hintFlags: string }): string;
    /** Beside rows a person's answer may free: that answer approves the file too. */
    answerApproves(p: { file: string; hintFlags: string }): string;
    toReject(p: { file: string; hintFlags: string }): string;
    payeesTitle: string;
    /** A payee, documents and keys masked; `state` null when it is still to be sent. */
    payee(p: {
      line: number;
      name: string;
      document: string;
      key: string;
      amount: string;
      state: string | null;
      message: string | null;
    }): string;
  };
  /** A result file's approvedBy cell: each approver with when, then the code they approved. */
  approvedByCell(p: {
    approvals: readonly { by: string; at: string }[];
    code: string | null;
  }): string;
  /** An approver the journal cannot name: whoever moved the file into approved/ by hand. */
  movedIntoApproved: string;
  /** validate: a PostgreSQL journal that cannot be reached, the file not weighed against it. */
  journalUnreachable(p: { journal: string; cause: string }): string;
}

export const CATALOGS: Readonly<Record<Language, Catalog>> = { en, 'pt-BR': ptBR };
