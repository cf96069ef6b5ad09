/**
 * pino JSON lines on the command's stderr, with ISO times; pretty when it is a terminal. The token never appears,
 * and personal data is masked (src/runtime/mask.ts).
 */
import { pino, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { CliIo } from './io.js';
import { maskPersonalData } from './mask.js';

export type { Logger };

/** Levels from the most to the least said; `--quiet` keeps warn and above. */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** `level`, raised to warn with `quiet`: what nobody may miss is still said. */
export function logLevelOf(level: string, quiet: boolean): string {
  return quiet && LEVELS.indexOf(level) < LEVELS.indexOf('warn') ? 'warn' : level;
}

export function createLogger(level: string, io: Pick<CliIo, 'stderr' | 'env'>): Logger {
  const options = {
    level,
    // ISO 8601 in UTC (`"time":"2026-11-23T20:41:07.123Z"`), not epoch milliseconds: a log
    // line is read by people and shipped to log stores that read ISO.
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'token',
        '*.token',
        'authorization',
        '*.authorization',
        'headers.authorization',
        // Personal data, should an object carrying it ever be logged.
        'person',
        '*.person',
        'cpfCnpj',
        '*.cpfCnpj',
        'pixKey',
        '*.pixKey',
        'payerDocument',
        '*.payerDocument',
      ],
      censor: '[hidden]',
    },
    hooks: {
      // Messages are text written by us, but may quote a gateway's message or a cell.
      logMethod(this: Logger, args: unknown[], method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? maskPersonalData(arg) : arg)),
        );
      },
    },
  };
  if (io.stderr.isTTY) {
    const prettify = prettyFactory({
      colorize: !io.env['NO_COLOR'],
      // The machine's local time with its offset, as the operator reads a clock.
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l o',
    });
    // Each line written as it is logged, in order with what the command prints.
    return pino(options, { write: (line: string) => io.stderr.write(prettify(line)) });
  }
  return pino(options, { write: (line: string) => io.stderr.write(line) });
}
