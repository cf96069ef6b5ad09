import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { createGatewayClient } from '../../gateway/client.js';
import type { CashOutRequest, Transaction } from '../../gateway/contract.js';
import { isFinalStatus } from '../../gateway/status.js';
import { SANDBOX_DEFAULTS, startSandbox } from '../../sandbox/server.js';
import { openContext, type GlobalOptions } from '../context.js';
import { formatCents } from '../../csv/amount.js';

const SETTLE_DELAY_MS = 300;
const POLL_INTERVAL_MS = 100;
const MAX_POLLS = 100;

/** Three payouts a finance team would recognise; the third goes to a key the sandbox always fails. */
function demoPayouts(runId: string): CashOutRequest[] {
  const person = (name: string, email: string) => ({ name, email, phone: '+5511987654321' });
  return [
    {
      value: 350_000,
      pixKeyType: 0,
      pixKey: '52998224725',
      cpfCnpj: '52998224725',
      person: person('Ana Souza', 'ana@example.com'),
      orderId: `${runId}-1`,
    },
    {
      value: 125_050,
      pixKeyType: 2,
      pixKey: 'joao@example.com',
      cpfCnpj: '11222333000181',
      person: person('João Lima Serviços', 'joao@example.com'),
      orderId: `${runId}-2`,
    },
    {
      value: 9_990,
      pixKeyType: 2,
      pixKey: 'fail@example.com',
      cpfCnpj: '52998224725',
      person: person('Carla Dias', 'carla@example.com'),
      orderId: `${runId}-3`,
    },
  ];
}

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'a short journey against the embedded sandbox: balance, a cash-in, three payouts followed until they settle',
    )
    .addHelpText('after', '\nExample:\n  npm start        # the same as: payouts demo')
    .action(async (_options: object, command: Command) => {
      const context = openContext(command.optsWithGlobals<GlobalOptions>());
      const { out } = context;
      const token = SANDBOX_DEFAULTS.token;
      const sandbox = await startSandbox({ token, settleDelayMs: SETTLE_DELAY_MS });
      const client = createGatewayClient({
        baseUrl: sandbox.url,
        token,
        authScheme: '',
        getTransactionMethod: 'GET',
        connectTimeoutMs: 2000,
        requestTimeoutMs: 5000,
        connections: 4,
      });
      try {
        process.stderr.write(`SANDBOX: no real money moves (embedded sandbox at ${sandbox.url})\n`);
        const before = await client.getBalance();
        out.line(`Balance before: ${formatCents(before.balance)}`);

        const folder = resolve(context.config.home, 'demo');
        mkdirSync(folder, { recursive: true });
        const cashIn = await client.createCashIn({
          payerName: 'Loja Exemplo Ltda',
          payerDocument: '11222333000181',
          payerEmail: 'financeiro@example.com',
          payerPhone: '+5511912345678',
          productName: 'Invoice 42',
          productDescription: 'November services',
          value: 150_000,
        });
        const qrFile = join(folder, `cashin-${cashIn.transactionId}.png`);
        writeFileSync(qrFile, Buffer.from(cashIn.qrPngBase64, 'base64'));
        out.line(
          `Cash-in ${cashIn.transactionId} for ${formatCents(150_000)}: QR saved to ${qrFile}`,
        );
        out.line(`  payment code: ${cashIn.paymentCode}`);

        const runId = `demo-${Date.now()}`;
        const requests = demoPayouts(runId);
        const sent = await Promise.all(requests.map((request) => client.createCashOut(request)));
        out.line(`Sent ${sent.length} payouts; following them until they settle…`);

        const settled = new Map<number, Transaction>();
        for (let poll = 0; poll < MAX_POLLS && settled.size < sent.length; poll++) {
          await sleep(POLL_INTERVAL_MS);
          for (const cashOut of sent) {
            if (settled.has(cashOut.transactionId)) continue;
            const transaction = await client.getTransactionById(cashOut.transactionId);
            if (isFinalStatus(transaction.status)) settled.set(cashOut.transactionId, transaction);
          }
        }

        const rows = requests.map((request, index) => {
          const transactionId = sent[index]?.transactionId ?? 0;
          const status = settled.get(transactionId)?.status ?? 'pending';
          return {
            orderId: request.orderId,
            name: request.person.name,
            value: request.value,
            transactionId,
            status,
          };
        });
        out.data({
          sandbox: sandbox.url,
          cashIn: { transactionId: cashIn.transactionId, qrImage: qrFile },
          payouts: rows,
        });
        out.line('');
        out.line(`${'orderId'.padEnd(22)} ${'name'.padEnd(20)} ${'value'.padStart(14)}  status`);
        for (const row of rows) {
          out.line(
            `${row.orderId.padEnd(22)} ${row.name.padEnd(20)} ${formatCents(row.value).padStart(14)}  ${row.status}`,
          );
        }
        const after = await client.getBalance();
        out.line('');
        out.line(
          `Balance after: ${formatCents(after.balance)} (the failed payout was returned to the balance)`,
        );
      } finally {
        await client.close();
        await sandbox.close();
      }
    });
}
