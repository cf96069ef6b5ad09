import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AHEAD_MAX_WAIT_MS,
  createClaimAhead,
  type ClaimAhead,
  type Claimed,
} from '../../src/engine/claim-ahead.js';
import { decideSend } from '../../src/engine/decisions.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { GatewayError } from '../../src/gateway/errors.js';
import type { Journal } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, cashOutRequest, clientFor, closedPort, ledgerCounts } from '../support/gateway.js';
import { sayInEnglish } from '../../src/messages/say.js';

const LEASE_MS = 30_000;

describe('the claim-ahead buffer, against the sandbox over HTTP and a SQLite journal', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let clients: GatewayClient[];
  // The process's clock, held still unless a test moves it.
  let elapsedMs: number;

  beforeEach(async () => {
    elapsedMs = 0;
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    clients = [];
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
  });
  afterEach(async () => {
    await journal.close();
    await Promise.all(clients.map((client) => client.close()));
    await sandbox.close();
  });

  const client = (baseUrl = sandbox.url) => {
    const made = clientFor(baseUrl, { requestTimeoutMs: 1000 });
    clients.push(made);
    return made;
  };

  const admit = async (count: number): Promise<string[]> => {
    const ids = Array.from({ length: count }, (_, i) => `p-${String(i).padStart(4, '0')}`);
    await journal.admitPayouts(
      await recordOpenBatch(journal, 'payroll.csv', count),
      ids.map((id, i) => ({ line: i + 2, request: cashOutRequest(id) })),
      { duplicateWindowMs: 0 },
    );
    return ids;
  };

  const buffer = (ahead: number, maxAhead = ahead): ClaimAhead =>
    createClaimAhead({
      ahead,
      maxAhead,
      claim: (limit) => journal.claimToSend('test', limit, LEASE_MS),
      unclaim: (claims, why) => journal.unclaim(claims, why),
      sendable: () => journal.sendable(),
      elapsed: () => elapsedMs,
      fail: (error) => expect.fail(String(error)),
    });

  /** Sends a row's create to the gateway and writes its answer (or failure), as the engine does. */
  const sendWith =
    (gateway: GatewayClient) =>
    async ({ claim }: Claimed) => {
      const answer = await gateway.createCashOut(claim.request).catch((error: unknown) => {
        if (error instanceof GatewayError) return error;
        throw error;
      });
      const decision = decideSend(answer);
      await journal.move(
        claim.orderId,
        claim.fence,
        decision.to,
        decision.reason,
        decision.details,
      );
      return decision;
    };

  const sending = async () => (await journal.countsByState()).sending?.count ?? 0;

  /** Waits, within a bound, for the buffer to hold `count` rows. */
  const holding = async (ahead: ClaimAhead, count: number) => {
    for (let look = 0; look < 500 && ahead.held !== count; look++) await delay(10);
    expect(ahead.held).toBe(count);
  };

  const givenBack = async (ids: string[]) =>
    (await Promise.all(ids.map((id) => journal.history(id))))
      .flat()
      .filter((entry) => entry.from === 'sending' && entry.to === 'queued')
      .map((entry) => sayInEnglish(entry.reason));

  it('holds its rows ahead beyond the places it fills, claimed in the same commit', async () => {
    await admit(20);
    const ahead = buffer(4);
    const started: Claimed[] = [];
    expect(await ahead.fill(4, (row) => started.push(row))).toBe('filled');
    expect(started).toHaveLength(4);
    expect(ahead.held).toBe(4);
    expect(await sending()).toBe(8);
    expect(await ahead.giveBack({ code: 'runStopped' })).toBe(4);
    expect(await sending()).toBe(4);
  });

  it('tops up once half or fewer of its rows are left, not before', async () => {
    await admit(20);
    const ahead = buffer(4);
    const started: Claimed[] = [];
    await ahead.fill(4, (row) => started.push(row));
    // Three of the four held go to places: one left, a top-up of three comes.
    expect(await ahead.fill(3, (row) => started.push(row))).toBe('filled');
    await holding(ahead, 4);
    // One more goes: three left, more than half, so nothing is claimed.
    await ahead.fill(1, (row) => started.push(row));
    expect(ahead.held).toBe(3);
    expect(await sending()).toBe(started.length + 3);
    expect(new Set(started.map(({ claim }) => claim.orderId)).size).toBe(8);
    await ahead.giveBack({ code: 'runStopped' });
  });

  it('holds twice as many ahead each time places waited for a top-up, up to its most', async () => {
    await admit(60);
    const ahead = buffer(4, 8);
    const started: Claimed[] = [];
    const start = (row: Claimed): number => started.push(row);
    await ahead.fill(4, start);
    // Three go, one is left: a top-up of three is on its way when two more places free.
    await ahead.fill(3, start);
    expect(await ahead.fill(2, start)).toBe('waited');
    // Its commits now keep up with fewer places: held to eight, not four.
    await ahead.fill(1, start);
    await holding(ahead, 8);
    // Waiting again would double it to 16: it stays at its most, eight.
    await ahead.fill(5, start);
    expect(await ahead.fill(4, start)).toBe('waited');
    await ahead.fill(1, start);
    await holding(ahead, 8);
    expect(await sending()).toBe(started.length + 8);
    expect(new Set(started.map(({ claim }) => claim.orderId)).size).toBe(started.length);
    await ahead.giveBack({ code: 'runStopped' });
  });

  it('a hold grown past its first size that ages falls back to that size, and to none if it ages again', async () => {
    await admit(60);
    const ahead = buffer(4, 8);
    const started: Claimed[] = [];
    const start = (row: Claimed): number => started.push(row);
    await ahead.fill(4, start);
    await ahead.fill(3, start);
    expect(await ahead.fill(2, start)).toBe('waited');
    await ahead.fill(1, start);
    await holding(ahead, 8);
    // What it holds waits too long: given back, then four held again, not none.
    elapsedMs += AHEAD_MAX_WAIT_MS + 1;
    await ahead.fill(1, start);
    expect(ahead.held).toBe(4);
    // The four it holds at its first size age too: none is held any more.
    elapsedMs += AHEAD_MAX_WAIT_MS + 1;
    await ahead.fill(1, start);
    expect(ahead.held).toBe(0);
    expect(await sending()).toBe(started.length);
  });

  it('hands out every row once, through top-ups, until the queue is empty', async () => {
    const ids = await admit(40);
    const ahead = buffer(4);
    const send = sendWith(client());
    const started: string[] = [];
    const answers: Promise<unknown>[] = [];
    // Places free one to four at a time, as answers come back.
    for (let round = 0; round < 200; round++) {
      const filled = await ahead.fill((round % 4) + 1, (row) => {
        started.push(row.claim.orderId);
        answers.push(send(row));
      });
      if (filled === 'empty') break;
    }
    await Promise.all(answers);
    expect(await ahead.giveBack({ code: 'runStopped' })).toBe(0);
    expect([...started].sort()).toEqual(ids);
    expect([...ledgerCounts(sandbox).entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(await journal.countsByState()).toEqual({ pending: { count: 40, cents: 40 * 1234 } });
  });

  it('gives back the rows it holds, a top-up on its way included, never sent', async () => {
    const ids = await admit(20);
    const ahead = buffer(4);
    const started: Claimed[] = [];
    await ahead.fill(4, (row) => started.push(row));
    // Leaves two and starts a top-up of two, not awaited.
    await ahead.fill(2, (row) => started.push(row));
    expect(await ahead.giveBack({ code: 'english', text: 'asked to stop' })).toBe(4);
    expect(ahead.held).toBe(0);
    expect(await sending()).toBe(started.length);
    expect(await givenBack(ids)).toEqual(
      Array.from(
        { length: 4 },
        () => 'claimed ahead of its request and not sent (asked to stop): queued again',
      ),
    );
  });

  it.each([
    ['the credentials are refused', async () => ({ gateway: client(), refuse: true })],
    [
      'the gateway cannot be reached',
      async () => ({ gateway: client(`http://127.0.0.1:${await closedPort()}`), refuse: false }),
    ],
  ])(
    'when %s, what it holds goes back to the queue and none of it reaches the gateway',
    async (_, given) => {
      const ids = await admit(12);
      const { gateway, refuse } = await given();
      if (refuse) sandbox.setToken('rotated');
      const ahead = buffer(4);
      const started: Claimed[] = [];
      await ahead.fill(4, (row) => started.push(row));
      const send = sendWith(gateway);
      const decisions = await Promise.all(started.map(send));
      // The run stops: refused credentials stop it at once, an unreachable gateway once it
      // has failed to reach it enough times in a row.
      expect(decisions.map((d) => d.signal.kind)).toEqual(
        Array.from({ length: 4 }, () => (refuse ? 'stop' : 'retry-later')),
      );
      const why = decisions[0]?.signal.kind === 'stop' ? decisions[0].signal.why : 'unreachable';
      expect(await ahead.giveBack({ code: 'english', text: why })).toBe(4);
      expect(await journal.countsByState()).toEqual({ queued: { count: 12, cents: 12 * 1234 } });
      expect(sandbox.ledger()).toHaveLength(0);
      expect((await givenBack(ids)).filter((reason) => reason.startsWith('claimed ahead'))).toEqual(
        Array.from(
          { length: 4 },
          () => `claimed ahead of its request and not sent (${why}): queued again`,
        ),
      );
    },
  );

  it('gives back rows that waited too long for a place, and then holds none ahead', async () => {
    const ids = await admit(12);
    const ahead = buffer(2);
    const started: Claimed[] = [];
    await ahead.fill(2, (row) => started.push(row));
    expect(ahead.held).toBe(2);
    elapsedMs += AHEAD_MAX_WAIT_MS + 1;
    await ahead.fill(1, (row) => started.push(row));
    expect(ahead.held).toBe(0);
    await ahead.fill(1, (row) => started.push(row));
    expect(ahead.held).toBe(0);
    expect(await sending()).toBe(4);
    expect(await givenBack(ids)).toEqual([
      'claimed ahead of its request and not sent (it waited too long for a free place): queued again',
      'claimed ahead of its request and not sent (it waited too long for a free place): queued again',
    ]);
  });
});
