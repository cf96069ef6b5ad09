/** pino JSON lines on stderr; pretty when stderr is a terminal. The token never appears. */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export function createLogger(level: string): Logger {
  const options = {
    level,
    redact: {
      paths: ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[hidden]',
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
