/**
 * Builds the command tree, runs it, and turns every error into one clear line and an
 * exit code (endingOf). bin/payouts.js sets the process's exit code from it; tests run
 * it in their own process with an io of their own.
 */
import { readFileSync } from 'node:fs';
import { Command, type OutputConfiguration } from 'commander';
import { endingOf, usageError } from './exit-error.js';
import { withLogTimes, type CliIo } from '../runtime/io.js';

/** The package's version: src/cli and dist/cli are both two folders below it. */
function version(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

type CommandBuilder = (io: CliIo) => Command;

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

function buildProgram(io: CliIo, builders: readonly CommandBuilder[]): Command {
  const program = new Command('payouts')
    .description('Batch Pix payouts from accounting CSV exports, each paid exactly once.')
    .version(version(), '-v, --version', 'the version of payouts')
    .option('--config <file>', 'JSON file of config keys, over config/default.json')
    // Not `--env-file`: Node 20 reads that option even after the script's name, and
    // exits 9 before payouts runs when the file is missing.
    .option(
      '--settings-file <file>',
      'file of PAYOUTS_* settings, NAME=value a line, read as written (also PAYOUTS_SETTINGS_FILE); the environment wins over it',
    )
    .option('--json', 'machine-readable output on stdout')
    .option('--quiet', 'no remarks on stderr, only results')
    .option(
      '--sandbox',
      'run against the embedded sandbox on purpose, where no real money moves (as "gateway": "sandbox")',
    )
    .configureOutput(outputTo(io))
    .exitOverride();
  for (const command of builders.map((build) => build(io))) {
    // Each command's help lists --config, --json and --quiet too: its examples use them.
    program.addCommand(
      command
        .configureOutput(outputTo(io))
        .exitOverride()
        .configureHelp({ showGlobalOptions: true }),
    );
  }
  return program;
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
  try {
    // The whole help would push the mistake out of sight: one line, as for any usage error.
    if (namesNoCommand(argv)) {
      throw usageError('', 'payouts: say which command, e.g. payouts validate FILE or payouts run');
    }
    await buildProgram(io, await buildersFor(argv)).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    const { exitCode, stderr } = endingOf(error, commandNamed(argv));
    if (stderr) io.stderr.write(`${stderr}\n`);
    return exitCode;
  }
}
