/**
 * Builds the command tree, runs it, and turns every error into one clear line and an
 * exit code. bin/payouts.js, the only caller, sets the process's exit code from it.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/load.js';
import { GatewayError } from '../gateway/errors.js';
import { explainJournalFailure } from '../journal/failures.js';
import { balanceCommand } from './commands/balance.js';
import { cashInCommand } from './commands/cashin.js';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { getCommand } from './commands/get.js';
import { approveCommand, rejectCommand } from './commands/approval.js';
import { reconcileCommand } from './commands/reconcile.js';
import { retryCommand } from './commands/retry.js';
import { watchCommand } from './commands/watch.js';
import { statusCommand } from './commands/status.js';
import { templateCommand } from './commands/template.js';
import { runCommand } from './commands/run.js';
import { sandboxCommand } from './commands/sandbox.js';
import { validateCommand } from './commands/validate.js';
import { ExitError, USAGE_EXIT_CODE, usageError } from './exit-error.js';

/** Commander's errors for a command line it cannot take: a usage error, not a failure. */
const USAGE_ERRORS = new Set([
  'commander.unknownCommand',
  'commander.unknownOption',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.excessArguments',
  'commander.invalidArgument',
  'commander.conflictingOption',
]);

/** The package's version: src/cli and dist/cli are both two folders below it. */
function version(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

function buildProgram(): Command {
  const program = new Command('payouts')
    .description('Batch Pix payouts from accounting CSV exports, each paid exactly once.')
    .version(version(), '-V, --version', 'the version of payouts')
    .option('--config <file>', 'JSON file of config keys, over config/default.json')
    .option('--json', 'machine-readable output on stdout')
    .option('--quiet', 'no remarks on stderr, only results')
    .option(
      '--sandbox',
      'run against the embedded sandbox on purpose, where no real money moves (as "gateway": "sandbox")',
    )
    // One line and where to read more, never the whole help: the error stays in sight.
    .showHelpAfterError('(see payouts --help)')
    .exitOverride();
  for (const command of [
    validateCommand(),
    templateCommand(),
    runCommand(),
    statusCommand(),
    watchCommand(),
    approveCommand(),
    rejectCommand(),
    retryCommand(),
    reconcileCommand(),
    doctorCommand(),
    sandboxCommand(),
    balanceCommand(),
    getCommand(),
    cashInCommand(),
    demoCommand(),
  ]) {
    // Each command's help lists --config, --json and --quiet too: its examples use them.
    program.addCommand(
      command
        .exitOverride()
        .showHelpAfterError(`(see payouts ${command.name()} --help)`)
        .configureHelp({ showGlobalOptions: true }),
    );
  }
  return program;
}

/** What the person at the terminal should read, and do, for a gateway failure. */
function explainGatewayError(error: GatewayError): string {
  switch (error.kind) {
    case 'auth':
      return `the gateway refused our credentials (${error.message}). Check the token (PAYOUTS_TOKEN) and authScheme.`;
    case 'unavailable':
      return `could not reach the gateway (${error.message}). Check baseUrl and the network, then try again.`;
    case 'wrong-endpoint':
      return `the address answered, but not as the gateway does (${error.message} for ${error.request ?? error.operation}). Check baseUrl.`;
    case 'rate-limited': {
      const wait =
        error.retryAfterMs === undefined
          ? ''
          : ` Try again in ${Math.ceil(error.retryAfterMs / 1000)}s.`;
      return `the gateway is limiting our requests (${error.message}).${wait}`;
    }
    case 'ambiguous':
      return `no clear answer from the gateway (${error.message}). For a create, look it up (payouts get --order-id) before trying again.`;
    case 'not-found':
      return `not found at the gateway (${error.message})`;
    case 'rejected':
      return `the gateway refused the request (${error.message})`;
  }
}

/** The first part of `path` that exists and is not a folder: what blocks an ENOTDIR. */
function fileAlong(path: string): string {
  for (let at = path; ; at = dirname(at)) {
    let info: ReturnType<typeof statSync>;
    try {
      info = statSync(at, { throwIfNoEntry: false });
    } catch {
      continue; // under a file itself (ENOTDIR): look further up
    }
    if (info && !info.isDirectory()) return at;
    if (dirname(at) === at) return path;
  }
}

/**
 * A system error (a folder, a file, a port) as a sentence that names what and says
 * what to do; undefined for anything else.
 */
function explainSystemError(error: unknown): string | undefined {
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string') return undefined;
  if (code.startsWith('SQLITE_')) {
    return `the journal failed (${code}: ${(error as Error).message}): check the home folder's disk and journal.db, then run again`;
  }
  if (!/^E[A-Z0-9]+$/.test(code)) return undefined;
  const what = path ?? 'a file';
  switch (code) {
    case 'ENOTDIR':
      return `${fileAlong(what)} is a file, not a folder, so ${what} cannot be made or used: check home (PAYOUTS_HOME) and --inbox`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${what} (${code}, ${syscall ?? 'access'}): the user running payouts needs read and write access to the home folder and everything in it`;
    case 'ENOSPC':
      return `the disk is full (${code}, writing ${what}): free some space, then run again`;
    case 'EROFS':
      return `${what} is on a read-only file system (${code}): the home folder must be writable`;
    case 'EISDIR':
      return `${what} is a folder where a file was expected (${code})`;
    case 'ENOENT':
      return `${what} does not exist (${code}, ${syscall ?? 'access'}): check home (PAYOUTS_HOME) and the paths given`;
    default:
      return `${syscall ?? 'a system call'}${path ? ` on ${path}` : ''} failed (${code}): ${(error as Error).message}`;
  }
}

/** Whether the command line names no command: only the options every command takes. */
function namesNoCommand(argv: readonly string[]): boolean {
  const globals = argv.filter((arg, at) => arg.startsWith('-') || argv[at - 1] === '--config');
  return (
    globals.length === argv.length && !argv.some((arg) => /^(-h|--help|-V|--version)$/.test(arg))
  );
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    // The whole help would push the mistake out of sight: one line, as for any usage error.
    if (namesNoCommand(argv)) {
      throw usageError('', 'payouts: say which command, e.g. payouts validate FILE or payouts run');
    }
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    // Commander printed it (and a suggestion for a near-miss command or option).
    if (error instanceof CommanderError) {
      return USAGE_ERRORS.has(error.code) ? USAGE_EXIT_CODE : error.exitCode;
    }
    if (error instanceof ExitError) {
      if (error.message) process.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof GatewayError) {
      process.stderr.write(`payouts: ${explainGatewayError(error)}\n`);
      return 1;
    }
    // A journal failing mid-command (its disk full, its file damaged): what to do.
    const journal = explainJournalFailure(error, '(journal.db in the home folder)', 'maybe');
    if (journal) {
      process.stderr.write(`payouts: ${journal}\n`);
      return 1;
    }
    const explained = explainSystemError(error);
    if (explained !== undefined) {
      process.stderr.write(`payouts: ${explained}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`payouts: unexpected error: ${message}\n`);
    return 1;
  }
}
