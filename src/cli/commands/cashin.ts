import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { openContext, openGateway, type GlobalOptions } from '../context.js';
import { formatCents } from '../../csv/amount.js';
import { keyValueLines } from '../format.js';

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

export function cashInCommand(): Command {
  return new Command('cashin')
    .description(
      'create a cash-in (payment request): prints the Pix payment code and saves its QR image',
    )
    .requiredOption('--value <cents>', 'amount in cents (1234 is R$ 12,34)', centsArgument)
    .requiredOption('--payer-name <name>', 'who pays')
    .requiredOption('--payer-document <cpfCnpj>', "the payer's CPF or CNPJ")
    .requiredOption('--payer-email <email>', "the payer's e-mail")
    .requiredOption('--payer-phone <phone>', "the payer's phone")
    .requiredOption('--product-name <name>', 'what is being paid for')
    .requiredOption('--product-description <text>', 'a longer description of it')
    .option('--order-id <orderId>', 'your own reference, echoed back by the gateway')
    .option('--postback-url <url>', 'where the gateway should report the result')
    .option(
      '--qr-out <file.png>',
      'where to save the QR image (default: cashin-<transactionId>.png)',
    )
    .addHelpText(
      'after',
      '\nExample:\n  payouts cashin --value 1500 --payer-name "Ana Souza" --payer-document 52998224725 \\\n' +
        '    --payer-email ana@example.com --payer-phone +5511987654321 \\\n' +
        '    --product-name "Invoice 42" --product-description "November services" --qr-out invoice-42.png',
    )
    .action(async (options: CashInOptions, command: Command) => {
      const context = openContext(command.optsWithGlobals<GlobalOptions>());
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
        const qrFile = resolve(options.qrOut ?? `cashin-${cashIn.transactionId}.png`);
        writeFileSync(qrFile, Buffer.from(cashIn.qrPngBase64, 'base64'));
        context.out.data({
          transactionId: cashIn.transactionId,
          externalId: cashIn.externalId,
          orderId: cashIn.orderId,
          paymentCode: cashIn.paymentCode,
          qrImage: qrFile,
        });
        context.out.line(
          keyValueLines([
            ['transactionId', String(cashIn.transactionId)],
            ['value', formatCents(options.value)],
            ['payment code', cashIn.paymentCode],
            ['QR image', qrFile],
          ]),
        );
      } finally {
        await gateway.close();
      }
    });
}
