/**
 * pino JSON lines on stderr, with ISO times; pretty when stderr is a terminal. The token never appears,
 * and personal data is masked (src/runtime/mask.ts).
 */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { maskPersonalData } from './mask.js';

export type { Logger };

/** Levels from the most to the least said; `--quiet` keeps warn and above. */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** `level`, raised to warn with `quiet`: what nobody may miss is still said. */
export function logLevelOf(level: string, quiet: boolean): string {
  return quiet && LEVELS.indexOf(level) < LEVELS.indexOf('warn') ? 'warn' : level;
}

export function createLogger(level: string): Logger {
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
  if (process.stderr.isTTY) {
    return pino(
      options,
      pretty({
        destination: 2,
        colorize: !process.env['NO_COLOR'],
        sync: true,
        // The machine's local time with its offset, as the operator reads a clock.
        translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l o',
      }),
    );
  }
  return pino(options, pino.destination({ dest: 2, sync: true }));
}
