/**
 * What every command starts from: the loaded config, a logger, output that honours
 * --json and --quiet, and a gateway (the real one, or the embedded sandbox).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { GatewayClient } from '../gateway/client.js';
import { loadConfig, type SourcedConfig } from '../config/load.js';
import { ENV_FILE_VARIABLE } from '../config/env-file.js';
import type { Config, ConfigKey } from '../config/schema.js';
import { createLogger, logLevelOf, type Logger } from '../runtime/logger.js';
import { languageOf, localeSource } from '../messages/language.js';
import { userNameOf, type Folders } from '../inbox/folders.js';
import { explainJournalFailure } from '../journal/failures.js';
import type { GatewayKind, Journal, JournalGateway, JournalLocation } from '../journal/journal.js';
import { journalAddress, journalState, openJournalReadOnly } from '../journal/open.js';
import { ExitError } from './exit-error.js';
import type { CliIo } from '../runtime/io.js';

export interface GlobalOptions {
  config?: string;
  /** The environment file, read as written (also `PAYOUTS_SETTINGS_FILE`). */
  settingsFile?: string;
  json?: boolean;
  quiet?: boolean;
  /** The embedded sandbox, asked for on purpose (as `"gateway": "sandbox"`). */
  sandbox?: boolean;
}

/**
 * The global flags a command printed as a hint needs to reach the same home and gateway
 * as the command that prints it (` --config "/etc/payouts.json"`), or ''.
 */
export function hintFlagsOf(options: GlobalOptions): string {
  return [
    options.settingsFile === undefined ? '' : ` --settings-file "${resolve(options.settingsFile)}"`,
    options.config === undefined ? '' : ` --config "${resolve(options.config)}"`,
    options.sandbox ? ' --sandbox' : '',
  ].join('');
}

/**
 * What a command does with payouts, which decides what it may start against:
 * - `payouts` moves or reports real payouts (run, watch, reconcile, status, approve,
 *   reject): without a baseUrl it refuses to start unless the sandbox is asked for;
 * - `trying-out` (balance, get, cashin, demo, sandbox, doctor): the embedded sandbox is its default;
 * - `offline` talks to no gateway, and reads no token (validate, template): an accountant
 *   checks a file with the settings, not with the token kept apart (`tokenFile`).
 * The default is the safe one, so a command that forgets to say is refused, never sandboxed.
 */
export type CommandUse = 'payouts' | 'trying-out' | 'offline';

export interface Output {
  readonly json: boolean;
  readonly quiet: boolean;
  /** A result line for people; silent with --json. */
  line(text: string): void;
  /** The machine-readable result, with --json only. */
  data(value: unknown): void;
  /** A remark on stderr; silent with --quiet. */
  note(text: string): void;
  /** On stderr even with --quiet: what nobody may miss (no real money moves, say). */
  warn(text: string): void;
}

export interface Context {
  config: Config;
  /** Where each value came from: `config/default.json`, `--config FILE`, `PAYOUTS_HOME`. */
  sources: Readonly<Record<ConfigKey, string>>;
  logger: Logger;
  out: Output;
  /** The streams and environment the command was given. */
  io: CliIo;
  /** The environment file read, when one was named. */
  envFile?: SourcedConfig['envFile'];
}

