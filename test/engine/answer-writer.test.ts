import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnswerWriter } from '../../src/engine/answer-writer.js';
import { decideSend } from '../../src/engine/decisions.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { JournalError } from '../../src/journal/journal-error.js';
import type { Claim, Journal, Move } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { recordOpenBatch } from '../support/batch.js';
import { useTempFolder } from '../support/files.js';
import { refuseAnswers as refuseAnswersAt } from '../support/refuse-answers.js';
import { TOKEN, cashOutRequest, clientFor, ledgerCounts } from '../support/gateway.js';

const LEASE_MS = 30_000;
/** Longer than any test: a group is written only on its size or when asked. */
const NEVER_MS = 600_000;

describe('the grouped answer writer, against the sandbox over HTTP and a SQLite journal', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let journal: Journal;
  let gateway: GatewayClient;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
    gateway = clientFor(sandbox.url, { requestTimeoutMs: 1000 });
    journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')));
  });
  afterEach(async () => {
    await journal.close();
    await gateway.close();
    await sandbox.close();
  });

  /** `count` rows admitted and claimed, not yet sent. */
  const claimed = async (count: number): Promise<Claim[]> => {
    const batchId = await recordOpenBatch(journal, 'payroll.csv', count);
    await journal.admitPayouts(
      batchId,
      Array.from({ length: count }, (_, i) => ({
        line: i + 2,
        request: cashOutRequest(`p-${String(i).padStart(4, '0')}`),
      })),
      { duplicateWindowMs: 0 },
    );
    return journal.claimToSend('test', count, LEASE_MS);
  };

  /** The gateway's answer to each claim's create, as the move the engine writes. */
  const answered = (claims: readonly Claim[]): Promise<Move[]> =>
    Promise.all(
      claims.map(async (claim) => {
        const { to, reason, details } = decideSend(await gateway.createCashOut(claim.request));
        return { orderId: claim.orderId, fence: claim.fence, to, reason, details };
      }),
    );

  /** A writer whose groups are written only on their size or when asked, unless told otherwise. */
  const writerOf = ({
    groupMs = NEVER_MS,
    groupSize = 64,
    fail = (error: unknown): void => expect.fail(String(error)),
  } = {}) => createAnswerWriter({ journal, groupMs, groupSize, fail });

  const states = () => journal.countsByState();

  /** Each row moved from `sending` by its answer exactly once, and created once at the gateway. */
  const expectEachWrittenOnce = async (claims: readonly Claim[]) => {
    const histories = await Promise.all(claims.map((claim) => journal.history(claim.orderId)));
    expect(histories.map((entries) => entries.filter((e) => e.from === 'sending'))).toEqual(
      claims.map(() => [expect.objectContaining({ to: 'pending' })]),
    );
    expect([...ledgerCounts(sandbox).values()]).toEqual(claims.map(() => 1));
  };

  const refuseAnswers = () => refuseAnswersAt(journal.path);

  it('keeps answers until a group is full, then writes the group', async () => {
    const claims = await claimed(4);
    const moves = await answered(claims);
    const writer = writerOf({ groupSize: 4 });
    for (const move of moves.slice(0, 3)) writer.add(move);
    expect(writer.unwritten).toBe(3);
    expect(await states()).toEqual({ sending: { count: 4, cents: 4 * 1234 } });
    writer.add(moves[3] as Move);
    // The full group is on its way: flush only waits for it.
    await writer.flush();
    expect(writer.unwritten).toBe(0);
    expect(await states()).toEqual({ pending: { count: 4, cents: 4 * 1234 } });
    await expectEachWrittenOnce(claims);
  });

  it('writes answers no claim comes for within the group time, in a commit of their own', async () => {
    const claims = await claimed(3);
    const writer = writerOf({ groupMs: 10 });
    for (const move of await answered(claims)) writer.add(move);
    expect(writer.unwritten).toBe(3);
    for (let look = 0; look < 500 && writer.unwritten > 0; look++) await delay(10);
    expect(writer.unwritten).toBe(0);
    expect(await states()).toEqual({ pending: { count: 3, cents: 3 * 1234 } });
    await expectEachWrittenOnce(claims);
  });

  it('answers ride on the next claim, in its commit', async () => {
    const claims = await claimed(2);
    await journal.admitPayouts(
      await recordOpenBatch(journal, 'more.csv', 2),
      [2, 3].map((line) => ({ line, request: cashOutRequest(`q-${line}`) })),
      { duplicateWindowMs: 0 },
    );
    const writer = writerOf();
    for (const move of await answered(claims)) writer.add(move);
    const next = await writer.withAnswers((answers) =>
      journal.claimToSend('test', 2, LEASE_MS, undefined, answers),
    );
    expect(next.map((claim) => claim.orderId)).toEqual(['q-2', 'q-3']);
    expect(writer.unwritten).toBe(0);
    expect(await states()).toEqual({
      pending: { count: 2, cents: 2 * 1234 },
      sending: { count: 2, cents: 2 * 1234 },
    });
    await writer.flush();
    await expectEachWrittenOnce(claims);
  });

  it('a claim whose commit fails leaves its answers waiting, and the next write writes each once', async () => {
    const claims = await claimed(2);
    const writer = writerOf();
    for (const move of await answered(claims)) writer.add(move);
    const allow = refuseAnswers();
    try {
      await expect(
        writer.withAnswers((answers) =>
          journal.claimToSend('test', 1, LEASE_MS, undefined, answers),
        ),
      ).rejects.toBeInstanceOf(JournalError);
    } finally {
      allow();
    }
    expect(writer.unwritten).toBe(2);
    expect(await states()).toEqual({ sending: { count: 2, cents: 2 * 1234 } });
    await writer.flush();
    expect(await states()).toEqual({ pending: { count: 2, cents: 2 * 1234 } });
    await expectEachWrittenOnce(claims);
  });

  it("a group whose write fails is reported as the journal's error, and its answers are written once by the next", async () => {
    const claims = await claimed(4);
    const moves = await answered(claims);
    const failures: unknown[] = [];
    const writer = writerOf({ groupSize: 3, fail: (error) => void failures.push(error) });
    const allow = refuseAnswers();
    try {
      for (const move of moves) writer.add(move);
      await writer.flush();
    } finally {
      allow();
    }
    // The write the full group of three started takes the fourth too, at its turn: one failure.
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(JournalError);
    expect(failures[0]).toMatchObject({
      kind: 'unavailable',
      message: 'the disk refused the write',
    });
    expect(writer.unwritten).toBe(4);
    expect(await states()).toEqual({ sending: { count: 4, cents: 4 * 1234 } });
    await writer.flush();
    expect(failures).toHaveLength(1);
    expect(writer.unwritten).toBe(0);
    expect(await states()).toEqual({ pending: { count: 4, cents: 4 * 1234 } });
    await expectEachWrittenOnce(claims);
  });

  it('a group the timer started that fails once is written by the final flush called while it was on its way', async () => {
    const claims = await claimed(3);
    const moves = await answered(claims);
    const failures: unknown[] = [];
    const allow = refuseAnswers();
    // The write fails once: the store takes answers again as soon as the failure is heard.
    const writer = writerOf({
      groupMs: 1,
      fail: (error) => {
        failures.push(error);
        allow();
      },
    });
    // Another process holds the write lock: the group the timer starts waits for it.
    const other = new Database(journal.path);
    let finalFlush: Promise<void> | undefined;
    try {
      other.exec('BEGIN IMMEDIATE');
      for (const move of moves) writer.add(move);
      // A timer of the same length set after the writer's fires after it: its group is on its way.
      await delay(1);
      finalFlush = writer.flush();
      other.exec('COMMIT');
    } finally {
      other.close();
    }
    await finalFlush;
    expect(failures).toHaveLength(1);
    expect(writer.unwritten).toBe(0);
    expect(await states()).toEqual({ pending: { count: 3, cents: 3 * 1234 } });
    await expectEachWrittenOnce(claims);
  });
});
