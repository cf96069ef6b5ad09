import { Command, InvalidArgumentError } from 'commander';
import { parseDurationMs } from '../../config/duration.js';
import { listenForStopSignal } from '../../runtime/signals.js';
import { SANDBOX_DEFAULTS, startSandbox } from '../../sandbox/server.js';
import { ExitError } from '../exit-error.js';
import { openContext, type GlobalOptions } from '../context.js';
import type { HelpTexts } from '../../messages/catalog.js';
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

export function sandboxCommand(io: CliIo, { command: { sandbox: words } }: HelpTexts): Command {
  return new Command('sandbox')
    .description(words.description)
    .option('--host <address>', words.options.host, '127.0.0.1')
    .option('--port <n>', words.options.port, wholeNumber, 0)
    .option(
      '--settle-delay <duration>',
      words.options.settleDelay,
      duration,
      SANDBOX_DEFAULTS.settleDelayMs,
    )
    .option(
      '--balance <cents>',
      words.options.balance,
      wholeNumber,
      SANDBOX_DEFAULTS.initialBalanceCents,
    )
    .option('--seed <n>', words.options.seed, wholeNumber, 1)
    .option('--latency <duration|min-max>', words.options.latency, latency, 0)
    .option('--error-rate <share>', words.options.errorRate, rate, 0)
    .option('--error-after-commit-rate <share>', words.options.errorAfterCommitRate, rate, 0)
    .option('--rate-limit-rate <share>', words.options.rateLimitRate, rate, 0)
    .option('--retry-after <seconds>', words.options.retryAfter, wholeNumber, 1)
    .option('--hang-rate <share>', words.options.hangRate, rate, 0)
    .option('--drop-rate <share>', words.options.dropRate, rate, 0)
    .option('--dedupe', words.options.dedupe, false)
    .addHelpText('after', words.after)
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