export function openContext(
  io: CliIo,
  options: GlobalOptions,
  use: CommandUse = 'payouts',
): Context {
  const envFile = options.settingsFile ?? (io.env[ENV_FILE_VARIABLE] || undefined);
  const {
    config: loaded,
    sources,
    envFile: envFileRead,
  } = loadConfig({
    configFile: options.config,
    envFile,
    env: io.env,
    readsToken: use !== 'offline',
  });
  if (options.sandbox && loaded.baseUrl !== null) {
    throw new ExitError(
      1,
      'payouts: --sandbox asks for the embedded sandbox, but baseUrl is set (PAYOUTS_BASE_URL or "baseUrl" in the --config file): drop one of the two. Nothing was done.',
    );
  }
  const config: Config = {
    ...loaded,
    ...(options.sandbox ? { gateway: 'sandbox' as const } : {}),
    // Resolved once, here: what every command writes for people speaks one language.
    language: languageOf(loaded.language, io.env),
  };
  if (use === 'payouts' && config.baseUrl === null && config.gateway !== 'sandbox') {
    throw new ExitError(1, NO_GATEWAY);
  }
  const json = options.json ?? false;
  const quiet = options.quiet ?? false;
  const out: Output = {
    json,
    quiet,
    line: (text) => {
      if (!json) io.stdout.write(`${text}\n`);
    },
    data: (value) => {
      if (json) io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
    note: (text) => {
      if (!quiet) io.stderr.write(`${text}\n`);
    },
    warn: (text) => io.stderr.write(`${text}\n`),
  };
  // --sandbox is a command-line choice: it names itself as the source of `gateway`; a
  // language left to the locale names the variable that chose it.
  const sourced = {
    ...sources,
    ...(options.sandbox ? { gateway: '--sandbox' } : {}),
    ...(loaded.language === null ? { language: localeSource(io.env) } : {}),
  };
  return {
    config,
    sources: sourced,
    logger: createLogger(logLevelOf(config.logLevel, quiet), io),
    out,
    io,
    ...(envFileRead === undefined ? {} : { envFile: envFileRead }),
  };
}

/** Said before anything is touched: a cron job that lost its environment file lands here. */
const NO_GATEWAY =
  'payouts: no gateway is configured: baseUrl and token are missing (set PAYOUTS_BASE_URL and PAYOUTS_TOKEN, or "baseUrl" and "token" in the --config file; is the environment file loaded?). Nothing was done. ' +
  'To use the embedded sandbox on purpose, where no real money moves, add --sandbox or set "gateway": "sandbox" (PAYOUTS_GATEWAY=sandbox).';

export interface GatewaySession {
  client: GatewayClient;
  /** Where the client talks to; the embedded sandbox's own address when there is no baseUrl. */
  baseUrl: string;
  /** The embedded sandbox: it starts empty and forgets everything when the command ends. */
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The configured gateway, or with no baseUrl an embedded sandbox on loopback, said so
 * loudly. Given the home's journal, it first checks that the journal has only ever sent
 * to this kind of gateway (a cron job that lost its environment file must not "pay" a
 * real payroll into a sandbox).
 */
export async function openGateway(
  context: Context,
  journal?: JournalGateway,
): Promise<GatewaySession> {
  const { config } = context;
  if (journal) {
    const kind = config.baseUrl === null ? 'sandbox' : 'configured';
    const bound = await journal.bindGateway(kind);
    if (bound !== kind) throw new ExitError(1, mixedGateways(bound, config.home));
  }
  // Loaded here, not with the command: undici and the sandbox's modules are tens of MB
  // that an offline command (validate) never needs.
  const { createGatewayClient } = await import('../gateway/client.js');
  const clientOptions = {
    authScheme: config.authScheme,
    getTransactionMethod: config.getTransactionMethod,
    connectTimeoutMs: config.connectTimeout,
    requestTimeoutMs: config.requestTimeout,
    connections: config.concurrency,
  };
  if (config.baseUrl !== null && config.token !== null) {
    const client = createGatewayClient({
      ...clientOptions,
      baseUrl: config.baseUrl,
      token: config.token,
    });
    return { client, baseUrl: config.baseUrl, embedded: false, close: () => client.close() };
  }
  const { SANDBOX_DEFAULTS, startSandbox } = await import('../sandbox/server.js');
  const token = config.token ?? SANDBOX_DEFAULTS.token;
  const sandbox = await startSandbox({ token });
  // Nobody should mistake this for a real payment.
  context.out.warn(
    `SANDBOX: no real money moves (embedded sandbox at ${sandbox.url}; set baseUrl to use a real gateway)`,
  );
  const client = createGatewayClient({ ...clientOptions, baseUrl: sandbox.url, token });
  return {
    client,
    baseUrl: sandbox.url,
    embedded: true,
    close: async () => {
      await client.close();
      await sandbox.close();
    },
  };
}

/**
 * Why a command that looks up earlier payouts cannot find them in the embedded sandbox:
 * it is made empty for each command and forgotten when the command ends, so trying
 * again never helps.
 */
export const EMBEDDED_SANDBOX_FORGETS =
  'the embedded sandbox starts empty for each command and forgets everything when the command ends, so a payout made by another command is never in it, and trying again cannot help. To look up real payouts, set baseUrl and token (PAYOUTS_BASE_URL, PAYOUTS_TOKEN); to try it out, run `payouts sandbox` in another terminal and set PAYOUTS_BASE_URL to the address it prints';

function mixedGateways(bound: GatewayKind, home: string): string {
  return bound === 'configured'
    ? `no baseUrl is set, but the journal in ${home} sends to a real gateway: refusing to run it against the embedded sandbox, which would take its payouts as made. Set baseUrl (PAYOUTS_BASE_URL; is the environment file loaded?) and run again. Nothing was sent.`
    : `the journal in ${home} has only sent to the embedded sandbox, where no real money moves: its orderIds would count as paid at the real gateway. Use a new home folder for real payouts (home, or PAYOUTS_HOME). Nothing was sent.`;
}

/**
 * A journal read only (the home's, or its view), or exit 1 with a sentence naming it: a
 * damaged or unopenable journal is the operator's to look at, never an `unexpected error`.
 */
export async function openHomeJournal(
  location: JournalLocation,
  now: () => number,
): Promise<Journal> {
  try {
    return await openJournalReadOnly(location, now);
  } catch (error) {
    throw homeJournalFailure(error);
  }
}

/** What failed opening a journal, as exit 1 with a sentence naming it when it can be said. */
export function homeJournalFailure(error: unknown): unknown {
  const why = explainJournalFailure(error, 'nothing');
  return why === undefined ? error : new ExitError(1, `payouts: ${why}`);
}

/**
 * For a command that reads what earlier runs did: a mistyped home folder must not be
 * created empty and reported as having nothing to do.
 */
export async function requireJournal(verb: string, location: JournalLocation): Promise<void> {
  const absent =
    location.kind === 'sqlite'
      ? !existsSync(location.path)
      : (await journalState(location)) === 'absent';
  if (!absent) return;
  const which =
    location.kind === 'sqlite'
      ? 'nothing has run in this home folder yet (is home, or PAYOUTS_HOME, right?)'
      : 'nothing has run with this database yet (is journal, or PAYOUTS_JOURNAL, right?)';
  throw new ExitError(1, `payouts ${verb}: no journal at ${journalAddress(location)}: ${which}`);
}

/**
 * Why this user may not work in the home: it belongs to another user, who would find what
 * this command wrote to be someone else's (a run as root leaves root's folders). Undefined
 * when the home is not there yet (it is made this user's) or is this user's.
 */
export function homeOwnerProblem(verb: string, home: string): string | undefined {
  const owner = statSync(home, { throwIfNoEntry: false })?.uid;
  const runner = process.getuid?.();
  if (owner === undefined || runner === undefined || owner === runner) return undefined;
  const [ownerName, runnerName] = [userNameOf(owner), userNameOf(runner)];
  return `the home folder ${home} belongs to ${ownerName} (uid ${owner}), but this command runs as ${runnerName} (uid ${runner}): what it wrote would be ${runnerName}'s, and ${ownerName}'s next run would fail on it. Run it as ${ownerName}: runuser -u ${ownerName} -- payouts ${verb} … (or, for ${runnerName} to own the home, chown -R ${runnerName}: ${home}). Nothing was done.`;
}

/** For a command that writes in the home: refused when the home is another user's. */
export function requireOwnHome(verb: string, folders: Folders): void {
  const problem = homeOwnerProblem(verb, folders.home);
  if (problem !== undefined) throw new ExitError(1, `payouts ${verb}: ${problem}`);
}

/** An --inbox that is not there is a mistake, not an empty inbox. */
export function requireInbox(verb: string, inbox: string | undefined): void {
  if (inbox !== undefined && !statSync(inbox, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ExitError(
      1,
      `payouts ${verb}: --inbox ${resolve(inbox)} is not a folder: check the path`,
    );
  }
}
