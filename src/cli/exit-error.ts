/**
 * Commands end by throwing, and this is where every error becomes what the person at the
 * terminal reads and the exit code cron sees: the one mapping, used by main().
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CommanderError } from 'commander';
import { EXIT_CODES, PayoutsError } from '../errors.js';
import { GatewayError } from '../gateway/errors.js';
import { explainJournalFailure, saidOfJournalError } from '../journal/failures.js';
import { maskPersonalData } from '../runtime/mask.js';
import type { Catalog, HelpTexts } from '../messages/catalog.js';
import { en } from '../messages/en.js';
import { say } from '../messages/say.js';

/**
 * Thrown by a command to end with a code: its verdict (2, 3) or its failure with the
 * line to say. The entry point prints the message, if any, and exits with the code.
 */
export class ExitError extends PayoutsError {
  override readonly name = 'ExitError';
  constructor(exitCode: number, message = '') {
    super('command', message, { exitCode });
  }
}

/**
 * A command line that cannot be taken, found by the command rather than by the parser:
 * one line and where to read more, as the parser's own usage errors say it.
 */
export function usageError(
  command: string,
  message: string,
  usage: HelpTexts['usage'] = en.help.usage,
): ExitError {
  const help = command === '' ? 'payouts --help' : `payouts ${command} --help`;
  return new ExitError(EXIT_CODES.usage, `${message} ${usage.seeHelp({ help })}`);
}

/** How a command ends: its exit code, and what stderr says ('' for nothing). */
export interface Ending {
  exitCode: number;
  stderr: string;
}

/**
 * The ending of a command that threw `error`: ours say what and what to do; a system
 * failure is named with what to check; anything else is a bug, said as one.
 * `command`: the command the line named ('' for none), whose help a usage error names;
 * `words`: the reader's language, for a usage error and the journal's own word.
 */
export function endingOf(error: unknown, command = '', words: Catalog = en): Ending {
  const { usage } = words.help;
  if (error instanceof CommanderError) {
    const said = usageSaid(error, usage);
    if (said === undefined) return { exitCode: error.exitCode, stderr: '' };
    const who = command === '' ? 'payouts' : `payouts ${command}`;
    return {
      exitCode: EXIT_CODES.usage,
      stderr: usageError(command, `${who}: ${said}`, usage).message,
    };
  }
  // A journal failing mid-command (its disk full, its file damaged): what to do.
  const journalFailure = explainJournalFailure(error, 'maybe');
  if (journalFailure !== undefined)
    return { exitCode: EXIT_CODES.failed, stderr: `payouts: ${journalFailure}` };
  // The journal's own word (a newer schema, a refusal): said from its kind and facts.
  const journalSaid = saidOfJournalError(error);
  if (journalSaid !== undefined)
    return { exitCode: EXIT_CODES.failed, stderr: `payouts: ${say(words, journalSaid)}` };
  if (error instanceof PayoutsError) return { exitCode: error.exitCode, stderr: sayError(error) };
  const known = explainSystemError(error);
  if (known !== undefined) return { exitCode: EXIT_CODES.failed, stderr: `payouts: ${known}` };
  return {
    exitCode: EXIT_CODES.internal,
    stderr: maskPersonalData(sayInternalError(error)),
  };
}

/**
 * Commander's error for a command line it cannot take, in one line and the reader's words
 * (the near miss it suggests included); undefined for any other of its errors (--help).
 */
function usageSaid(error: CommanderError, usage: HelpTexts['usage']): string | undefined {
  const { message } = error;
  const [first = '', second = ''] = [...message.matchAll(/'([^']*)'/g)].map(([, it]) => it);
  const suggestion = /\n\(Did you mean (?:one of )?(.*)\)$/.exec(message)?.[1];
  const nearMiss = suggestion === undefined ? '' : usage.didYouMean({ suggestion });
  switch (error.code) {
    case 'commander.unknownCommand':
      return usage.unknownCommand({ name: first }) + nearMiss;
    case 'commander.unknownOption':
      return usage.unknownOption({ option: first }) + nearMiss;
    case 'commander.missingArgument':
      return usage.missingArgument({ name: first });
    case 'commander.optionMissingArgument':
      return usage.optionMissingArgument({ option: first });
    case 'commander.missingMandatoryOptionValue':
      return usage.missingMandatoryOptionValue({ option: first });
    case 'commander.conflictingOption':
      return usage.conflictingOption({ option: first, other: second });
    case 'commander.excessArguments': {
      const [, expected = '0', got = '0'] = /Expected (\d+) .* got (\d+)/.exec(message) ?? [];
      return usage.excessArguments({ expected: Number(expected), got: Number(got) });
    }
    case 'commander.invalidArgument': {
      // The value may hold quotes; the reason is our parser's, in the reader's words already.
      const [, value = '', why = ''] = /argument '(.*)' is invalid\. (.*)$/s.exec(message) ?? [];
      return usage.invalidArgument({ option: first, value, why });
    }
    default:
      return undefined;
  }
}

function sayError(error: PayoutsError): string {
  // A command's and the config's messages are whole lines already ("payouts run: ...").
  if (error.code === 'command' || error.code === 'config') return error.message;
  if (error instanceof GatewayError) return `payouts: ${explainGatewayError(error)}`;
  return `payouts: ${error.message}`;
}

/**
 * A bug: one line that says so, then its stack, which is what a fix needs (a person
 * reading a log sees the line first).
 */
function sayInternalError(error: unknown): string {
  // One line whatever the message, so that the first line of stderr says it all.
  const message = (error instanceof Error ? error.message : String(error)).replace(
    /\s*\n\s*/g,
    ' ',
  );
  const frames = error instanceof Error ? (error.stack ?? '').split('\n').filter(isFrame) : [];
  const stack = frames.length > 0 ? 'the stack below and ' : '';
  const line = `payouts: internal error (exit ${EXIT_CODES.internal}), a bug in payouts and not in the files, the settings or the gateway: ${message}. Please report it with ${stack}the command that was run.`;
  return [line, ...frames].join('\n');
}

function isFrame(line: string): boolean {
  return /^\s+at /.test(line);
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
