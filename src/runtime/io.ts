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

/**
 * The streams of a command whose lines a log keeps (cron's run.log): each line starts with
 * when it was written, `2026-11-27T09:05:01-03:00 `, in the server's own time zone, the
 * one cron reads its schedule in. `stdout: false` leaves it as it is (`--json`, for programs).
 */
export function withLogTimes(io: CliIo, { stdout }: { stdout: boolean }): CliIo {
  const now = () => io.clock.now();
  return {
    stdout: stdout ? stampedLines(io.stdout, now) : io.stdout,
    stderr: stampedLines(io.stderr, now),
    env: io.env,
    clock: io.clock,
  };
}

function stampedLines(output: TextOutput, now: () => number): TextOutput {
  let atLineStart = true;
  const decoder = new TextDecoder();
  return {
    get isTTY() {
      return output.isTTY;
    },
    get columns() {
      return output.columns;
    },
    write(chunk) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      let stamped = '';
      for (const piece of text.split(/(?<=\n)/)) {
        // A blank line stays blank: it only separates.
        if (atLineStart && piece !== '' && piece !== '\n') stamped += `${localIsoTime(now())} `;
        stamped += piece;
        if (piece !== '') atLineStart = piece.endsWith('\n');
      }
      return output.write(stamped);
    },
  };
}

/** `2026-11-27T09:05:01-03:00`: an instant in this process's time zone, with its offset. */
export function localIsoTime(ms: number): string {
  const offset = -new Date(ms).getTimezoneOffset();
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
  const hours = String(Math.trunc(Math.abs(offset) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offset) % 60).padStart(2, '0');
  return `${local}${offset < 0 ? '-' : '+'}${hours}:${minutes}`;
}
