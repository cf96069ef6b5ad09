/**
 * `payouts template [FILE]`: a payout file with every column we read and no rows, laid
 * out as a Brazilian Excel saves "CSV UTF-8" (`;`, a byte-order mark, CRLF), for the
 * accountant to fill. No example rows: a forgotten example would be a payment.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { TEMPLATE_HEADINGS } from '../../csv/header.js';
import { CATALOGS } from '../../messages/catalog.js';
import { say } from '../../messages/say.js';
import { ExitError } from '../exit-error.js';
import { openContext, type GlobalOptions } from '../context.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

/** The template's bytes: a byte-order mark, the headings, CRLF. */
export function templateFile(): Buffer {
  return Buffer.from(`\uFEFF${Object.values(TEMPLATE_HEADINGS).join(';')}\r\n`, 'utf8');
}

export function templateCommand(io: CliIo, { command: { template: words } }: HelpTexts): Command {
  return new Command('template')
    .description(words.description)
    .argument(`[${words.argument.name}]`, words.argument.description)
    .addHelpText('after', words.after)
    .action((file: string | undefined, _options: object, command: Command) => {
      const { config, out } = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'offline');
      const words = CATALOGS[config.language ?? 'en'];
      if (file === undefined) {
        io.stdout.write(templateFile());
        return;
      }
      const path = resolve(file);
      let descriptor: number;
      try {
        descriptor = openSync(path, 'wx', 0o644);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw new ExitError(1, say(words, { code: 'templateExists', path }));
      }
      try {
        writeSync(descriptor, templateFile());
      } finally {
        closeSync(descriptor);
      }
      out.line(say(words, { code: 'templateWritten', path }));
      out.note(say(words, { code: 'templateHowToFill', path }));
    });
}
