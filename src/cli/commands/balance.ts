import { Command } from 'commander';
import { openContext, openGateway, type GlobalOptions } from '../context.js';
import { formatCents } from '../../messages/money.js';
import { keyValueLines } from '../format.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

export function balanceCommand(io: CliIo, { command: { balance: words } }: HelpTexts): Command {
  return new Command('balance')
    .description(words.description)
    .addHelpText('after', words.after)
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
