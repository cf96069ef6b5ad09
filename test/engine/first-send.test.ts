import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestBudget } from '../../src/engine/budget.js';
import { checkFirstSends } from '../../src/engine/first-send.js';
import { createGatewayPool } from '../../src/engine/pool.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { type Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, cashOutRequest, clientFor } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';

describe("the gateway asked before a batch's first send, over HTTP", () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let gateway: GatewayClient;
  let lookedUp: string[];
  let hung: string[];

  beforeEach(async () => {
    lookedUp = [];
    hung = [];
    sandbox = await startSandbox({
      token: TOKEN,
      onRequest: ({ path, fault }) => {
        const orderId = /^\/transaction\/get\/by\/orderId\/(.+)$/.exec(path)?.[1];
        if (orderId) (fault === 'hang' ? hung : lookedUp).push(decodeURIComponent(orderId));
      },
    });
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
    gateway = clientFor(sandbox.url, { requestTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await journal.close();
    await gateway.close();
    await sandbox.close();
  });

  const check = () =>
    checkFirstSends({
      journal,
      gateway,
      random: createRandom(5),
      pool: createGatewayPool({
        concurrency: 8,
        budget: requestBudget(null),
        maxPauseMs: 60_000,
        stop: new AbortController().signal,
        clock: systemClock,
      }),
    });

  const admit = async (count: number) => {
    const batchId = await recordOpenBatch(journal, 'fornecedores.csv', count);
    const ids = Array.from({ length: count }, (_, i) => `s-${i}`);
    await journal.admitPayouts(
      batchId,
      ids.map((id, i) => ({ line: i + 2, request: cashOutRequest(id, { cpfCnpj: `${i}` }) })),
      { duplicateWindowMs: 0 },
    );
    return ids;
  };

  it('a new batch: its first, middle and last orderIds, none at the gateway: clear', async () => {
    await admit(10);
    expect(await check()).toEqual({ kind: 'clear' });
    expect(lookedUp.sort()).toEqual(['s-0', 's-4', 's-9']);
  });

  it('the gateway has one this journal never sent: behind, naming it', async () => {
    await admit(10);
    const made = await gateway.createCashOut(cashOutRequest('s-9', { cpfCnpj: '9' }));
    expect(await check()).toEqual({
      kind: 'behind',
      fileName: 'fornecedores.csv',
      orderId: 's-9',
      line: 11,
      transactionId: made.transactionId,
      statusRaw: expect.any(String) as string,
    });
  });

  it('lookups answered 500 are asked again, four times each, then the batch waits: unchecked, not failed', async () => {
    await admit(1);
    sandbox.setFaults({ serverErrorRate: 1, operations: ['getTransactionByOrderId'] });
    const result = await check();
    expect(result).toMatchObject({ kind: 'unchecked', failed: false });
    expect(result.kind === 'unchecked' && result.why).toMatch(
      /could not be asked whether it already has payout s-0 of fornecedores\.csv.*nothing was sent; run again later/,
    );
    expect(lookedUp).toEqual(['s-0', 's-0', 's-0', 's-0']);
  });

  it('a lookup answered 429 waits as long as asked, and is asked again', async () => {
    await admit(1);
    sandbox.setFaults({
      rateLimitRate: 1,
      retryAfterSeconds: 0,
      operations: ['getTransactionByOrderId'],
    });
    expect(await check()).toMatchObject({ kind: 'unchecked', failed: false });
    expect(lookedUp).toEqual(['s-0', 's-0', 's-0', 's-0']);
  });

  it('credentials refused: the run fails at once', async () => {
    await admit(1);
    await gateway.close();
    gateway = clientFor(sandbox.url, { token: 'not-the-token' });
    const result = await check();
    expect(result).toMatchObject({ kind: 'unchecked', failed: true });
    expect(result.kind === 'unchecked' && result.why).toMatch(/refused our credentials/);
    expect(lookedUp).toEqual(['s-0']);
  });

  it('a batch with a row sent is asked again about the rows it has queued', async () => {
    await admit(3);
    await journal.claimToSend('test', 1, 30_000);
    expect(await check()).toEqual({ kind: 'clear' });
    expect(lookedUp).toEqual(['s-1', 's-2']);
  });

  it('a sampled row sent by another host of this journal while it was asked: clear, not behind', async () => {
    await admit(10);
    // Every lookup hangs (then times out and is asked again) until the other host has sent.
    sandbox.setFaults({ hangRate: 1, operations: ['getTransactionByOrderId'] });
    const checking = check();
    await waitFor('the samples asked', () => hung.length === 3);
    // Another host claims every row, its `sending` committed before its requests leave.
    for (const claim of await journal.claimToSend('pay-2:1', 10, 30_000)) {
      await gateway.createCashOut(claim.request);
    }
    sandbox.setFaults({ hangRate: 0 });
    expect(await checking).toEqual({ kind: 'clear' });
    expect(lookedUp.sort()).toEqual(['s-0', 's-4', 's-9']);
  });
});
