/**
 * pino JSON lines on stderr; pretty when stderr is a terminal. The token never appears,
 * and personal data is masked (src/runtime/mask.ts).
 */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { maskPersonalData } from './mask.js';

export type { Logger };

export function createLogger(level: string): Logger {
  const options = {
    level,
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
      pretty({ destination: 2, colorize: !process.env['NO_COLOR'], sync: true }),
    );
  }
  return pino(options, pino.destination({ dest: 2, sync: true }));
}
