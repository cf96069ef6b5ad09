import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';
import { TOKEN } from '../support/gateway.js';

/** Two freelancers, no orderId column: every orderId is derived from the name and the rows. */
const FILE = [
  'name,email,phone,cpfCnpj,pixKeyType,pixKey,amount',
  'Ana Souza,ana@example.com,11987654321,529.982.247-25,EMAIL,ana@example.com,"150,00"',
  'Bruno Lima,bruno@example.com,11987654322,111.444.777-35,EMAIL,bruno@example.com,"275,50"',
].join('\n');

describe('two homes on one gateway account', { timeout: 120_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 100, faults: { latencyMs: 5 } });
  });
  afterEach(() => sandbox.close());

  const home = (name: string) =>
    sandboxHome(join(folder(), name), sandbox.url, {
      PAYOUTS_INBOX_SETTLE: '1ms',
      ...QUICK_TIMEOUTS,
    });

  /** orderId -> transactionId, as the home's journal has them, and each row's state. */
  const journaled = (path: string) => {
    const db = new Database(join(path, 'journal.db'), { readonly: true });
    try {
      return db
        .prepare(`SELECT order_id, transaction_id, state FROM payouts ORDER BY line`)
        .all() as { order_id: string; transaction_id: number; state: string }[];
    } finally {
      db.close();
    }
  };

  it('the same file name and rows in both, an unclear answer in one: each home pays its rows with payouts of its own', async () => {
    const one = home('one');
    const two = home('two');
    writeFileSync(join(one.home, 'inbox', 'freelancers.csv'), FILE);
    const first = await runCli(['run', '--follow-timeout', '20s'], { env: one.env });
    expect(first.code, first.stderr + first.stdout).toBe(0);

    // The second home's creates reach the gateway, and their answers are lost.
    sandbox.setFaults({ dropAfterCommitRate: 1, operations: ['createCashOut'] });
    writeFileSync(join(two.home, 'inbox', 'freelancers.csv'), FILE);
    const second = await runCli(['run', '--follow-timeout', '20s'], { env: two.env });
    expect(second.code, second.stderr + second.stdout).toBe(0);

    const ledger = sandbox.ledger();
    expect(ledger).toHaveLength(4);
    for (const rows of [journaled(one.home), journaled(two.home)]) {
      expect(rows.map((row) => row.state)).toEqual(['paid', 'paid']);
      for (const row of rows) {
        // Paid by the payout created under its own orderId, not another home's.
        const created = ledger.filter((entry) => entry.orderId === row.order_id);
        expect(created.map((entry) => entry.transactionId)).toEqual([row.transaction_id]);
      }
    }
    const ids = [...journaled(one.home), ...journaled(two.home)].map((row) => row.order_id);
    expect(new Set(ids).size).toBe(4);
  });
});
