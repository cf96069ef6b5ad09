/**
 * `payouts template [FILE]`: a payout file with every column we read and no rows, laid
 * out as a Brazilian Excel saves "CSV UTF-8" (`;`, a byte-order mark, CRLF), for the
 * accountant to fill. No example rows: a forgotten example would be a payment.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { TEMPLATE_HEADINGS } from '../../csv/header.js';
import { SAVE_AS_CSV } from '../../messages/en.js';
import { ExitError } from '../exit-error.js';
import { openContext, type GlobalOptions } from '../context.js';
import type { CliIo } from '../../runtime/io.js';

/** The template's bytes: a byte-order mark, the headings, CRLF. */
export function templateFile(): Buffer {
  return Buffer.from(`\uFEFF${Object.values(TEMPLATE_HEADINGS).join(';')}\r\n`, 'utf8');
}

export function templateCommand(io: CliIo): Command {
  return new Command('template')
    .description(
      'write an empty payout file with every column we read, ready to fill in Excel (to FILE, or to stdout)',
    )
    .argument('[file]', 'where to write it; an existing file is never replaced')
    .addHelpText('after', '\nExample:\n  payouts template pagamentos-2026-12.csv')
    .action((file: string | undefined, _options: object, command: Command) => {
      const { out } = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'offline');
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
        throw new ExitError(
          1,
          `payouts template: ${path} already exists: nothing was written (give another name, or remove it first)`,
        );
      }
      try {
        writeSync(descriptor, templateFile());
      } finally {
        closeSync(descriptor);
      }
      out.line(`Written: ${path}`);
      out.note(
        `Fill one row per payment (Valor as 1.234,56; CPF/CNPJ with or without its dots; Tipo de chave and ID do pagamento may stay empty), then ${SAVE_AS_CSV.replace('save it again', 'save it')}, and check it with: payouts validate "${path}"`,
      );
    });
}
