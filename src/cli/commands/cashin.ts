import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { openContext, openGateway, type GlobalOptions } from '../context.js';
import { formatCents } from '../../messages/money.js';
import { readDocument } from '../../csv/documents.js';
import { isEmail } from '../../csv/pix-key.js';
import { ExitError } from '../exit-error.js';
import { keyValueLines } from '../format.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

interface CashInOptions {
  value: number;
  payerName: string;
  payerDocument: string;
  payerEmail: string;
  payerPhone: string;
  productName: string;
  productDescription: string;
  orderId?: string;
  postbackUrl?: string;
  qrOut?: string;
}

function centsArgument(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) === 0 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(
      `Expected a positive whole number of cents (1234 for R$ 12,34), got "${value}".`,
    );
  }
  return Number(value);
}

function documentArgument(value: string): string {
  const reading = readDocument(value);
  if (!reading.ok) throw new InvalidArgumentError(`"${value}" ${reading.problem}.`);
  return reading.value;
}

function emailArgument(value: string): string {
  if (!isEmail(value.trim())) {
    throw new InvalidArgumentError(`"${value}" is not an e-mail address (like name@example.com).`);
  }
  return value.trim();
}

/**
 * Why the QR image could not be saved at `file`, checked before the cash-in is created:
 * once it exists, a failed save must not lead anyone to create it again.
 */
function unwritable(file: string): string | undefined {
  const folder = dirname(file);
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
    return `the folder ${folder} does not exist`;
  }
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    return `${file} is a folder: give a file name, like ${file}/invoice.png`;
  }
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    return `the folder ${folder} cannot be written to`;
  }
  return undefined;
}

export function cashInCommand(io: CliIo, { command: { cashin: words } }: HelpTexts): Command {
  return new Command('cashin')
    .description(words.description)
    .requiredOption('--value <cents>', words.options.value, centsArgument)
    .requiredOption('--payer-name <name>', words.options.payerName)
    .requiredOption('--payer-document <cpfCnpj>', words.options.payerDocument, documentArgument)
    .requiredOption('--payer-email <email>', words.options.payerEmail, emailArgument)
    .requiredOption('--payer-phone <phone>', words.options.payerPhone)
    .requiredOption('--product-name <name>', words.options.productName)
    .requiredOption('--product-description <text>', words.options.productDescription)
    .option('--order-id <orderId>', words.options.orderId)
    .option('--postback-url <url>', words.options.postbackUrl)
    .option('--qr-out <file.png>', words.options.qrOut)
    .addHelpText('after', words.after)
    .action(async (options: CashInOptions, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const chosenQrFile = options.qrOut === undefined ? undefined : resolve(options.qrOut);
      const problem = chosenQrFile === undefined ? undefined : unwritable(chosenQrFile);
      if (problem) {
        throw new ExitError(
          1,
          `payouts cashin: --qr-out: ${problem}. Nothing was created; choose another file and run it again.`,
        );
      }
      const gateway = await openGateway(context);
      try {
        const cashIn = await gateway.client.createCashIn({
          payerName: options.payerName,
          payerDocument: options.payerDocument,
          payerEmail: options.payerEmail,
          payerPhone: options.payerPhone,
          productName: options.productName,
          productDescription: options.productDescription,
          value: options.value,
          ...(options.orderId === undefined ? {} : { orderId: options.orderId }),
          ...(options.postbackUrl === undefined ? {} : { postbackUrl: options.postbackUrl }),
        });
        const qrFile = chosenQrFile ?? resolve(`cashin-${cashIn.transactionId}.png`);
        let saved: string | undefined;
        try {
          writeFileSync(qrFile, Buffer.from(cashIn.qrPngBase64, 'base64'));
        } catch (error) {
          saved = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        }
        // The cash-in exists whatever happened to the image: what the payer needs is shown.
        context.out.data({
          transactionId: cashIn.transactionId,
          externalId: cashIn.externalId,
          orderId: cashIn.orderId,
          paymentCode: cashIn.paymentCode,
          qrImage: saved === undefined ? qrFile : null,
        });
        context.out.line(
          keyValueLines([
            ['transactionId', String(cashIn.transactionId)],
            ['value', formatCents(options.value)],
            ['payment code', cashIn.paymentCode],
            ['QR image', saved === undefined ? qrFile : 'not saved'],
          ]),
        );
        if (saved !== undefined) {
          throw new ExitError(
            1,
            `payouts cashin: cash-in ${cashIn.transactionId} was created, but its QR image could not be saved to ${qrFile} (${saved}). Do not create it again: the payment code above is all the payer needs.`,
          );
        }
      } finally {
        await gateway.close();
      }
    });
}
