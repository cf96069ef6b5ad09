/**
 * Builds the command tree, runs it, and turns every error into one clear line and an
 * exit code (endingOf). bin/payouts.js sets the process's exit code from it; tests run
 * it in their own process with an io of their own.
 */
import { readFileSync } from 'node:fs';
import { Command, type OutputConfiguration } from 'commander';
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
import { endingOf, usageError } from './exit-error.js';
import type { CliIo } from '../runtime/io.js';

/** The package's version: src/cli and dist/cli are both two folders below it. */
function version(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

function buildProgram(io: CliIo): Command {
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
    .configureOutput(outputTo(io))
    .exitOverride();
  for (const command of [
    validateCommand(io),
    templateCommand(io),
    runCommand(io),
    statusCommand(io),
    watchCommand(io),
    approveCommand(io),
    rejectCommand(io),
    retryCommand(io),
    reconcileCommand(io),
    doctorCommand(io),
    sandboxCommand(io),
    balanceCommand(io),
    getCommand(io),
    cashInCommand(io),
    demoCommand(io),
  ]) {
    // Each command's help lists --config, --json and --quiet too: its examples use them.
    program.addCommand(
      command
        .configureOutput(outputTo(io))
        .exitOverride()
        .showHelpAfterError(`(see payouts ${command.name()} --help)`)
        .configureHelp({ showGlobalOptions: true }),
    );
  }
  return program;
}

/** Commander's help and errors on the command's own streams, as wide as a terminal or 80. */
function outputTo(io: CliIo): OutputConfiguration {
  return {
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) ?? 80,
    getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) ?? 80,
  };
}

/** Whether the command line names no command: only the options every command takes. */
function namesNoCommand(argv: readonly string[]): boolean {
  const globals = argv.filter((arg, at) => arg.startsWith('-') || argv[at - 1] === '--config');
  return (
    globals.length === argv.length && !argv.some((arg) => /^(-h|--help|-V|--version)$/.test(arg))
  );
}

/** Runs one command line; what it says goes to `io`, and what it ends with is returned. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    // The whole help would push the mistake out of sight: one line, as for any usage error.
    if (namesNoCommand(argv)) {
      throw usageError('', 'payouts: say which command, e.g. payouts validate FILE or payouts run');
    }
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    const { exitCode, stderr } = endingOf(error);
    if (stderr) io.stderr.write(`${stderr}\n`);
    return exitCode;
  }
}
