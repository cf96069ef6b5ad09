/**
 * Runs `payouts` the way a person or cron would: in this process through main(argv, io) by
 * default (a command costs what it does, not a node start of half a second), or as a
 * child of the built bin/ where a test needs a process of its own: signals, crashes,
 * another user, a terminal, or bin/ itself.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { TextOutput } from '../../src/runtime/io.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';

export const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The parent's environment without any PAYOUTS_* variable, plus `env`. */
export function cleanEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PAYOUTS_')),
  );
  return { ...base, NO_COLOR: '1', ...env };
}

/** A stream that keeps what is written, read as UTF-8 once the command is done. */
function captured(): TextOutput & { text(): string } {
  const chunks: Buffer[] = [];
  return {
    write: (chunk) => chunks.push(Buffer.from(chunk)),
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

/**
 * Runs a command line in this process, with the environment of cleanEnv(env) and its
 * output captured; as another user (only root may), in a child, since a process cannot
 * change its user for one command.
 */
export async function runCli(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    /** Run as this user (the service user of a test that needs one; only root may). */
    user?: { uid: number; gid: number };
    /** The command's clock, which the test moves (in this process only). */
    clock?: Clock;
    /** Run in this working directory, in a child (a worker's own cannot change). */
    cwd?: string;
  } = {},
): Promise<CliResult> {
  if (options.user || options.cwd !== undefined) return runBin(args, options);
  const stdout = captured();
  const stderr = captured();
  const code = await main(args, {
    stdout,
    stderr,
    env: cleanEnv(options.env),
    clock: options.clock ?? systemClock,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** How long a command run as a child may take before the test ends it. */
const RUN_BOUND_MS = 20_000;

/** Runs the built bin/payouts.js as a child process, with the environment of cleanEnv(env). */
function runBin(
  args: readonly string[],
  options: { env?: Record<string, string>; user?: { uid: number; gid: number }; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: cleanEnv(options.env),
        timeout: RUN_BOUND_MS,
        encoding: 'utf8',
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...options.user,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        // A process that never started (EACCES, ENOENT) says why, or a test sees a bare 1.
        const unstarted = typeof error?.code === 'string' ? `${error.message}\n` : '';
        // Killed at this bound (a machine too busy): said, or a test sees a bare 1.
        const killed = error?.killed ? `(ended by the test after ${RUN_BOUND_MS} ms)\n` : '';
        resolve({ code, stdout, stderr: unstarted + killed + stderr });
      },
    );
  });
}

/** Starts a long-running command and waits (bounded) for a stdout line matching `ready`. */
export async function startCli(
  args: readonly string[],
  ready: RegExp,
  options: { env?: Record<string, string> } = {},
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${ready} within 15s; stderr: ${stderr}`)),
      15_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const found = stdout.match(ready);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${ready}; stderr: ${stderr}`));
    });
  });
  return { child, match, output: () => stdout + stderr };
}

/** Sends `signal` to a child we started and waits for its exit code. */
export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  // Already gone (an exit code, or killed by a signal): waiting for 'exit' would hang.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill(signal);
  });
}

/**
 * Runs the CLI on a real pseudo-terminal (`script`, from util-linux), as a person at a
 * terminal does: stdout and stderr both reach it, and its output is what they would see.
 */
export function runCliOnTerminal(
  args: readonly string[],
  options: { env?: Record<string, string> } = {},
): Promise<{ code: number; output: string }> {
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['--quiet', '--return', '--command', command, '/dev/null'],
      { env: cleanEnv(options.env), timeout: 60_000 },
      (error, output) => resolve({ code: error ? Number(error.code ?? 1) : 0, output }),
    );
  });
}
