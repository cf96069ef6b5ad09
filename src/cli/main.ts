/**
 * Builds the command tree, runs it, and turns every error into one clear line and an
 * exit code (endingOf). bin/payouts.js sets the process's exit code from it; tests run
 * it in their own process with an io of their own.
 */
import { readFileSync } from 'node:fs';
import { Command, Help, type HelpConfiguration, type OutputConfiguration } from 'commander';
import { endingOf, usageError } from './exit-error.js';
import { loadConfig } from '../config/load.js';
import { ENV_FILE_VARIABLE } from '../config/env-file.js';
import { CATALOGS, type Catalog, type HelpTexts } from '../messages/catalog.js';
import { languageOf, type Language } from '../messages/language.js';
import { withLogTimes, type CliIo } from '../runtime/io.js';

/** The package's version: src/cli and dist/cli are both two folders below it. */
function version(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

type CommandBuilder = (io: CliIo, help: HelpTexts) => Command;

/**
 * Every command, in the order its help lists them, each loaded when it is needed: a command
 * loads its own modules only (validate neither the sandbox, the HTTP client nor the log
 * prettifier), which is most of a process's memory before it reads a line.
 */
const COMMANDS: Record<string, () => Promise<CommandBuilder>> = {
  validate: async () => (await import('./commands/validate.js')).validateCommand,
  template: async () => (await import('./commands/template.js')).templateCommand,
  run: async () => (await import('./commands/run.js')).runCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  watch: async () => (await import('./commands/watch.js')).watchCommand,
  approve: async () => (await import('./commands/approval.js')).approveCommand,
  reject: async () => (await import('./commands/approval.js')).rejectCommand,
  retry: async () => (await import('./commands/retry.js')).retryCommand,
  reconcile: async () => (await import('./commands/reconcile.js')).reconcileCommand,
  doctor: async () => (await import('./commands/doctor.js')).doctorCommand,
  sandbox: async () => (await import('./commands/sandbox.js')).sandboxCommand,
  balance: async () => (await import('./commands/balance.js')).balanceCommand,
  get: async () => (await import('./commands/get.js')).getCommand,
  cashin: async () => (await import('./commands/cashin.js')).cashInCommand,
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  journal: async () => (await import('./commands/journal.js')).journalCommand,
};

/**
 * The command the line names, when it names one before any help flag; otherwise (the
 * program's help, `help`, a mistyped name) every command, for the help to list them and
 * a mistyped name to be answered with the nearest.
 */
async function buildersFor(argv: readonly string[]): Promise<CommandBuilder[]> {
  const at = commandAt(argv);
  const before = at < 0 ? argv : argv.slice(0, at);
  const named = argv[at];
  const load = named === undefined ? undefined : COMMANDS[named];
  if (load && !before.some((arg) => /^(-h|--help)$/.test(arg))) return [await load()];
  return Promise.all(Object.values(COMMANDS).map((loadOne) => loadOne()));
}

function buildProgram(io: CliIo, builders: readonly CommandBuilder[], help: HelpTexts): Command {
  const { program: words } = help;
  const program = new Command('payouts')
    .description(words.description)
    .version(version(), '-v, --version', words.options.version)
    .option('--config <file>', words.options.config)
    // Not `--env-file`: Node 20 reads that option even after the script's name, and
    // exits 9 before payouts runs when the file is missing.
    .option('--settings-file <file>', words.options.settingsFile)
    .option('--json', words.options.json)
    .option('--quiet', words.options.quiet)
    .option('--sandbox', words.options.sandbox)
    .helpOption('-h, --help', help.helpOption)
    .helpCommand(help.helpCommand.name, help.helpCommand.description)
    .configureHelp(helpIn(help))
    .configureOutput(outputTo(io))
    .exitOverride();
  // Each command's help lists --config, --json and --quiet too: its examples use them. A
  // command's own subcommands (journal copy) are said and end the same way.
  const settle = (command: Command): Command => {
    command
      .helpOption('-h, --help', help.helpOption)
      .configureOutput(outputTo(io))
      .exitOverride()
      .configureHelp({ ...helpIn(help), showGlobalOptions: true });
    // A command with subcommands lists `help [command]` too, in the reader's words.
    if (command.commands.length > 0) {
      command.helpCommand(help.helpCommand.name, help.helpCommand.description);
    }
    command.commands.forEach(settle);
    return command;
  };
  for (const command of builders.map((build) => build(io, help))) {
    program.addCommand(settle(command));
  }
  return program;
}

/** Commander's help with its headings, placeholders and defaults in the reader's words. */
function helpIn(help: HelpTexts): Partial<HelpConfiguration> {
  const placeholders = (usage: string) =>
    usage.replace(/\[options\]|\[command\]/g, (it) => help.placeholders[it as '[options]']);
  return {
    styleTitle: (title) => help.headings[title as keyof HelpTexts['headings']],
    commandUsage(this: Help, command) {
      return placeholders(Help.prototype.commandUsage.call(this, command));
    },
    subcommandTerm(this: Help, command) {
      return placeholders(Help.prototype.subcommandTerm.call(this, command));
    },
    optionDescription(this: Help, option) {
      return Help.prototype.optionDescription
        .call(this, option)
        .replace(/\(default: (.*)\)$/, (_, value: string) => help.byDefault({ value }));
    },
  };
}

/**
 * The language `--help`, usage errors and the journal's own word speak, known before the program is built: the
 * `language` setting (the --config file, the settings file, PAYOUTS_LANGUAGE), else the
 * locale, as every command decides it; settings that cannot be read leave it to the locale,
 * and the command says what is wrong with them.
 */
function catalogFor(argv: readonly string[], env: CliIo['env']): Catalog {
  const valueOf = (flag: string) => {
    const at = argv.indexOf(flag);
    return at < 0 ? undefined : argv[at + 1];
  };
  let setting: Language | null = null;
  try {
    setting = loadConfig({
      configFile: valueOf('--config'),
      envFile: valueOf('--settings-file') ?? (env[ENV_FILE_VARIABLE] || undefined),
      env,
      readsToken: false,
    }).config.language;
  } catch {
    // The command itself reads them again, and says why they cannot be read.
  }
  return CATALOGS[languageOf(setting, env)];
}

/**
 * Commander's help on the command's own streams, as wide as a terminal or 80; its errors
 * are said by endingOf, in one line.
 */
function outputTo(io: CliIo): OutputConfiguration {
  return {
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    outputError: () => undefined,
    getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) ?? 80,
    getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) ?? 80,
  };
}

