import { Command, Option, InvalidArgumentError } from 'commander';
import { GatewayError } from '../../gateway/errors.js';
import {
  EMBEDDED_SANDBOX_FORGETS,
  openContext,
  openGateway,
  type GlobalOptions,
} from '../context.js';
import { ExitError, usageError } from '../exit-error.js';
import { formatCents } from '../../messages/money.js';
import { keyValueLines } from '../format.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

interface GetOptions {
  id?: number;
  orderId?: string;
}

function transactionIdArgument(value: string): number {
  if (!/^\d+$/.test(value))
    throw new InvalidArgumentError(`Expected a whole number, got "${value}".`);
  return Number(value);
}

export function getCommand(io: CliIo, { command: { get: words }, usage }: HelpTexts): Command {
  return new Command('get')
    .description(words.description)
    .addOption(
      new Option('--id <transactionId>', words.options.id)
        .argParser(transactionIdArgument)
        .conflicts('orderId'),
    )
    .addOption(new Option('--order-id <orderId>', words.options.orderId))
    .addHelpText('after', words.after)
    .action(async (options: GetOptions, command: Command) => {
      if (options.id === undefined && options.orderId === undefined) {
        throw usageError('get', `payouts get: ${usage.sayWhichTransaction}`, usage);
      }
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const gateway = await openGateway(context);
      const what =
        options.id !== undefined ? `transactionId ${options.id}` : `orderId "${options.orderId}"`;
      try {
        const transaction =
          options.id !== undefined
            ? await gateway.client.getTransactionById(options.id)
            : await gateway.client.getTransactionByOrderId(options.orderId ?? '');
        context.out.data(transaction);
        context.out.line(
          keyValueLines([
            ['transactionId', String(transaction.transactionId)],
            ['orderId', transaction.orderId ?? '-'],
            ['kind', `${transaction.object} (${transaction.method})`],
            ['value', formatCents(transaction.valueCents)],
            [
              'status',
              transaction.status === 'unrecognised'
                ? `${transaction.statusRaw} (not a status we know)`
                : transaction.status,
            ],
            ['endToEndId', transaction.endToEndId ?? '-'],
            ['processedAt', transaction.processedAt ?? '-'],
          ]),
        );
      } catch (error) {
        if (error instanceof GatewayError && error.kind === 'not-found') {
          throw new ExitError(
            1,
            gateway.embedded
              ? `payouts get: no transaction with ${what}: ${EMBEDDED_SANDBOX_FORGETS}`
              : `payouts get: the gateway has no transaction with ${what}`,
          );
        }
        throw error;
      } finally {
        await gateway.close();
      }
    });
}
