import { Command } from 'commander';
import { openContext, openGateway, type GlobalOptions } from '../context.js';
import { formatCents } from '../../csv/amount.js';
import { keyValueLines } from '../format.js';
import type { CliIo } from '../../runtime/io.js';

export function balanceCommand(io: CliIo): Command {
  return new Command('balance')
    .description("show the account balance from the gateway's balance endpoint")
    .addHelpText('after', '\nExample:\n  payouts balance --json')
    .action(async (_options: object, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const gateway = await openGateway(context);
      try {
        const balance = await gateway.client.getBalance();
        context.out.data(balance);
        // The interface does not give the unit; like every amount it states, we read cents.
        context.out.line(
          keyValueLines([
            ['balance', formatCents(balance.balance)],
            ['retention', formatCents(balance.retention)],
            ['to anticipate', formatCents(balance.toAnticipate)],
            ['final balance', formatCents(balance.finalBalance)],
          ]),
        );
      } finally {
        await gateway.close();
      }
    });
}
