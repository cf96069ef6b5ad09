/**
 * What a command reads and writes outside its home folder: its two output streams, its
 * environment and its clock. The process's own for bin/payouts.js; a test passes its own
 * to run a command in its process and read what it said, with no environment of the
 * test's leaking in, on a clock it moves.
 */
import { systemClock, type Clock } from './clock.js';

/** Where text goes: process.stdout and process.stderr are two. */
export interface TextOutput {
  write(chunk: string | Uint8Array): unknown;
  /** A terminal: a person reads it as it comes (a progress bar, colours). */
  readonly isTTY?: boolean;
  /** A terminal's width, for help text. */
  readonly columns?: number;
}

export interface CliIo {
  readonly stdout: TextOutput;
  readonly stderr: TextOutput;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What time it is for the journal, the rules and the engine, and their waits. */
  readonly clock: Clock;
}

/** The process's streams and environment, as bin/payouts.js runs a command. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, clock: systemClock };
}
