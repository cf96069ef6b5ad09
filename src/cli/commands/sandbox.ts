import { Command, InvalidArgumentError } from 'commander';
import { parseDurationMs } from '../../config/duration.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import { SANDBOX_DEFAULTS, startSandbox } from '../../sandbox/server.js';
import { ExitError } from '../exit-error.js';
import { openContext, type GlobalOptions } from '../context.js';
import type { CliIo } from '../../runtime/io.js';

interface SandboxCommandOptions {
  host: string;
  port: number;
  settleDelay: number;
  balance: number;
  seed: number;
  latency: number | { min: number; max: number };
  errorRate: number;
  errorAfterCommitRate: number;
  rateLimitRate: number;
  retryAfter: number;
  hangRate: number;
  dropRate: number;
  dedupe: boolean;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`Expected a whole number, got "${value}".`);
  }
  return Number(value);
}

function rate(value: string): number {
  const share = Number(value);
  if (value.trim() === '' || !(share >= 0 && share <= 1)) {
    throw new InvalidArgumentError(`Expected a share from 0 to 1 (0.05 is 5%), got "${value}".`);
  }
  return share;
}

function duration(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === undefined)
    throw new InvalidArgumentError(`Expected a duration such as 50ms or 2s, got "${value}".`);
  return ms;
}

function latency(value: string): number | { min: number; max: number } {
  const [low, high, ...rest] = value.split('-');
  if (high === undefined) return duration(value);
  const min = duration(low ?? '');
  const max = duration(high);
  if (rest.length > 0 || max < min) {
    throw new InvalidArgumentError(
      `Expected a duration or a range such as 10ms-200ms, got "${value}".`,
    );
  }
  return { min, max };
}

export function sandboxCommand(io: CliIo): Command {
  return new Command('sandbox')
    .description('run the gateway simulator as an HTTP server (until Ctrl-C); no real money moves')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on; 0 picks a free one', wholeNumber, 0)
    .option(
      '--settle-delay <duration>',
      'time from creation to each next status',
      duration,
      SANDBOX_DEFAULTS.settleDelayMs,
    )
    .option(
      '--balance <cents>',
      'starting balance in cents',
      wholeNumber,
      SANDBOX_DEFAULTS.initialBalanceCents,
    )
    .option('--seed <n>', 'seed of the fault draws', wholeNumber, 1)
    .option(
      '--latency <duration|min-max>',
      'delay added to every answer, e.g. 50ms or 10ms-200ms',
      latency,
      0,
    )
    .option(
      '--error-rate <share>',
      'share of requests answered 500 before anything is created',
      rate,
      0,
    )
    .option(
      '--error-after-commit-rate <share>',
      'share of creates answered 502 after the transaction was created',
      rate,
      0,
    )
    .option('--rate-limit-rate <share>', 'share of requests answered 429', rate, 0)
    .option('--retry-after <seconds>', 'Retry-After sent with each 429', wholeNumber, 1)
    .option('--hang-rate <share>', 'share of requests never answered', rate, 0)
    .option(
      '--drop-rate <share>',
      'share of creates whose connection is cut after the transaction was created',
      rate,
      0,
    )
    .option(
      '--dedupe',
      'answer a repeated cash-out orderId with the existing transaction (default: pay it again)',
      false,
    )
    .addHelpText(
      'after',
      '\nThe token is PAYOUTS_TOKEN (or "token" in --config), else the public default "sandbox-token".\n' +
        'E-mail keys fail@…, cancel@… and refund@… settle to failed, canceled, and paid-then-refunded.\n' +
        '\nExample:\n  payouts sandbox --port 8080 --latency 50ms --drop-rate 0.05 --seed 7\n' +
        '  curl -H "Authorization: sandbox-token" http://127.0.0.1:8080/transaction/get/balance',
    )
    .action(async (options: SandboxCommandOptions, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const token = context.config.token ?? SANDBOX_DEFAULTS.token;
      const sandbox = await startSandbox({
        token,
        host: options.host,
        port: options.port,
        settleDelayMs: options.settleDelay,
        initialBalanceCents: options.balance,
        dedupeOrderIds: options.dedupe,
        faults: {
          seed: options.seed,
          latencyMs: options.latency,
          serverErrorRate: options.errorRate,
          serverErrorAfterCommitRate: options.errorAfterCommitRate,
          rateLimitRate: options.rateLimitRate,
          retryAfterSeconds: options.retryAfter,
          hangRate: options.hangRate,
          dropAfterCommitRate: options.dropRate,
        },
        onRequest: (entry) => context.logger.info(entry, 'sandbox request'),
      }).catch((error: NodeJS.ErrnoException) => {
        const where = `port ${options.port} on ${options.host}`;
        if (error.code === 'EADDRINUSE') {
          throw new ExitError(
            1,
            `payouts sandbox: ${where} is already in use by another program: choose another with --port (0 picks a free one), or stop that program`,
          );
        }
        if (error.code === 'EACCES') {
          throw new ExitError(
            1,
            `payouts sandbox: ${where} may not be used by this user (ports below 1024 need privileges): choose one above 1023 with --port`,
          );
        }
        throw error;
      });
      context.out.data({ url: sandbox.url, port: sandbox.port });
      context.out.line(`payouts sandbox listening on ${sandbox.url}`);
      context.out.warn('SANDBOX: no real money moves');
      if (context.config.token === null) {
        context.out.note(
          `Authorization: ${SANDBOX_DEFAULTS.token} (the sandbox's public default; set PAYOUTS_TOKEN for another)`,
        );
      }
      const signal = await new Promise<NodeJS.Signals>((resolve) => listenForStopSignal(resolve));
      context.out.note(`${signal}: stopping the sandbox`);
      await sandbox.close();
    });
}