/**
 * Where the command line names its command: the first word that is neither an option nor
 * the value of `--config` or `--settings-file` (the options every command takes that have a
 * value); -1: none.
 */
function commandAt(argv: readonly string[]): number {
  return argv.findIndex(
    (arg, at) =>
      !arg.startsWith('-') && !['--config', '--settings-file'].includes(argv[at - 1] ?? ''),
  );
}

/** Whether the command line names no command: only the options every command takes. */
function namesNoCommand(argv: readonly string[]): boolean {
  return commandAt(argv) < 0 && !argv.some((arg) => /^(-h|--help|-v|--version)$/.test(arg));
}

/** The command the line names, '' when it names none we have: whose help a usage error points to. */
function commandNamed(argv: readonly string[]): string {
  const named = argv[commandAt(argv)];
  return named !== undefined && named in COMMANDS ? named : '';
}

/** Runs one command line; what it says goes to `io`, and what it ends with is returned. */
export async function main(argv: readonly string[], given: CliIo): Promise<number> {
  // Every line, the last one (how the command ended) too.
  const io = argv.includes('--log-times')
    ? withLogTimes(given, { stdout: !argv.includes('--json') })
    : given;
  const words = catalogFor(argv, io.env);
  const { help } = words;
  try {
    // The whole help would push the mistake out of sight: one line, as for any usage error.
    if (namesNoCommand(argv)) {
      throw usageError('', `payouts: ${help.usage.sayWhichCommand}`, help.usage);
    }
    await buildProgram(io, await buildersFor(argv), help).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    const { exitCode, stderr } = endingOf(error, commandNamed(argv), words);
    if (stderr) io.stderr.write(`${stderr}\n`);
    return exitCode;
  }
}
