/**
 * The conformance suite of the Journal interface: what any journal must do, written
 * against the interface alone, every call awaited (a journal may answer with promises).
 * It calls every member (the last case checks it), and states the isolation a store must
 * give (see journal.ts): its cases "at once" open journals on one store in worker
 * threads of their own (`node:worker_threads`, see journal-thread.ts), whose calls truly
 * run at the same time. Each implementation runs it with `describeJournal(name, factory)`.
 */
import { setTimeout as tick } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { JournalError, type Claim, type Journal } from '../../src/journal/journal.js';
import { restoreOf } from '../../src/journal/loss.js';
import { canMove, type RowState } from '../../src/journal/states.js';
import type { LineKind } from '../../src/journal/types.js';
import { everyLine } from '../support/lines.js';
import { waitFor } from '../support/wait.js';
import { journalThread, type JournalThread, type OpenedElsewhere } from './journal-thread.js';

/** A store the suite runs against: journals of one test opened with one name are one journal. */
export interface JournalFactory {
  /** Opens the journal stored as `store` in this thread, timed by `now`. */
  open(store: string, now: () => number): Journal | Promise<Journal>;
  /** How a worker thread opens the journal stored as `store`. */
  elsewhere(store: string): OpenedElsewhere;
  /** The clock the store judges leases by, when not the one a journal is opened with. */
  leaseNow?: () => Promise<number>;
  /** True when hosts share the store, and keep the gateway's limits through it. */
  sharedByHosts?: true;
}

/** A lease over as soon as it is given, by whichever clock a store judges leases. */
const ENDED = 0;

/** Every member of the interface, each of which the suite must call. */
const MEMBERS: Record<keyof Journal, true> = {
  path: true,
  describe: true,
  identity: true,
  highWater: true,
  latestAt: true,
  startRecovery: true,
  sendable: true,
  bindGateway: true,
  gatewayKind: true,
  close: true,
  recordBatch: true,
  batch: true,
  batches: true,
  batchesOf: true,
  batchesIn: true,
  latestOfName: true,
  batchForFile: true,
  finishBatch: true,
  setBatchState: true,
  resultName: true,
  setAwaitingName: true,
  recordLines: true,
  linesOfBatch: true,
  recordBatchEvent: true,
  batchEvents: true,
  approvalsSince: true,
  approveBatch: true,
  refuseBatch: true,
  fundBatch: true,
  underfundBatch: true,
  queuedByBatch: true,
  correctBatch: true,
  releaseHolds: true,
  supersededBy: true,
  frozenFor: true,
  admitPayouts: true,
  known: true,
  weigh: true,
  failedRepeatOf: true,
  weighMany: true,
  payout: true,
  lookUpNeverSent: true,
  firstSendSamples: true,
  forgottenOrderIds: true,
  claimToSend: true,
  unclaim: true,
  claimAbandoned: true,
  claimDue: true,
  claimPaid: true,
  nextPollAt: true,
  pollNow: true,
  onPollNow: true,
  onRowsQueued: true,
  pollBatchSooner: true,
  markResending: true,
  move: true,
  moveMany: true,
  retryPayouts: true,
  retryTargetsOf: true,
  hasRetries: true,
  takeLock: true,
  renewLock: true,
  releaseLock: true,
  takeClaim: true,
  releaseClaim: true,
  hostsSeen: true,
  clockOffset: true,
  lookAtGateway: true,
  pauseGateway: true,
  rowTotalsOfBatch: true,
  resultEntries: true,
  payeesOfBatch: true,
  batchesShowingRefundedSince: true,
  history: true,
  countsByState: true,
  countsOfBatch: true,
  pendingSentBefore: true,
  holdsOfBatch: true,
  heldRowsOfBatch: true,
  ownHeldRowsOfBatch: true,
};

export const request = (orderId: string, value = 1000): CashOutRequest => ({
  value,
  pixKeyType: 0,
  pixKey: '52998224725',
  cpfCnpj: '52998224725',
  person: { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' },
  orderId,
});

/** A batch of three rows, as a test records it. */
export const batch = {
  fileName: 'payroll.csv',
  sha256: 'ab',
  state: 'open' as const,
  rows: 3,
  valid: 3,
  invalid: 0,
  totalCents: 3000,
  problems: [],
};

/** Registers the conformance suite, as `name`, for the journals `openStore` opens. */
export function describeJournal(name: string, factory: JournalFactory): void {
  describe(name, () => {
    const opened: Journal[] = [];
    const threads: JournalThread[] = [];
    /** The members the suite's cases have called, here or in a thread. */
    const called = new Set<string>();
    let clock = 1_000_000;
    const leaseNow = () => factory.leaseNow?.() ?? Promise.resolve(clock);
    const open = async (store = 'journal.db') => {
      const journal = await factory.open(store, () => clock);
      opened.push(journal);
      return new Proxy(journal, {
        get(target, member, receiver) {
          if (typeof member === 'string') called.add(member);
          return Reflect.get(target, member, receiver) as unknown;
        },
      });
    };
    /** `count` journals on the store, each in a thread of its own, opened before it returns. */
    const openThreads = async (count: number) => {
      const started = Array.from({ length: count }, () =>
        journalThread(factory.elsewhere('journal.db')),
      );
      threads.push(...started);
      const inThread: JournalThread[] = started.map((thread) => ({
        call: (method, args, now) => {
          called.add(method);
          return thread.call(method, args, now);
        },
        close: () => thread.close(),
      }));
      await Promise.all(inThread.map((thread) => thread.call('highWater', [], clock)));
      return inThread;
    };
    /** A journal with these payouts queued, in one batch from line 2. */
    const openWithPayouts = async (orderIds: readonly string[]) => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        orderIds.map((orderId, i) => ({ line: i + 2, request: request(orderId) })),
        { duplicateWindowMs: 0 },
      );
      return { journal, id };
    };
    /** A journal with one payout, p-1, queued: where most moves start. */
    const openWithOnePayout = () => openWithPayouts(['p-1']);
    afterEach(async () => {
      await Promise.all(threads.splice(0).map((thread) => thread.close()));
      for (const journal of opened.splice(0)) await journal.close();
    });

    it("keeps an invalid line's message as a value beside its English, and its problems too", async () => {
      const journal = await open();
      const id = await journal.recordBatch(
        { ...batch, state: 'held', problems: [{ code: 'noRows' }] },
        [
          {
            line: 4,
            kind: 'invalid',
            orderId: null,
            column: 'Nome',
            message: "is empty: the recipient's name is required",
            said: { code: 'nameEmpty' },
          },
          { line: 5, kind: 'skipped', orderId: null, column: null, message: 'a total line' },
        ],
      );
      expect(
        (await everyLine(journal, id)).map((line) => [line.line, line.message, line.said]),
      ).toEqual([
        [4, "is empty: the recipient's name is required", { code: 'nameEmpty' }],
        [5, 'a total line', undefined],
      ]);
      expect((await journal.resultEntries(id, 0, 10)).map((entry) => entry.said)).toEqual([
        { code: 'nameEmpty' },
        null,
      ]);
      expect((await journal.batch(id))?.problems).toEqual([{ code: 'noRows' }]);
    });

    it('reads the first lines of the kinds asked for, in line order, and counts them all', async () => {
      const journal = await open();
      const invalid = (line: number) => ({
        line,
        kind: 'invalid' as const,
        orderId: null,
        column: 'name',
        message: 'is empty',
      });
      const skipped = { line: 5, kind: 'skipped' as const, orderId: null, column: null };
      const id = await journal.recordBatch(batch, [
        invalid(9),
        invalid(4),
        { ...skipped, message: 'a total line' },
        invalid(7),
      ]);
      const lines = async (kinds: LineKind[], limit: number) => {
        const { count, first } = await journal.linesOfBatch(id, kinds, limit);
        return { count, lines: first.map((line) => line.line) };
      };
      expect(await lines(['invalid'], 2)).toEqual({ count: 3, lines: [4, 7] });
      expect(await lines(['invalid', 'skipped'], 10)).toEqual({ count: 4, lines: [4, 5, 7, 9] });
      expect(await lines(['held', 'covered'], 10)).toEqual({ count: 0, lines: [] });
    });

    it('journals new payouts as queued; an orderId of another file is held naming it, never a replay', async () => {
      const journal = await open();
      const first = await journal.recordBatch(batch, []);
      expect(
        (
          await journal.admitPayouts(
            first,
            [
              { line: 2, request: request('p-1') },
              { line: 3, request: request('p-2', 2000) },
            ],
            { duplicateWindowMs: 0 },
          )
        ).map((a) => a.admission),
      ).toEqual(['new', 'new']);
      const second = await journal.recordBatch({ ...batch, fileName: 'outro.csv' }, [
        { line: 4, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
      ]);
      const admitted = await journal.admitPayouts(
        second,
        [
          { line: 2, request: request('p-1') },
          { line: 3, request: request('p-2', 9999) },
          { line: 5, request: request('p-3', 3000) },
        ],
        { duplicateWindowMs: 0 },
      );
      expect(admitted.map((a) => a.admission)).toEqual(['journaled', 'journaled', 'new']);
      expect((await journal.payout('p-2'))?.valueCents).toBe(2000); // the other file's row is untouched
      expect(await everyLine(journal, second)).toEqual([
        {
          line: 2,
          kind: 'held',
          orderId: 'p-1',
          column: null,
          message:
            'orderId p-1 is already journaled from payroll.csv, line 2, on 1970-01-01 (now queued): not sent again. If this is another payment, give it an orderId of its own',
          // The same, as a value a reader's language says.
          said: expect.objectContaining({ code: 'heldJournaled', orderId: 'p-1', line: 2 }),
        },
        expect.objectContaining({ line: 3, kind: 'held', orderId: 'p-2' }),
        { line: 4, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
      ]);
      // Counted as held, for a person: never as what became of the other file's payout.
      expect((await journal.rowTotalsOfBatch(second)).rows).toEqual({
        held: 2,
        invalid: 1,
        queued: 1,
      });
      expect(await journal.history('p-3')).toEqual([
        {
          at: clock,
          from: null,
          to: 'queued',
          reason: { code: 'auditJournaled', batchId: 2, line: 5 },
        },
      ]);
    });

    it("samples a batch's first, middle and last queued rows, sent from before or not, and none in recovery", async () => {
      const { journal, id } = await openWithPayouts(['p-1', 'p-2', 'p-3', 'p-4', 'p-5']);
      expect(await journal.firstSendSamples()).toEqual([
        {
          batchId: id,
          fileName: 'payroll.csv',
          payouts: [
            { orderId: 'p-1', line: 2, forgotten: [] },
            { orderId: 'p-3', line: 4, forgotten: [] },
            { orderId: 'p-5', line: 6, forgotten: [] },
          ],
        },
      ]);
      const [claim] = await journal.claimToSend('a', 1, 60_000);
      expect(claim?.orderId).toBe('p-1');
      // Its rows still queued are sampled again: the gateway may have them from a run
      // this journal forgot (a home restored from a backup taken mid-batch).
      expect((await journal.firstSendSamples()).map((sample) => sample.payouts)).toEqual([
        [
          { orderId: 'p-2', line: 3, forgotten: [] },
          { orderId: 'p-3', line: 4, forgotten: [] },
          { orderId: 'p-5', line: 6, forgotten: [] },
        ],
      ]);
      await journal.claimToSend('a', 4, 60_000);
      expect(await journal.firstSendSamples()).toEqual([]);
      // An orderId the file gave was never derived from a batch number: nothing to look up.
      expect(await journal.forgottenOrderIds('p-1')).toEqual([]);
      expect(await journal.forgottenOrderIds('nobody-1')).toEqual([]);

      const other = await journal.recordBatch({ ...batch, fileName: 'bonus.csv' }, []);
      await journal.admitPayouts(other, [{ line: 2, request: request('b-1', 2000) }], {
        duplicateWindowMs: 0,
      });
      expect((await journal.firstSendSamples()).map((sample) => sample.payouts)).toEqual([
        [{ orderId: 'b-1', line: 2, forgotten: [] }],
      ]);
      await journal.startRecovery('a test');
      expect(await journal.firstSendSamples()).toEqual([]);
    });

    it('lets a fixed copy of the same file replace an orderId the gateway refused', async () => {
      const journal = await open();
      const file = { name: 'payroll.csv', nameKey: 'payroll', sha256: 'a1', arrived: true };
      const first = (await journal.batchForFile(file)).batchId;
      await journal.admitPayouts(first, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      });
      await journal.finishBatch(first, { ...batch, state: 'open' });
      const [claim] = await journal.claimToSend('a', 10, 60_000);
      expect(
        await journal.move(
          'p-1',
          claim?.fence ?? 0,
          'rejected',
          'Validation Failed - pixKey (HTTP 400)',
          {
            message: 'Validation Failed - pixKey',
          },
        ),
      ).toBe(true);
      // The same request again is a re-send, which only payouts retry makes: a held line.
      const unchanged = (await journal.batchForFile({ ...file, sha256: 'a2' })).batchId;
      expect(
        (
          await journal.admitPayouts(unchanged, [{ line: 2, request: request('p-1') }], {
            duplicateWindowMs: 0,
          })
        )[0]?.admission,
      ).toBe('journaled');
      expect(await journal.payout('p-1')).toMatchObject({ state: 'rejected', batchId: first });
      expect((await everyLine(journal, unchanged))[0]?.message).toMatch(
        /\(now rejected\): not sent again; to send that payment again on purpose, run: payouts retry p-1\./,
      );
      // Fixed (here its amount), it takes the refused row over.
      const second = (await journal.batchForFile({ ...file, sha256: 'a3' })).batchId;
      expect(
        (
          await journal.admitPayouts(second, [{ line: 7, request: request('p-1', 1234) }], {
            duplicateWindowMs: 0,
          })
        )[0]?.admission,
      ).toBe('retry');
      expect(await journal.payout('p-1')).toMatchObject({
        state: 'queued',
        valueCents: 1234,
        batchId: second,
        line: 7,
        message: null,
        attempts: 0,
      });
      // Its next send is the fixed request, not the one the gateway refused.
      await journal.finishBatch(second, { ...batch, state: 'open' });
      const [again] = await journal.claimToSend('a', 10, 60_000);
      expect(again).toMatchObject({ orderId: 'p-1', request: { value: 1234 } });
      // Every change of its state, the take-over too, is a move the transition table allows.
      const moves = (await journal.history('p-1')).flatMap(({ from, to }) =>
        from === null ? [] : [`${from} -> ${to}`],
      );
      expect(moves).toContain('rejected -> queued');
      expect(
        moves.filter((move) => !canMove(...(move.split(' -> ') as [RowState, RowState]))),
      ).toEqual([]);
    });

    describe("the cover rule: the same document and amount as another file's payout", () => {
      const DAY = 86_400_000;
      const rules = { duplicateWindowMs: 20 * DAY };
      const admitIn = async (journal: Journal, fileName: string, requests: CashOutRequest[]) => {
        const id = await journal.recordBatch({ ...batch, fileName }, []);
        return (
          await journal.admitPayouts(
            id,
            requests.map((r, index) => ({ line: index + 2, request: r })),
            rules,
          )
        ).map((a) => a.admission);
      };

      it('holds a row as a possible duplicate, naming the payout, within the window only', async () => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1')]);
        clock += 19 * DAY;
        expect(await admitIn(journal, 'folha-final.csv', [request('b-1')])).toEqual(['duplicate']);
        expect(await journal.payout('b-1')).toMatchObject({ state: 'held' });
        expect((await journal.payout('b-1'))?.message).toMatch(
          /^possible duplicate: the same document and amount as folha\.csv, line 2, journaled on 1970-01-01 \(now queued\); not sent\. If it is a new payment after all: payouts approve "folha-final\.csv" --new-batch lists it, and pays it again only when also given the option --repeats and the count of such rows it lists$/,
        );
        clock += 2 * DAY; // 21 days after folha.csv, 2 after folha-final.csv
        expect(await admitIn(journal, 'folha-2.csv', [request('c-1')])).toEqual(['duplicate']);
        expect((await journal.payout('c-1'))?.message).toContain('folha-final.csv');
      });

      it('compares documents as people write them, and amounts to the cent', async () => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1')]);
        const punctuated = { ...request('b-1'), cpfCnpj: '529.982.247-25' };
        expect(await admitIn(journal, 'copia.csv', [punctuated, request('b-2', 1001)])).toEqual([
          'duplicate',
          'new',
        ]);
      });

      it('lets one payout cover one row: the second of two equal rows is held by the other', async () => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1'), request('a-2')]);
        expect(
          await admitIn(journal, 'copia.csv', [request('b-1'), request('b-2'), request('b-3')]),
        ).toEqual(['duplicate', 'duplicate', 'new']);
        expect((await journal.payout('b-1'))?.message).toContain('line 2');
        expect((await journal.payout('b-2'))?.message).toContain('line 3');
      });

      it.each([
        ['failed', 'new'],
        ['rejected', 'new'],
        ['canceled', 'new'],
        ['paid', 'duplicate'],
        ['pending', 'duplicate'],
        ['unknown', 'duplicate'],
      ] as const)('a payout %s covers: %s', async (state, expected) => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1')]);
        const [claim] = await journal.claimToSend('w', 1, 60_000);
        if (state === 'paid' || state === 'failed' || state === 'canceled') {
          await journal.move(
            'a-1',
            claim?.fence ?? 0,
            'pending',
            'created',
            {},
            { release: false },
          );
        }
        await journal.move('a-1', claim?.fence ?? 0, state, 'answer');
        expect(await admitIn(journal, 'copia.csv', [request('b-1')])).toEqual([expected]);
      });

      it('is checked again when a row is claimed: of two copies queued together one is sent, the other held', async () => {
        const journal = await open();
        const first = await journal.recordBatch({ ...batch, fileName: 'folha.csv' }, []);
        await journal.admitPayouts(first, [{ line: 2, request: request('a-1') }], rules);
        // Held for the balance, then funded after its copy came in.
        const short = { cents: 100, count: 1, feeCents: 0, availableCents: 0 };
        await journal.underfundBatch(first, { code: 'balanceShortfall', ...short });
        clock += 1;
        // Admitted as if no rule had seen the first (another process, a window of 0).
        const copy = await journal.recordBatch({ ...batch, fileName: 'folha_final.csv' }, []);
        await journal.admitPayouts(copy, [{ line: 2, request: request('b-1') }], {
          duplicateWindowMs: 0,
        });
        await journal.fundBatch(first);
        expect((await journal.payout('b-1'))?.state).toBe('queued');
        const claims = await journal.claimToSend('w', 10, 60_000, rules);
        expect(claims.map((claim) => claim.orderId)).toEqual(['a-1']);
        expect(await journal.payout('b-1')).toMatchObject({ state: 'held' });
        expect((await journal.payout('b-1'))?.message).toMatch(
          /^possible duplicate: .* folha\.csv, line 2/,
        );
      });

      it('a row a person released as a new payment is not held again when it is claimed', async () => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1')]);
        await admitIn(journal, 'folha_final.csv', [request('b-1')]);
        const copy = (await journal.batches('folha_final.csv'))[0]?.id ?? 0;
        // Why it is held, as a value beside the English, for the reader's language.
        expect((await journal.payout('b-1'))?.said).toEqual({
          code: 'heldDuplicate',
          file: 'folha.csv',
          line: 2,
          at: clock,
          state: 'queued',
          transactionId: null,
          newFile: 'folha_final.csv',
          hintFlags: '',
        });
        const why = { code: 'releasedNewBy', by: 'maria', repeats: null } as const;
        expect((await journal.releaseHolds(copy, 'duplicate', why)).rows).toBe(1);
        // Released, it says nothing: neither the English nor the value is left behind.
        expect(await journal.payout('b-1')).toMatchObject({ message: null, said: null });
        // Its audit keeps the person's reason as the value it was given.
        expect((await journal.history('b-1')).at(-1)).toMatchObject({
          from: 'held',
          to: 'queued',
          reason: why,
        });
        const claimed = (await journal.claimToSend('w', 10, 60_000, rules)).map(
          (claim) => claim.orderId,
        );
        expect(claimed.sort()).toEqual(['a-1', 'b-1']);
      });

      it('lists each held row with the payout it repeats, and releases only the rows named', async () => {
        const journal = await open();
        await admitIn(journal, 'folha.csv', [request('a-1'), request('a-2', 2000)]);
        await admitIn(journal, 'folha_final.csv', [request('b-1'), request('b-2', 2000)]);
        const copy = (await journal.batches('folha_final.csv'))[0]?.id ?? 0;
        const held = await journal.heldRowsOfBatch(copy);
        expect(held.map((row) => [row.line, row.name, row.cents, row.reason])).toEqual([
          [2, 'Ana Souza', 1000, 'duplicate'],
          [3, 'Ana Souza', 2000, 'duplicate'],
        ]);
        expect(await journal.ownHeldRowsOfBatch(copy, 1)).toEqual(held.slice(0, 1));
        expect(await journal.ownHeldRowsOfBatch(copy, 5)).toEqual(held);
        expect(held[1]?.repeats).toMatchObject({
          orderId: 'a-2',
          fileName: 'folha.csv',
          line: 3,
          state: 'queued',
        });
        const why = { code: 'releasedNewBy', by: 'maria', repeats: 1 } as const;
        expect(await journal.releaseHolds(copy, 'duplicate', why, ['b-2'])).toEqual({
          rows: 1,
          cents: 2000,
        });
        expect((await journal.heldRowsOfBatch(copy)).map((row) => row.orderId)).toEqual(['b-1']);
      });

      it('a file a person turned down covers nothing', async () => {
        const journal = await open();
        const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'f1', arrived: true };
        const first = (await journal.batchForFile(file)).batchId;
        await journal.admitPayouts(first, [{ line: 2, request: request('a-1') }], rules);
        await journal.finishBatch(first, { ...batch, state: 'awaiting-approval' });
        expect(
          await journal.refuseBatch(first, { code: 'turnedDownBy', reason: 'wrong month' }),
        ).toBe(true);
        expect(await admitIn(journal, 'outra.csv', [request('b-1')])).toEqual(['new']);
      });
    });

    it('says when its newest audit entry was written, by its clock: none in a new journal', async () => {
      const journal = await open();
      expect(await journal.latestAt()).toBeUndefined();
      clock += 1_000;
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      });
      expect(await journal.latestAt()).toBe(clock);
    });

    it('claims queued rows in file order, marks them sending with a fence, and audits', async () => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        [3, 1, 2].map((n) => ({ line: n, request: request(`p-${n}`) })),
        { duplicateWindowMs: 0 },
      );
      const claimFrom = await leaseNow();
      const claims = await journal.claimToSend('worker-a', 2, 60_000);
      const claimTo = await leaseNow();
      expect(claims.map((c) => [c.orderId, c.state, c.attempts])).toEqual([
        ['p-1', 'sending', 1],
        ['p-2', 'sending', 1],
      ]);
      const p1 = await journal.payout('p-1');
      expect(p1).toMatchObject({ state: 'sending', leaseOwner: 'worker-a', lastSentAt: clock });
      expect(p1?.leaseUntil).toBeGreaterThanOrEqual(claimFrom + 60_000);
      expect(p1?.leaseUntil).toBeLessThanOrEqual(claimTo + 60_000);
      expect((await journal.claimToSend('worker-b', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'p-3',
      ]);
      expect(await journal.claimToSend('worker-b', 10, 60_000)).toEqual([]);
      expect((await journal.history('p-1')).at(-1)).toMatchObject({
        from: 'queued',
        to: 'sending',
        reason: { code: 'auditClaimed', owner: 'worker-a', attempt: 1 },
      });
    });

    it('two journals on one file never claim the same row', async () => {
      const a = await open();
      const b = await open();
      const id = await a.recordBatch(batch, []);
      await a.admitPayouts(
        id,
        Array.from({ length: 200 }, (_, i) => ({ line: i + 2, request: request(`p-${i}`) })),
        { duplicateWindowMs: 0 },
      );
      const seen: string[] = [];
      for (let round = 0; round < 30; round++) {
        seen.push(...(await a.claimToSend('a', 4, 60_000)).map((c) => c.orderId));
        seen.push(...(await b.claimToSend('b', 3, 60_000)).map((c) => c.orderId));
      }
      expect(seen).toHaveLength(200);
      expect(new Set(seen).size).toBe(200);
    });

    it('writes only with the current fence: a process whose lease was taken over writes nothing', async () => {
      const { journal } = await openWithOnePayout();
      const [mine] = await journal.claimToSend('old', 1, ENDED);
      const [taken] = await journal.claimAbandoned('new', 10, 60_000);
      expect(taken).toMatchObject({ orderId: 'p-1', state: 'unknown' });
      expect(await journal.claimAbandoned('newer', 10, 60_000)).toEqual([]); // lease still running
      expect(taken?.fence).toBeGreaterThan(mine?.fence ?? 0);
      expect(
        await journal.move('p-1', mine?.fence ?? 0, 'pending', 'late answer', { transactionId: 7 }),
      ).toBe(false);
      expect(await journal.payout('p-1')).toMatchObject({ state: 'unknown', transactionId: null });
      expect(
        await journal.move('p-1', taken?.fence ?? 0, 'pending', 'found by lookup', {
          transactionId: 7,
        }),
      ).toBe(true);
      expect((await journal.history('p-1')).map((h) => h.to)).toEqual([
        'queued',
        'sending',
        'unknown',
        'pending',
      ]);
    });

    it('writes the answers given with a claim in its commit, each only while its fence holds', async () => {
      const { journal } = await openWithPayouts(['p-1', 'p-2', 'p-3']);
      const [first, second] = await journal.claimToSend('a', 2, 60_000);
      const answer = (orderId: string, fence: number, transactionId: number) => ({
        orderId,
        fence,
        to: 'pending' as const,
        reason: 'created',
        details: { transactionId },
      });
      const next = await journal.claimToSend('a', 1, 60_000, undefined, [
        answer('p-1', first?.fence ?? 0, 7),
        // Its fence is not the row's: taken over meanwhile, written by no one.
        answer('p-2', (second?.fence ?? 0) + 1, 8),
      ]);
      expect(next.map((claim) => claim.orderId)).toEqual(['p-3']);
      expect(await journal.payout('p-1')).toMatchObject({ state: 'pending', transactionId: 7 });
      expect(await journal.payout('p-2')).toMatchObject({ state: 'sending', transactionId: null });
      expect((await journal.history('p-1')).map((h) => h.to)).toEqual([
        'queued',
        'sending',
        'pending',
      ]);
    });

    it('gives back claims never sent: queued again with the attempts they had, each only while its fence holds', async () => {
      const { journal, id } = await openWithPayouts(['p-1', 'p-2', 'p-3']);
      // p-1 was sent once and put back by a 429: it keeps that attempt.
      const [sentOnce] = await journal.claimToSend('a', 1, 60_000);
      await journal.move('p-1', sentOnce?.fence ?? 0, 'queued', 'HTTP 429');
      clock += 5_000;
      const claims = await journal.claimToSend('a', 3, ENDED);
      expect(claims.map((claim) => [claim.orderId, claim.attempts])).toEqual([
        ['p-1', 2],
        ['p-2', 1],
        ['p-3', 1],
      ]);
      // p-3 was taken over meanwhile (its lease ended): not ours to give back.
      const [taken] = await journal.claimAbandoned('b', 1, 60_000, { batchId: id, line: 3 });
      expect(taken).toMatchObject({ orderId: 'p-3', state: 'unknown' });
      const why = { code: 'auditClaimedNotSent', why: { code: 'runStopped' } } as const;
      expect(await journal.unclaim(claims, why)).toBe(2);
      expect(await journal.payout('p-1')).toMatchObject({
        state: 'queued',
        attempts: 1,
        leaseOwner: null,
        leaseUntil: null,
      });
      expect(await journal.payout('p-2')).toMatchObject({
        state: 'queued',
        attempts: 0,
        lastSentAt: null,
        leaseOwner: null,
      });
      expect(await journal.payout('p-3')).toMatchObject({ state: 'unknown', leaseOwner: 'b' });
      expect((await journal.history('p-2')).at(-1)).toMatchObject({
        from: 'sending',
        to: 'queued',
        // The engine's reason, kept as the value it gave.
        reason: why,
      });
      // Claimed again as any queued row, by anyone.
      expect(
        (await journal.claimToSend('c', 5, 60_000)).map((c) => [c.orderId, c.attempts]),
      ).toEqual([
        ['p-1', 2],
        ['p-2', 1],
      ]);
    });

    it("keeps a caller's reason in its words, even one that looks like a value", async () => {
      const { journal } = await openWithOnePayout();
      const [claim] = await journal.claimToSend('a', 1, 60_000);
      // A person's words may open with a brace; read back, they are still those words.
      const words = '{urgente} devolvido à fila';
      await journal.move('p-1', claim?.fence ?? 0, 'queued', words);
      expect((await journal.history('p-1')).at(-1)).toMatchObject({
        to: 'queued',
        reason: { code: 'english', text: words },
      });
    });

    it('refuses a move the transition table does not allow', async () => {
      const { journal } = await openWithOnePayout();
      const [claim] = await journal.claimToSend('a', 1, 60_000);
      const fence = claim?.fence ?? 0;
      expect(
        await journal.move('p-1', fence, 'paid', 'settled', {
          transactionId: 1,
          gatewayStatus: 'paid',
        }),
      ).toBe(true);
      await expect(async () => await journal.move('p-1', fence, 'queued', 'oops')).rejects.toThrow(
        /a move from paid to queued is not allowed/,
      );
      expect((await journal.payout('p-1'))?.state).toBe('paid');
    });

    it('refuses a same-state move where the table says the state cannot repeat', async () => {
      const { journal } = await openWithOnePayout();
      const [claim] = await journal.claimToSend('a', 1, 60_000);
      const fence = claim?.fence ?? 0;
      await expect(
        async () => await journal.move('p-1', fence, 'sending', 'again', {}, { release: false }),
      ).rejects.toThrow(/a move from sending to sending is not allowed/);
      expect(await journal.move('p-1', fence, 'unknown', 'no answer', {}, { release: false })).toBe(
        true,
      );
      // A lookup that did not settle it records what it saw, unaudited: not a move.
      expect(await journal.move('p-1', fence, 'unknown', 'not found', { notFound: 1 })).toBe(true);
      expect((await journal.payout('p-1'))?.notFound).toBe(1);
      expect((await journal.history('p-1')).map((h) => h.to)).toEqual([
        'queued',
        'sending',
        'unknown',
      ]);
    });

    it('keeps a sending mark across a reopen, and resolves it as unknown once its lease ends', async () => {
      const { journal } = await openWithOnePayout();
      await journal.claimToSend('crashed', 1, ENDED);
      await journal.close();
      opened.pop();
      const again = await open();
      expect((await again.payout('p-1'))?.state).toBe('sending');
      const [claim] = await again.claimAbandoned('next', 10, 30_000);
      expect(claim).toMatchObject({ orderId: 'p-1', state: 'unknown', attempts: 1 });
      const why = { code: 'auditResending', notFound: 2, secondsSinceSent: 31 } as const;
      const markFrom = await leaseNow();
      expect(await again.markResending(claim!, why, 30_000)).toBe(true);
      const markTo = await leaseNow();
      expect(await again.payout('p-1')).toMatchObject({ state: 'sending', attempts: 2 });
      expect((await again.history('p-1')).at(-1)).toMatchObject({
        from: 'unknown',
        to: 'sending',
        reason: why,
      });
      // Renewed for the re-send.
      expect((await again.payout('p-1'))?.leaseUntil).toBeGreaterThanOrEqual(markFrom + 30_000);
      expect((await again.payout('p-1'))?.leaseUntil).toBeLessThanOrEqual(markTo + 30_000);
      expect(await again.countsByState()).toEqual({ sending: { count: 1, cents: 1000 } });
    });

    it('a failed poll says why in the row until a poll gets through; other messages stay', async () => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        [1, 2].map((n) => ({ line: n + 1, request: request(`p-${n}`) })),
        { duplicateWindowMs: 0 },
      );
      const [first, second] = await journal.claimToSend('a', 2, 30_000);
      await journal.move('p-1', first!.fence, 'pending', 'created', { transactionId: 7 });
      await journal.move('p-2', second!.fence, 'pending', 'created', {
        transactionId: 8,
        message: 'description from the gateway',
      });
      const poll = async (orderId: string, details: Parameters<Journal['move']>[4]) => {
        const fence = (await journal.payout(orderId))!.fence;
        await journal.move(orderId, fence, 'pending', 'polled', details);
      };
      await poll('p-1', { message: 'last poll failed: no answer', pollFailed: true });
      expect((await journal.payout('p-1'))?.message).toBe('last poll failed: no answer');
      await poll('p-1', { gatewayStatus: 'pending', pollFailed: false });
      expect((await journal.payout('p-1'))?.message).toBeNull();
      await poll('p-2', { gatewayStatus: 'pending', pollFailed: false });
      expect((await journal.payout('p-2'))?.message).toBe('description from the gateway');
    });

    it('never marks a re-send on a claim whose lease has ended', async () => {
      const { journal } = await openWithOnePayout();
      await journal.claimToSend('crashed', 1, ENDED);
      const [claim] = await journal.claimAbandoned('slow', 10, ENDED);
      const why = { code: 'auditResending', notFound: 2, secondsSinceSent: 31 } as const;
      expect(await journal.markResending(claim!, why, 30_000)).toBe(false);
      expect(await journal.payout('p-1')).toMatchObject({ state: 'unknown', attempts: 1 });
    });

    it('a postback brings a poll forward: a pending row is due now and an older in-flight poll loses its fence; a row still sending keeps the request for when it is pending', async () => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        [1, 2].map((n) => ({ line: n + 1, request: request(`p-${n}`) })),
        { duplicateWindowMs: 0 },
      );
      const [first, second] = await journal.claimToSend('a', 2, 30_000);
      await journal.move('p-1', first!.fence, 'pending', 'created', {
        transactionId: 7,
        nextPollAt: clock + 60_000,
      });
      const [polling] = await journal.claimDue('a', 10, 30_000); // nothing due yet
      expect(polling).toBeUndefined();
      clock += 60_000;
      const [inFlight] = await journal.claimDue('a', 10, 30_000);
      expect(await journal.pollNow({ transactionId: 7 })).toBe(true);
      // The poll that started before the postback cannot write its (older) answer.
      expect(
        await journal.move('p-1', inFlight!.fence, 'pending', 'polled', {
          nextPollAt: clock + 60_000,
        }),
      ).toBe(false);
      expect((await journal.claimDue('a', 10, 30_000)).map((c) => c.orderId)).toEqual(['p-1']);

      expect(await journal.pollNow({ orderId: 'p-2' })).toBe(true); // still sending
      await journal.move('p-2', second!.fence, 'pending', 'created', {
        transactionId: 8,
        nextPollAt: clock + 60_000,
      });
      expect((await journal.payout('p-2'))?.state).toBe('pending');
      expect((await journal.claimDue('b', 10, 30_000)).map((c) => c.orderId)).toEqual(['p-2']);
      expect(await journal.pollNow({ transactionId: 999 })).toBe(false);
      expect(await journal.pollNow({ orderId: 'nobody' })).toBe(false);
    });

    it("a postback's poll is due on any host's clock: taken on one ten minutes ahead, due for one on time", async () => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      });
      const [claim] = await journal.claimToSend('a', 1, 30_000);
      await journal.move('p-1', claim!.fence, 'pending', 'created', {
        transactionId: 7,
        nextPollAt: clock + 60_000,
      });
      clock += 10 * 60_000;
      expect(await journal.pollNow({ transactionId: 7 })).toBe(true);
      clock -= 10 * 60_000;
      expect((await journal.claimDue('b', 10, 30_000)).map((c) => c.orderId)).toEqual(['p-1']);
    });

    it('tells who listens the orderId of each payout a postback brings forward, in turn, and nothing of one it does not name', async () => {
      const { journal } = await openWithPayouts(['p-1', 'p-2']);
      const [first] = await journal.claimToSend('a', 2, 30_000);
      await journal.move('p-1', first!.fence, 'pending', 'created', {
        transactionId: 7,
        nextPollAt: clock + 60_000,
      });
      const heard: (string | undefined)[] = [];
      const stop = await journal.onPollNow((orderId) => heard.push(orderId));
      expect(await journal.pollNow({ orderId: 'nobody' })).toBe(false);
      expect(await journal.pollNow({ transactionId: 7 })).toBe(true);
      expect(await journal.pollNow({ orderId: 'p-2' })).toBe(true); // still sending
      await waitFor('p-2 told', () => heard.includes('p-2'), 10_000);
      expect(heard).toEqual(['p-1', 'p-2']);

      await stop();
      const after: (string | undefined)[] = [];
      const stopAfter = await journal.onPollNow((orderId) => after.push(orderId));
      expect(await journal.pollNow({ transactionId: 7 })).toBe(true);
      await waitFor('p-1 told again', () => after.includes('p-1'), 10_000);
      expect(heard).toEqual(['p-1', 'p-2']); // stopped: told nothing more
      await stopAfter();
    });

    it('tells who listens, on a journal hosts share, when a batch opens: read whole or approved, not awaiting approval', async () => {
      const journal = await open();
      // One process at a time works on a SQLite journal: none other to tell.
      const shared = (await journal.describe()).kind === 'postgres';
      let told = 0;
      const stop = await journal.onRowsQueued(() => (told += 1));
      const approved = (
        await journal.batchForFile({ name: 'a.csv', nameKey: 'a', sha256: 'a1', arrived: true })
      ).batchId;
      await journal.finishBatch(approved, { ...batch, state: 'awaiting-approval' });
      expect(await journal.approveBatch(approved)).toBe(true);
      const read = (
        await journal.batchForFile({ name: 'b.csv', nameKey: 'b', sha256: 'b1', arrived: true })
      ).batchId;
      await journal.finishBatch(read, { ...batch, state: 'open' });
      // Heard in the order committed: once the last is, any before it would have been.
      if (shared) await waitFor('both told', () => told >= 2, 10_000);
      expect(told).toBe(shared ? 2 : 0);
      await stop();
    });

    it("brings a batch's polls forward to a time after each payout's own send: never later than planned, never another batch's", async () => {
      const journal = await open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        [1, 2, 3].map((n) => ({ line: n + 1, request: request(`p-${n}`) })),
        { duplicateWindowMs: 0 },
      );
      const other = await journal.recordBatch({ ...batch, sha256: 'cd' }, []);
      await journal.admitPayouts(other, [{ line: 2, request: request('q-1', 2000) }], {
        duplicateWindowMs: 0,
      });
      const sentAt = clock;
      const [p1, p2, p3] = await journal.claimToSend('a', 3, 30_000);
      clock += 1_000;
      const [q1] = await journal.claimToSend('a', 1, 30_000);
      for (const [claim, transactionId, nextPollAt] of [
        [p1, 1, sentAt + 60_000],
        [p2, 2, sentAt + 60_000],
        [p3, 3, sentAt + 5_000],
        [q1, 4, sentAt + 60_000],
      ] as const) {
        await journal.move(claim!.orderId, claim!.fence, 'pending', 'created', {
          transactionId,
          nextPollAt,
        });
      }
      clock = sentAt + 10_000;
      expect(await journal.pollBatchSooner(id, 30_000)).toBe(2); // p-3's poll is sooner
      expect((await journal.claimDue('b', 10, 60_000)).map((c) => c.orderId)).toEqual(['p-3']);
      clock = sentAt + 30_000;
      expect((await journal.claimDue('b', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'p-1',
        'p-2',
      ]);
      // Already past it: due now.
      expect(await journal.pollBatchSooner(other, 5_000)).toBe(1);
      expect((await journal.claimDue('b', 10, 60_000)).map((c) => c.orderId)).toEqual(['q-1']);
    });

    it('sends nothing from a batch still being admitted or held, and resumes an interrupted admission', async () => {
      const journal = await open();
      const id = await journal.recordBatch({ ...batch, state: 'admitting' }, []);
      const first = [2, 3].map((line) => ({ line, request: request(`p-${line}`) }));
      expect(
        (await journal.admitPayouts(id, first, { duplicateWindowMs: 0 })).map((a) => a.admission),
      ).toEqual(['new', 'new']);
      expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      // The process died here; the next one reads the file again into the same batch.
      const again = [2, 3, 4].map((line) => ({ line, request: request(`p-${line}`) }));
      expect(
        (await journal.admitPayouts(id, again, { duplicateWindowMs: 0 })).map((a) => a.admission),
      ).toEqual(['same', 'same', 'new']);
      expect(await everyLine(journal, id)).toEqual([]);
      // A held file's rows are never sent (it never opens: a new copy takes them over).
      const held = await journal.recordBatch({ ...batch, state: 'admitting' }, []);
      await journal.admitPayouts(held, [{ line: 2, request: request('h-2') }], {
        duplicateWindowMs: 0,
      });
      await journal.setBatchState(held, 'held');
      expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      await expect(async () => await journal.setBatchState(held, 'open')).rejects.toThrow(
        JournalError,
      );
      await journal.setBatchState(id, 'open');
      expect((await journal.claimToSend('a', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'p-2',
        'p-3',
        'p-4',
      ]);
      expect((await journal.history('p-2')).map((h) => h.to)).toEqual(['queued', 'sending']);
    });

    it('keeps its identity across a reopen, a high-water mark that only grows, and one gateway', async () => {
      const journal = await open();
      expect(journal.path).toEqual(expect.any(String));
      const identity = await journal.identity();
      expect(identity).toMatchObject({ recoverySince: null, recoveryReason: null });
      const described = await journal.describe();
      expect(described.schema).toBe(described.latestSchema);
      expect(described.address).toBe(journal.path);
      expect(restoreOf(described.kind, described.address)).toContain(described.address);
      const before = await journal.highWater();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      });
      expect(await journal.highWater()).toBeGreaterThan(before);
      expect(await journal.gatewayKind()).toBeUndefined();
      expect(await journal.bindGateway('sandbox')).toBe('sandbox');
      expect(await journal.bindGateway('configured')).toBe('sandbox');
      expect(await journal.claimToSend('a', 1, 60_000)).toHaveLength(1);
      await journal.sendable();
      const again = await open();
      expect(await again.identity()).toEqual(identity);
      expect(await again.gatewayKind()).toBe('sandbox');
    });

    it('in recovery, has every payout never sent from it looked up first, once', async () => {
      const { journal } = await openWithPayouts(['p-1', 'p-2', 'p-3']);
      expect(await journal.lookUpNeverSent()).toBe(0); // not recovering
      const [sent] = await journal.claimToSend('a', 1, 60_000);
      await journal.move('p-1', sent!.fence, 'pending', 'created', { transactionId: 1 });
      clock += 1_000;
      await journal.startRecovery('the journal was lost');
      expect(await journal.identity()).toMatchObject({
        recoverySince: clock,
        recoveryReason: 'the journal was lost',
      });
      expect(await journal.lookUpNeverSent()).toBe(2);
      expect(await journal.lookUpNeverSent()).toBe(0); // a replay changes nothing
      expect((await journal.history('p-2')).map((h) => h.to)).toEqual(['queued', 'unknown']);
      expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      expect((await journal.claimAbandoned('b', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'p-2',
        'p-3',
      ]);
      expect((await journal.payout('p-1'))?.state).toBe('pending');
    });

    it('opens a waiting batch once a person approves it; a second answer changes nothing', async () => {
      const journal = await open();
      const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'w1', arrived: true };
      const { batchId } = await journal.batchForFile(file);
      await journal.admitPayouts(batchId, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      });
      const total = { line: 3, kind: 'skipped' as const, orderId: null, column: null };
      await journal.recordLines(batchId, [{ ...total, message: 'a total line' }]);
      await journal.finishBatch(batchId, { ...batch, state: 'awaiting-approval' });
      await journal.setAwaitingName(batchId, 'folha.csv');
      expect(
        (await journal.batchesIn('awaiting-approval')).map((b) => [b.id, b.awaitingName]),
      ).toEqual([[batchId, 'folha.csv']]);
      expect((await journal.latestOfName('folha'))?.id).toBe(batchId);
      expect(await journal.latestOfName('outra')).toBeUndefined();
      expect(await everyLine(journal, batchId)).toEqual([{ ...total, message: 'a total line' }]);
      expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      expect(await journal.approveBatch(batchId)).toBe(true);
      const approved = { code: 'eventApproved', count: 1, cents: 1000 } as const;
      await journal.recordBatchEvent(batchId, 'approved', 'maria', approved);
      expect(await journal.approveBatch(batchId)).toBe(false);
      expect(await journal.refuseBatch(batchId, { code: 'turnedDownBy', reason: 'too late' })).toBe(
        false,
      );
      expect(await journal.batchEvents(batchId)).toEqual([
        {
          at: clock,
          event: 'approved',
          by: 'maria',
          detail: approved,
        },
      ]);
      expect((await journal.batch(batchId))?.state).toBe('open');
      expect((await journal.claimToSend('a', 10, 60_000)).map((c) => c.orderId)).toEqual(['p-1']);
      // The approvals from an instant on, of every batch: only approvals, oldest first.
      clock += 1_000;
      await journal.recordBatchEvent(batchId, 'refused', 'ana', {
        code: 'eventReason',
        reason: 'x',
      });
      await journal.recordBatchEvent(batchId, 'approved', 'bruno', approved);
      expect(await journal.approvalsSince(clock - 1_000)).toEqual([
        { batchId, at: clock - 1_000, event: 'approved', by: 'maria', detail: approved },
        { batchId, at: clock, event: 'approved', by: 'bruno', detail: approved },
      ]);
      expect((await journal.approvalsSince(clock)).map((event) => event.by)).toEqual(['bruno']);
      expect(await journal.approvalsSince(clock + 1)).toEqual([]);
    });

    it('holds a batch the balance does not cover, and queues it again once funded', async () => {
      const { journal, id } = await openWithPayouts(['p-1', 'p-2']);
      expect(await journal.queuedByBatch()).toEqual([{ batchId: id, cents: 2000, count: 2 }]);
      const why = {
        code: 'balanceShortfall' as const,
        cents: 2000,
        count: 2,
        feeCents: 0,
        availableCents: 500,
      };
      await journal.underfundBatch(id, why);
      expect(await journal.batch(id)).toMatchObject({ state: 'underfunded', heldBecause: why });
      expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      expect(await journal.queuedByBatch()).toEqual([{ batchId: id, cents: 2000, count: 2 }]);
      expect(await journal.holdsOfBatch(id)).toEqual([
        expect.objectContaining({ reason: 'balance', rows: 2, cents: 2000 }),
      ]);
      await journal.fundBatch(id);
      expect(await journal.holdsOfBatch(id)).toEqual([]);
      expect(await journal.batch(id)).toMatchObject({ state: 'open', heldBecause: null });
      expect(await journal.claimToSend('a', 10, 60_000)).toHaveLength(2);
      expect(await journal.queuedByBatch()).toEqual([]);
    });

    it('weighs a row as admission would, writing nothing', async () => {
      const rules = { duplicateWindowMs: 20 * 86_400_000 };
      const journal = await open();
      const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'k1', arrived: true };
      const { batchId } = await journal.batchForFile(file);
      await journal.admitPayouts(
        batchId,
        [
          { line: 2, request: request('a-1') },
          { line: 3, request: request('a-2', 2000) },
        ],
        rules,
      );
      await journal.finishBatch(batchId, { ...batch, state: 'open' });
      const [, second] = await journal.claimToSend('a', 2, 60_000);
      await journal.move(
        'a-2',
        second!.fence,
        'pending',
        'created',
        { transactionId: 2 },
        {
          release: false,
        },
      );
      await journal.move('a-2', second!.fence, 'failed', 'failed at the gateway');
      const written = await journal.highWater();
      expect(await journal.known('a-1')).toMatchObject({
        state: 'sending',
        batchId,
        line: 2,
        fileName: 'folha.csv',
      });
      expect(await journal.known('nobody')).toBeUndefined();
      expect(await journal.weigh(request('b-1', 3000), 'outra', rules)).toEqual({ kind: 'new' });
      expect(await journal.weigh(request('b-1'), 'outra', rules)).toMatchObject({
        kind: 'duplicate',
        covering: { orderId: 'a-1' },
      });
      expect(await journal.weigh(request('a-1'), 'outra', rules)).toMatchObject({
        kind: 'journaled',
        previous: { batchId, line: 2 },
      });
      expect(await journal.failedRepeatOf(request('b-2', 2000), rules)).toMatchObject({
        orderId: 'a-2',
        state: 'failed',
      });
      expect(await journal.failedRepeatOf(request('b-1'), rules)).toBeUndefined();
      expect(await journal.payout('b-1')).toBeUndefined();
      expect(await journal.highWater()).toBe(written);
    });

    it('weighs many rows at once exactly as it weighs each', async () => {
      const rules = { duplicateWindowMs: 20 * 86_400_000 };
      const journal = await open();
      const other = (orderId: string, value = 1000): CashOutRequest => ({
        ...request(orderId, value),
        cpfCnpj: '11144477735',
        pixKey: '11144477735',
      });
      const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'm1', arrived: true };
      const { batchId } = await journal.batchForFile(file);
      await journal.admitPayouts(
        batchId,
        [
          { line: 2, request: request('a-1'), reference: 'NF1' },
          { line: 3, request: request('a-2', 2000) },
          { line: 4, request: other('a-3', 3000) },
          { line: 5, request: other('a-4', 4000), reference: 'NF4' },
        ],
        rules,
      );
      await journal.finishBatch(batchId, { ...batch, state: 'open' });
      const claims = await journal.claimToSend('a', 4, 60_000);
      const fence = (orderId: string) => claims.find((c) => c.orderId === orderId)!.fence;
      await journal.move('a-2', fence('a-2'), 'pending', 'created', { transactionId: 2 });
      await journal.move('a-2', fence('a-2'), 'failed', 'failed at the gateway');
      // Repeats, covers by amount and by reference, a failed repeat, new rows, two documents.
      const rows = [
        { request: request('a-1') },
        { request: other('a-3', 3000) },
        { request: request('b-1') },
        { request: request('b-2', 1000), reference: 'NF1' },
        { request: request('b-3', 5000), reference: 'NF1' },
        { request: request('b-4', 1000), reference: 'NF9' },
        { request: request('b-5', 2000) },
        { request: other('b-6', 3000) },
        { request: other('b-7', 4000), reference: 'NF4' },
        { request: other('b-8', 4000) },
        { request: other('b-9', 9000) },
      ];
      for (const nameKey of ['folha', 'outra']) {
        const each = [];
        for (const { request: row, reference } of rows) {
          const admission = await journal.weigh(row, nameKey, rules, reference);
          const failed =
            admission.kind === 'new' ? await journal.failedRepeatOf(row, rules) : undefined;
          each.push(failed ? { admission, failed } : { admission });
        }
        expect(each.map(({ admission, failed }) => failed?.orderId ?? admission.kind)).toEqual([
          'journaled',
          'journaled',
          'duplicate',
          'duplicate',
          'duplicate',
          'new',
          'a-2',
          'duplicate',
          'duplicate',
          'duplicate',
          'new',
        ]);
        expect(await journal.weighMany(rows, nameKey, rules)).toEqual(each);
      }
    });

    describe('corrections', () => {
      const rules = { duplicateWindowMs: 20 * 86_400_000, sameNameNewBatchAfterMs: null };
      const fileOf = async (journal: Journal, name: string, rows: CashOutRequest[]) => {
        const file = {
          name: `${name}.csv`,
          nameKey: name,
          sha256: `${name}-${clock}`,
          arrived: true,
        };
        const { batchId } = await journal.batchForFile(file);
        await journal.admitPayouts(
          batchId,
          rows.map((r, i) => ({ line: i + 2, request: r })),
          rules,
        );
        return batchId;
      };

      it('holds a repeat of a payout that failed within the window, journaled before it, as failedRepeatOf says', async () => {
        const journal = await open();
        const first = await fileOf(journal, 'folha', [request('a-1', 2000)]);
        await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
        const [claim] = await journal.claimToSend('a', 1, 60_000);
        await journal.move('a-1', claim!.fence, 'pending', 'created', { transactionId: 1 });
        // Pending for weeks, then failed: its own time is the failure's, within the window.
        clock += 25 * 86_400_000;
        await journal.move('a-1', claim!.fence, 'failed', 'failed at the gateway');
        clock += 2 * 86_400_000;
        expect(await journal.failedRepeatOf(request('x-1', 2000), rules)).toMatchObject({
          orderId: 'a-1',
        });
        const again = await fileOf(journal, 'outra', [request('b-1', 2000)]);
        await journal.finishBatch(again, { ...batch, state: 'open' }, undefined, rules);
        expect(await journal.payout('b-1')).toMatchObject({
          state: 'held',
          said: { code: 'heldFailedBefore', orderId: 'a-1' },
        });
        expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      });

      it('freezes an earlier batch of its name while a file repeating it waits for a person', async () => {
        const journal = await open();
        const first = await fileOf(journal, 'folha', [request('a-1')]);
        await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
        clock += 2 * 86_400_000; // later than a corrected copy
        const copy = await fileOf(journal, 'folha', [request('b-1')]);
        await journal.finishBatch(copy, { ...batch, state: 'open' }, undefined, rules);
        expect(await journal.frozenFor(copy)).toEqual([
          { batchId: first, fileName: 'folha.csv', rows: 1, cents: 1000 },
        ]);
        expect(await journal.claimToSend('a', 10, 60_000)).toEqual([]);
      });

      it('a copy a person says corrects a batch: covers what it paid, takes over what it never sent, until turned down', async () => {
        const journal = await open();
        // Two people: one paid, one never sent.
        const other = (orderId: string) => ({
          ...request(orderId, 2000),
          cpfCnpj: '11144477735',
          pixKey: '11144477735',
        });
        const first = await fileOf(journal, 'folha', [request('a-1'), other('a-2')]);
        await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
        const [paid] = await journal.claimToSend('a', 1, 60_000);
        await journal.move(
          'a-1',
          paid!.fence,
          'pending',
          'created',
          { transactionId: 1 },
          {
            release: false,
          },
        );
        await journal.move('a-1', paid!.fence, 'paid', 'settled', { gatewayStatus: 'paid' });
        const copy = await fileOf(journal, 'outra', [request('b-1'), other('b-2')]);
        await journal.finishBatch(copy, { ...batch, state: 'awaiting-approval' }, undefined, rules);
        const linked = { code: 'linkedCopyBy', by: 'maria', batchId: first } as const;
        expect(await journal.correctBatch(copy, first, linked, rules)).toBe(1);
        expect((await journal.rowTotalsOfBatch(copy)).rows).toEqual({ covered: 1, queued: 1 });
        expect((await journal.payout('a-2'))?.state).toBe('superseded');
        expect((await journal.supersededBy(first)).map((copied) => copied.id)).toEqual([copy]);
        const turnedDown = { code: 'turnedDownBy', reason: 'wrong copy' } as const;
        expect(await journal.refuseBatch(copy, turnedDown)).toBe(true);
        expect(await journal.supersededBy(first)).toEqual([]);
        expect((await journal.payout('a-2'))?.state).toBe('queued');
        // Its audit keeps both reasons as values: the link, then the turning down.
        expect((await journal.history('a-2')).slice(-2).map((entry) => entry.reason)).toEqual([
          { code: 'auditTakenOver', why: linked, by: 'b-2' },
          { code: 'auditGivenBack', why: { code: 'auditCopyTurnedDown', why: turnedDown } },
        ]);
      });

      it('a row a copy covered is held for a person once its cover fails, and its done batch opens again', async () => {
        const journal = await open();
        const first = await fileOf(journal, 'folha', [request('a-1')]);
        await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
        const [claim] = await journal.claimToSend('a', 1, 60_000);
        await journal.move(
          'a-1',
          claim!.fence,
          'pending',
          'created',
          { transactionId: 1 },
          {
            release: false,
          },
        );
        const copy = await fileOf(journal, 'outra', [request('b-1')]);
        await journal.finishBatch(copy, { ...batch, state: 'awaiting-approval' }, undefined, rules);
        const linked = { code: 'linkedCopyBy', by: 'maria', batchId: first } as const;
        await journal.correctBatch(copy, first, linked, rules);
        expect(await journal.payout('b-1')).toMatchObject({ state: 'covered' });
        await journal.setBatchState(copy, 'done');
        await journal.move('a-1', claim!.fence, 'failed', 'failed at the gateway');
        expect(await journal.payout('b-1')).toMatchObject({
          state: 'held',
          said: { code: 'heldFailedBefore', orderId: 'a-1' },
        });
        expect((await journal.history('b-1')).at(-1)).toMatchObject({
          from: 'covered',
          to: 'held',
          reason: { code: 'auditCoverEnded', orderId: 'a-1', state: 'failed' },
        });
        expect((await journal.batch(copy))?.state).toBe('open');
      });

      it('a row a copy covered is held for a person once its cover ends in conflict, never counted paid', async () => {
        const journal = await open();
        const first = await fileOf(journal, 'folha', [request('a-1')]);
        await journal.finishBatch(first, { ...batch, state: 'open' }, undefined, rules);
        const [claim] = await journal.claimToSend('a', 1, 60_000);
        await journal.move(
          'a-1',
          claim!.fence,
          'unknown',
          'unclear answer',
          {},
          { release: false },
        );
        const copy = await fileOf(journal, 'outra', [request('b-1')]);
        await journal.finishBatch(copy, { ...batch, state: 'awaiting-approval' }, undefined, rules);
        const linked = { code: 'linkedCopyBy', by: 'maria', batchId: first } as const;
        await journal.correctBatch(copy, first, linked, rules);
        expect(await journal.payout('b-1')).toMatchObject({ state: 'covered' });
        await journal.setBatchState(copy, 'done');
        // The lookup finds another transaction under a-1: it was not our payout.
        await journal.move('a-1', claim!.fence, 'conflict', 'another transaction');
        expect(await journal.payout('b-1')).toMatchObject({
          state: 'held',
          said: { code: 'heldCoverConflict', orderId: 'a-1', newFile: 'outra.csv' },
        });
        expect((await journal.history('b-1')).at(-1)).toMatchObject({
          from: 'covered',
          to: 'held',
          reason: { code: 'auditCoverEnded', orderId: 'a-1', state: 'conflict' },
        });
        expect((await journal.batch(copy))?.state).toBe('open');
        expect((await journal.rowTotalsOfBatch(copy)).rows).toEqual({ held: 1 });
      });
    });

    it("says a batch's payouts pending since when, and the batches a refund shows in", async () => {
      const { journal, id } = await openWithPayouts(['p-1', 'p-2']);
      const sentAt = clock;
      const claims = await journal.claimToSend('a', 2, 60_000);
      for (const [i, claim] of claims.entries()) {
        await journal.move(
          claim.orderId,
          claim.fence,
          'pending',
          'created',
          {
            transactionId: i + 1,
          },
          { release: false },
        );
      }
      expect(await journal.pendingSentBefore(id, sentAt - 1)).toBeUndefined();
      expect(await journal.pendingSentBefore(id, sentAt)).toEqual({
        rows: 2,
        oldestSentAt: sentAt,
        oldestOrderId: 'p-1',
      });
      clock += 1_000;
      const since = clock;
      const [p1] = claims;
      await journal.move('p-1', p1!.fence, 'paid', 'settled', {}, { release: false });
      expect(await journal.batchesShowingRefundedSince(since)).toEqual([]);
      await journal.move('p-1', p1!.fence, 'refunded', 'came back');
      expect(await journal.batchesShowingRefundedSince(since)).toEqual([id]);
      expect(await journal.batchesShowingRefundedSince(clock + 1)).toEqual([]);
    });

    it("lists a batch's payees a page at a time, as its result lines have them", async () => {
      const rules = { duplicateWindowMs: 86_400_000 };
      const journal = await open();
      const first = await journal.recordBatch(batch, []);
      await journal.admitPayouts(first, [{ line: 2, request: request('a-1') }], rules);
      const id = await journal.recordBatch({ ...batch, fileName: 'outro.csv' }, [
        { line: 3, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
      ]);
      const other = { name: 'Bruno Lima', email: 'bruno@example.com', phone: '+5511912345678' };
      await journal.admitPayouts(
        id,
        [
          { line: 2, request: request('b-1') },
          { line: 4, request: { ...request('b-2', 2500), pixKeyType: 2, pixKey: 'b@x.com' } },
          { line: 5, request: { ...request('b-3', 700), cpfCnpj: '11144477735', person: other } },
        ],
        rules,
      );
      const payees = [
        ...(await journal.payeesOfBatch(id, 0, 2)),
        ...(await journal.payeesOfBatch(id, 4, 2)),
      ];
      expect(payees.map((payee) => [payee.line, payee.state, payee.name, payee.pixKey])).toEqual([
        [2, 'held', 'Ana Souza', '52998224725'],
        [4, 'queued', 'Ana Souza', 'b@x.com'],
        [5, 'queued', 'Bruno Lima', '52998224725'],
      ]);
      const results = (await journal.resultEntries(id, 0, 10)).flatMap(({ line, payout }) =>
        payout === null
          ? []
          : [
              {
                line,
                name: payout.request.person.name,
                cpfCnpj: payout.request.cpfCnpj,
                pixKey: payout.request.pixKey,
                valueCents: payout.request.value,
                state: payout.state,
                message: payout.message,
                said: payout.said,
              },
            ],
      );
      expect(payees).toEqual(results);
      expect(await journal.payeesOfBatch(id, 5, 2)).toEqual([]);
    });

    it("gives a batch's result lines a page at a time, each with its payout and the one it repeats, and its totals in cents", async () => {
      const rules = { duplicateWindowMs: 86_400_000 };
      const { journal } = await openWithOnePayout();
      const [claim] = await journal.claimToSend('a', 1, 60_000);
      await journal.move('p-1', claim!.fence, 'pending', 'created', { transactionId: 1 });
      const second = await journal.recordBatch({ ...batch, fileName: 'outro.csv' }, [
        { line: 3, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
      ]);
      await journal.admitPayouts(
        second,
        [
          { line: 2, request: request('q-1') },
          { line: 4, request: request('q-2', 2000) },
          { line: 5, request: request('p-1') },
        ],
        rules,
      );
      const entry = (kind: string, line: number, orderId: string | null) => ({
        line,
        kind,
        orderId,
        note: null,
        column: null,
        name: null,
        valueCents: null,
        valueWritten: null,
        cpfCnpj: null,
        pixKeyType: null,
        pixKey: null,
        said: null,
        cover: null,
        repeatsState: null,
      });
      const [held, invalid, queued] = await journal.resultEntries(second, 0, 3);
      expect(held).toEqual({
        ...entry('payout', 2, 'q-1'),
        payout: expect.objectContaining({ orderId: 'q-1', state: 'held', valueCents: 1000 }),
        repeatsState: 'pending',
      });
      expect(invalid).toEqual({
        ...entry('invalid', 3, null),
        payout: null,
        note: 'is empty',
        column: 'name',
      });
      expect(queued).toEqual({
        ...entry('payout', 4, 'q-2'),
        // What the line shows of the request: its payee, key and amount, not the contacts.
        payout: expect.objectContaining({
          orderId: 'q-2',
          state: 'queued',
          request: (({ value, pixKeyType, pixKey, cpfCnpj, person }) => ({
            value,
            pixKeyType,
            pixKey,
            cpfCnpj,
            person: { name: person.name },
          }))(request('q-2', 2000)),
        }),
      });
      expect(await journal.resultEntries(second, 4, 3)).toEqual([
        {
          ...entry('held', 5, 'p-1'),
          payout: null,
          note: expect.stringContaining('orderId p-1 is already journaled from payroll.csv'),
          name: 'Ana Souza',
          valueCents: 1000,
          said: expect.objectContaining({ code: 'heldJournaled', state: 'pending' }),
        },
      ]);
      expect(await journal.resultEntries(second, 5, 3)).toEqual([]);
      expect(await journal.rowTotalsOfBatch(second)).toEqual({
        rows: { held: 2, queued: 1, invalid: 1 },
        cents: { held: 1000, queued: 2000, invalid: 0 },
      });
    });

    it('a replayed give-back or answer changes nothing more; a call that fails writes nothing', async () => {
      const { journal, id } = await openWithPayouts(['p-1', 'p-2', 'p-3']);
      const [first, second] = await journal.claimToSend('a', 2, 60_000);
      const why = { code: 'auditClaimTooOld' } as const;
      expect(await journal.unclaim([first!], why)).toBe(1);
      expect(await journal.unclaim([first!], why)).toBe(0);
      expect((await journal.history('p-1')).map((h) => h.to)).toEqual([
        'queued',
        'sending',
        'queued',
      ]);
      const answer = {
        orderId: 'p-2',
        fence: second!.fence,
        to: 'pending' as const,
        reason: 'created',
        details: { transactionId: 2 },
      };
      expect(await journal.moveMany([answer])).toEqual([true]);
      await journal.moveMany([answer]);
      expect((await journal.history('p-2')).map((h) => h.to)).toEqual([
        'queued',
        'sending',
        'pending',
      ]);
      expect(await journal.payout('p-2')).toMatchObject({ state: 'pending', transactionId: 2 });

      const [again] = await journal.claimToSend('a', 1, 60_000);
      const written = await journal.highWater();
      const notAllowed = { ...answer, to: 'queued' as const, reason: 'oops' };
      const created = { ...answer, orderId: 'p-1', fence: again!.fence };
      await expect(async () => await journal.moveMany([created, notAllowed])).rejects.toThrow(
        JournalError,
      );
      await expect(
        async () => await journal.claimToSend('a', 1, 60_000, undefined, [created, notAllowed]),
      ).rejects.toThrow(JournalError);
      expect(await journal.highWater()).toBe(written);
      expect(await journal.countsByState()).toEqual({
        sending: { count: 1, cents: 1000 },
        pending: { count: 1, cents: 1000 },
        queued: { count: 1, cents: 1000 },
      });
      // Of the states asked for only, none of those with no payout.
      expect(await journal.countsByState(['pending', 'unknown', 'queued'])).toEqual({
        pending: { count: 1, cents: 1000 },
        queued: { count: 1, cents: 1000 },
      });
      // Of one batch: another's payouts are not its.
      const other = await openWithPayouts(['q-1']);
      expect(await journal.countsOfBatch(id)).toEqual({
        sending: { count: 1 },
        pending: { count: 1 },
        queued: { count: 1 },
      });
      expect(await other.journal.countsOfBatch(other.id)).toEqual({ held: { count: 1 } });
    });

    describe('at once: journals in threads of their own on one store, each call as if alone', () => {
      /** Calls `claim` for `owner` until it claims nothing; every orderId it claimed. */
      const drain = async (claim: (after: string) => Promise<{ orderId: string }[]>) => {
        const taken: string[] = [];
        for (;;) {
          const claims = await claim(taken.at(-1) ?? '');
          if (claims.length === 0) return taken;
          taken.push(...claims.map((c) => c.orderId));
        }
      };
      const orderIds = (count: number) => Array.from({ length: count }, (_, i) => `p-${i}`);

      it.each([2, 8])(
        '%i journals claiming 10,000 rows at once claim each once, and lose none',
        async (count) => {
          const { journal } = await openWithPayouts(orderIds(10_000));
          const threads = await openThreads(count);
          const taken = await Promise.all(
            threads.map((thread, i) =>
              drain(() => thread.call('claimToSend', [`owner-${i}`, 100, 60_000], clock)),
            ),
          );
          const all = taken.flat();
          expect(all).toHaveLength(10_000);
          expect(new Set(all).size).toBe(10_000);
          expect(await journal.countsByState()).toEqual({
            sending: { count: 10_000, cents: 10_000_000 },
          });
        },
      );

      it('two runs reading one file at once make one batch, and one payout of each row', async () => {
        const journal = await open();
        const threads = await openThreads(2);
        const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'f1', arrived: true };
        const rows = [2, 3].map((line) => ({ line, request: request(`p-${line}`) }));
        const read = async (thread: JournalThread) => {
          const made = await thread.call('batchForFile', [file], clock);
          const admitted = await thread.call(
            'admitPayouts',
            [made.batchId, rows, { duplicateWindowMs: 0 }],
            clock,
          );
          return { made, admissions: admitted.map((a) => a.admission) };
        };
        const [a, b] = await Promise.all(threads.map(read));
        expect(a?.made.batchId).toBe(b?.made.batchId);
        expect([a?.made.kind, b?.made.kind].sort()).toEqual(['new', 'resume']);
        expect([...(a?.admissions ?? []), ...(b?.admissions ?? [])].sort()).toEqual([
          'new',
          'new',
          'same',
          'same',
        ]);
        expect(await journal.batchesOf('f1')).toHaveLength(1);
        expect(await journal.countsByState()).toEqual({ queued: { count: 2, cents: 2000 } });
      });

      it('two files journaling one orderId at once: one payout, the other file a held line', async () => {
        const journal = await open();
        const threads = await openThreads(2);
        const admitted = await Promise.all(
          threads.map(async (thread, i) => {
            const file = { name: `f-${i}.csv`, nameKey: `f-${i}`, sha256: `s-${i}`, arrived: true };
            const { batchId } = await thread.call('batchForFile', [file], clock);
            const [one] = await thread.call(
              'admitPayouts',
              [batchId, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 }],
              clock,
            );
            return { batchId, admission: one?.admission };
          }),
        );
        expect(admitted.map((a) => a.admission).sort()).toEqual(['journaled', 'new']);
        const winner = admitted.find((a) => a.admission === 'new');
        const loser = admitted.find((a) => a.admission === 'journaled');
        expect((await journal.payout('p-1'))?.batchId).toBe(winner?.batchId);
        expect(await everyLine(journal, loser?.batchId ?? 0)).toEqual([
          expect.objectContaining({ line: 2, kind: 'held', orderId: 'p-1' }),
        ]);
        expect(await journal.countsByState()).toEqual({ queued: { count: 1, cents: 1000 } });
      });

      it('two owners claiming two copies of one payment at once: one is sent, the other held', async () => {
        const journal = await open();
        for (const [fileName, orderId] of [
          ['folha.csv', 'a-1'],
          ['folha_final.csv', 'b-1'],
        ] as const) {
          const id = await journal.recordBatch({ ...batch, fileName }, []);
          // Admitted as if no rule had seen the other (a window of 0): the claim must see it.
          await journal.admitPayouts(id, [{ line: 2, request: request(orderId) }], {
            duplicateWindowMs: 0,
          });
        }
        const rules = { duplicateWindowMs: 86_400_000 };
        const threads = await openThreads(2);
        const taken = await Promise.all(
          threads.map((thread, i) =>
            drain(() => thread.call('claimToSend', [`owner-${i}`, 1, 60_000, rules], clock)),
          ),
        );
        expect(taken.flat()).toHaveLength(1);
        expect(await journal.countsByState()).toEqual({
          sending: { count: 1, cents: 1000 },
          held: { count: 1, cents: 1000 },
        });
      });

      it('a person approving and another turning a waiting batch down at once: one answer wins', async () => {
        const journal = await open();
        const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'w1', arrived: true };
        const { batchId } = await journal.batchForFile(file);
        await journal.admitPayouts(batchId, [{ line: 2, request: request('p-1') }], {
          duplicateWindowMs: 0,
        });
        await journal.finishBatch(batchId, { ...batch, state: 'awaiting-approval' });
        const [approve, refuse] = await openThreads(2);
        const answers = await Promise.all([
          approve!.call('approveBatch', [batchId], clock),
          refuse!.call(
            'refuseBatch',
            [batchId, { code: 'turnedDownBy', reason: 'wrong month' }],
            clock,
          ),
        ]);
        expect(answers.filter(Boolean)).toHaveLength(1);
        const [approved] = answers;
        expect((await journal.batch(batchId))?.state).toBe(approved ? 'open' : 'refused');
        expect((await journal.payout('p-1'))?.state).toBe(approved ? 'queued' : 'held');
      });

      it('a claim given back as its lease is taken over: queued or taken, never both', async () => {
        const { journal } = await openWithOnePayout();
        const [mine] = await journal.claimToSend('old', 1, ENDED);
        const [old, next] = await openThreads(2);
        const [given, taken] = await Promise.all([
          old!.call('unclaim', [[mine!], { code: 'auditClaimTooOld' }], clock),
          next!.call('claimAbandoned', ['new', 10, 30_000], clock),
        ]);
        expect(given + taken.length).toBe(1);
        expect(await journal.payout('p-1')).toMatchObject(
          given === 1
            ? { state: 'queued', leaseOwner: null }
            : { state: 'unknown', leaseOwner: 'new' },
        );
      });

      /** Two owners, each in a thread, claiming at once with `claim` until it claims nothing. */
      const claimTogether = async (
        claim: (thread: JournalThread, owner: string, after: string) => Promise<Claim[]>,
      ) => {
        const threads = await openThreads(2);
        const taken = await Promise.all(
          threads.map((thread, i) => drain((after) => claim(thread, `owner-${i}`, after))),
        );
        const all = taken.flat();
        expect(new Set(all).size).toBe(all.length);
        return all.sort();
      };
      /** 20 rows sent and answered `to`, with a transaction each, polls due now. */
      const openAnswered = async (to: 'pending' | 'paid') => {
        const ids = orderIds(20);
        const { journal } = await openWithPayouts(ids);
        const claims = await journal.claimToSend('sender', 20, 60_000);
        const created = await journal.moveMany(
          claims.map((claim, i) => ({
            orderId: claim.orderId,
            fence: claim.fence,
            to: 'pending' as const,
            reason: 'created',
            details: { transactionId: i + 1, nextPollAt: clock },
            release: to === 'pending',
          })),
        );
        expect(created.every(Boolean)).toBe(true);
        if (to === 'paid') {
          const paid = await journal.moveMany(
            claims.map((claim) => ({
              orderId: claim.orderId,
              fence: claim.fence,
              to: 'paid' as const,
              reason: 'settled',
              details: { gatewayStatus: 'paid' },
            })),
          );
          expect(paid.every(Boolean)).toBe(true);
        }
        return { journal, ids: ids.sort() };
      };

      it('claims rows a gone process left, by two owners at once: each row once', async () => {
        const ids = orderIds(20);
        const { journal } = await openWithPayouts(ids);
        await journal.claimToSend('crashed', 20, ENDED);
        expect(
          await claimTogether((thread, owner) =>
            thread.call('claimAbandoned', [owner, 3, 60_000], clock),
          ),
        ).toEqual(ids.sort());
        expect(await journal.countsByState()).toEqual({ unknown: { count: 20, cents: 20_000 } });
      });

      it('claims due polls by two owners at once: each row once', async () => {
        const { journal, ids } = await openAnswered('pending');
        expect(await journal.nextPollAt()).toBe(clock);
        expect(
          await claimTogether((thread, owner) =>
            thread.call('claimDue', [owner, 3, 60_000], clock),
          ),
        ).toEqual(ids);
      });

      it('claims paid payouts to read again by two owners at once: each row once', async () => {
        const { journal, ids } = await openAnswered('paid');
        expect(await journal.nextPollAt()).toBeUndefined();
        expect(
          await claimTogether((thread, owner, after) =>
            thread.call('claimPaid', [owner, 3, 60_000, 0, after], clock),
          ),
        ).toEqual(ids);
      });

      it('two processes taking the lock at once: one holds it, the other is told who', async () => {
        const journal = await open();
        const threads = await openThreads(2);
        const me = (holder: string, pid: number) => ({ holder, host: 'h', pid, command: 'run' });
        const answers = await Promise.all(
          threads.map((thread, i) =>
            thread.call('takeLock', ['home', me(`p-${i}`, i + 1), 60_000, () => true], clock),
          ),
        );
        const won = answers.findIndex((answer) => answer.taken);
        const lost = answers.find((answer) => !answer.taken);
        expect(answers.filter((answer) => answer.taken)).toHaveLength(1);
        expect(lost).toMatchObject({
          heldBy: { holder: `p-${won}`, pid: won + 1, command: 'run' },
        });
        const loser = `p-${1 - won}`;
        expect(await journal.renewLock('home', loser)).toBe(false);
        expect(await journal.renewLock('home', `p-${won}`)).toBe(true);
        await journal.releaseLock('home', loser); // not its lock: nothing changes
        expect(await journal.takeLock('home', me(loser, 9), 60_000, () => true)).toMatchObject({
          taken: false,
        });
        await journal.releaseLock('home', `p-${won}`);
        expect(await journal.takeLock('home', me(loser, 9), 60_000, () => true)).toEqual({
          taken: true,
        });
        // A holder whose heartbeat is older than staleMs is gone, or one on this host not running.
        expect(await journal.takeLock('home', me('late', 3), ENDED, () => true)).toEqual({
          taken: true,
        });
        expect(await journal.takeLock('home', me('next', 4), 60_000, () => false)).toEqual({
          taken: true,
        });
      });

      it('says the hosts seen lately, the locks they hold and the rows under their leases', async () => {
        const { journal } = await openWithPayouts(['p-1', 'p-2', 'p-3']);
        const holder = 'h-1:7:abc';
        const me = { holder, host: 'h-1', pid: 7, command: 'watch' };
        expect(await journal.takeLock('home', me, 60_000, () => true)).toEqual({ taken: true });
        const claimFrom = await leaseNow();
        expect(await journal.claimToSend(holder, 2, 60_000)).toHaveLength(2);
        const claimTo = await leaseNow();
        // A lease already over is no row under a lease.
        expect(await journal.claimToSend('h-2:8:def', 1, ENDED)).toHaveLength(1);
        clock += 1_000;
        const renewFrom = await leaseNow();
        expect(await journal.renewLock('home', holder)).toBe(true);
        const renewTo = await leaseNow();
        const seen = await journal.hostsSeen(600_000);
        const seenAt = seen.hosts[0]?.seenAt ?? 0;
        expect(seenAt).toBeGreaterThanOrEqual(renewFrom);
        expect(seenAt).toBeLessThanOrEqual(renewTo);
        expect(seen.now).toBeGreaterThanOrEqual(seenAt);
        expect(seen).toMatchObject({
          hosts: [{ host: 'h-1', seenAt, clockOffsetMs: null }],
          locks: [{ name: 'home', holder, host: 'h-1', heartbeatAt: seenAt }],
          leases: [{ owner: holder, rows: 2 }],
        });
        expect(seen.leases[0]?.until).toBeGreaterThanOrEqual(claimFrom + 60_000);
        expect(seen.leases[0]?.until).toBeLessThanOrEqual(claimTo + 60_000);
        // Once the store's clock is past the sighting, a window that ends there leaves it out:
        // the lock is still said, its holder no longer seen.
        clock += 1;
        for (let i = 0; i < 1000 && (await leaseNow()) <= seenAt; i++) await tick();
        expect(await journal.hostsSeen(0)).toMatchObject({
          hosts: [],
          locks: [{ name: 'home', holder, host: 'h-1', heartbeatAt: seenAt }],
        });
      });

      it("measures a host's clock against the store's and keeps it as the host's sight, where hosts share the store", async () => {
        const journal = await open();
        const before = await leaseNow();
        const reading = await journal.clockOffset('h-3', () => clock, Number.MAX_SAFE_INTEGER);
        const offset = reading && 'offsetMs' in reading ? reading.offsetMs : reading;
        const after = await leaseNow();
        // A store that judges by the command's clock is one host's own: nothing to measure.
        if (factory.leaseNow === undefined) {
          expect(offset).toBeNull();
          return;
        }
        const seen = await journal.hostsSeen(600_000);
        // The store's moment lies within the round trip: the offset is the host's clock minus it.
        expect(offset).toBeLessThanOrEqual(clock - before);
        expect(offset).toBeGreaterThanOrEqual(clock - after);
        expect(seen.hosts).toEqual([
          {
            host: 'h-3',
            seenAt: expect.any(Number) as number,
            clockOffsetMs: offset,
            // The command's clock stood still over the reading: its round trip took none of it.
            clockRoundTripMs: 0,
          },
        ]);
      });

      it('a holder on another host is judged by its heartbeat alone: its pid means nothing here', async () => {
        const journal = await open();
        const on = (host: string, holder: string) => ({ holder, host, pid: 7, command: 'run' });
        const gone = () => false;
        expect(await journal.takeLock('home', on('pay-1', 'a'), 60_000, gone)).toEqual({
          taken: true,
        });
        // pid 7 is not running here, but it is pay-1's pid: its fresh heartbeat holds.
        expect(await journal.takeLock('home', on('pay-2', 'b'), 60_000, gone)).toMatchObject({
          taken: false,
          heldBy: { holder: 'a', host: 'pay-1', pid: 7 },
        });
        clock += 30_000;
        expect(await journal.renewLock('home', 'a')).toBe(true);
        clock += 59_000;
        expect(await journal.takeLock('home', on('pay-2', 'b'), 60_000, gone)).toMatchObject({
          taken: false,
        });
        // Silent for staleMs: gone, whatever its pid.
        expect(await journal.takeLock('home', on('pay-2', 'b'), ENDED, gone)).toEqual({
          taken: true,
        });
        // On its own host, a holder whose pid is not running is gone at once.
        expect(await journal.takeLock('home', on('pay-2', 'c'), 60_000, gone)).toEqual({
          taken: true,
        });
      });

      it('two hosts claiming one file at once: one has it while its lock lives, then the other', async () => {
        const journal = await open();
        // A journal hosts share (PostgreSQL); SQLite has one host, which every claim is given.
        const shared = (await journal.describe()).kind === 'postgres';
        const threads = await openThreads(2);
        const host = (i: number) => ({ holder: `p-${i}`, host: `h${i}` });
        // Each host's lock, as lockHome takes it: a claim lives as long as its holder's lock.
        for (const i of [0, 1]) {
          const me = { ...host(i), pid: i + 1, command: 'watch' };
          expect(await journal.takeLock(`home@h${i}`, me, 60_000, () => true)).toEqual({
            taken: true,
          });
        }
        const file = { kind: 'file', name: 'folha.csv', size: 120, sha256: 'ab12' } as const;
        const answers = await Promise.all(
          threads.map((thread, i) => thread.call('takeClaim', [file, host(i), 60_000], clock)),
        );
        if (!shared) {
          expect(answers).toEqual([{ taken: true }, { taken: true }]);
          await journal.releaseClaim(file, 'p-0');
          return;
        }
        const won = answers.findIndex((answer) => answer.taken);
        const lost = 1 - won;
        expect(answers[lost]).toEqual({ taken: false, host: `h${won}` });
        // Its holder takes it again; the other is refused until it is given back.
        expect(await journal.takeClaim(file, host(won), 60_000)).toEqual({ taken: true });
        await journal.releaseClaim(file, `p-${lost}`); // not its claim: nothing changes
        expect(await journal.takeClaim(file, host(lost), 60_000)).toEqual({
          taken: false,
          host: `h${won}`,
        });
        await journal.releaseClaim(file, `p-${won}`);
        expect(await journal.takeClaim(file, host(lost), 60_000)).toEqual({ taken: true });
        // A batch to finish, whose holder's lock goes stale: the other host takes it over.
        const finishing = { kind: 'batch', batchId: await journal.recordBatch(batch, []) } as const;
        expect(await journal.takeClaim(finishing, host(won), 60_000)).toEqual({ taken: true });
        expect(await journal.takeClaim(finishing, host(lost), 60_000)).toMatchObject({
          taken: false,
        });
        // Judged by the store's clock, as the lock is: a host ten minutes ahead takes nothing live.
        clock = (await leaseNow()) + 600_000;
        expect(await journal.takeClaim(finishing, host(lost), 60_000)).toEqual({
          taken: false,
          host: `h${won}`,
        });
        expect(await journal.renewLock(`home@h${lost}`, `p-${lost}`)).toBe(true);
        expect(await journal.takeClaim(finishing, host(lost), ENDED)).toEqual({ taken: true });
        // Its lock gone (released, or taken by a new process of its host): so is its claim.
        await journal.releaseLock(`home@h${lost}`, `p-${lost}`);
        expect(await journal.takeClaim(file, host(won), 60_000)).toEqual({ taken: true });
      });

      it('names a result file once: one name for one batch asked twice, two for two batches', async () => {
        const journal = await open();
        const first = await journal.recordBatch(batch, []);
        const second = await journal.recordBatch(batch, []);
        const threads = await openThreads(2);
        const candidates = ['payroll.result.csv', 'payroll [2].result.csv'];
        const same = await Promise.all(
          threads.map((thread) => thread.call('resultName', [first, candidates], clock)),
        );
        const [name] = same;
        expect(same).toEqual([name, name]);
        expect((await journal.batch(first))?.resultName).toBe(name);
        const third = await journal.recordBatch(batch, []);
        const more = [...candidates, 'payroll [3].result.csv'];
        const two = await Promise.all(
          [second, third].map((id, i) => threads[i]!.call('resultName', [id, more], clock)),
        );
        expect(new Set([name, ...two]).size).toBe(3);
        // Every candidate taken: it fails, and names nothing.
        const fourth = await journal.recordBatch(batch, []);
        await expect(async () => await journal.resultName(fourth, more)).rejects.toThrow(
          JournalError,
        );
        expect((await journal.batch(fourth))?.resultName).toBeNull();
      });

      it('sends a failed payout again once when two people ask at once', async () => {
        const { journal, id } = await openWithOnePayout();
        const [claim] = await journal.claimToSend('a', 1, 60_000);
        await journal.move('p-1', claim!.fence, 'failed', 'failed at the gateway');
        expect(await journal.retryTargetsOf(id)).toEqual(['p-1']);
        expect(await journal.hasRetries(id)).toBe(false);
        expect(await journal.retryPayouts(['nobody'], 'maria', { duplicateWindowMs: 0 })).toEqual([
          { kind: 'absent', orderId: 'nobody' },
        ]);
        const threads = await openThreads(2);
        const results = await Promise.all(
          threads.map((thread, i) =>
            thread.call('retryPayouts', [['p-1'], `person-${i}`, { duplicateWindowMs: 0 }], clock),
          ),
        );
        expect(
          results
            .flat()
            .map((result) => result.kind)
            .sort(),
        ).toEqual(['not-failed', 'retried']);
        expect(results.flat()).toContainEqual({
          kind: 'not-failed',
          orderId: 'p-1',
          state: 'retried',
          retriedAs: 'p-1-r2',
        });
        expect(await journal.countsByState()).toEqual({
          retried: { count: 1, cents: 1000 },
          queued: { count: 1, cents: 1000 },
        });
        expect(await journal.retryTargetsOf(id)).toEqual([]);
        expect(await journal.hasRetries(id)).toBe(true);
      });
    });

    it("keeps the gateway's pause and who sends for the hosts that share it, or says one host's", async () => {
      const [one, other] = [await open(), await open()];
      const first = await one.lookAtGateway('h-1', 60_000);
      expect(first).toEqual({ pausedForMs: 0, others: [], joined: !!factory.sharedByHosts });
      await other.pauseGateway(30_000);
      // A shorter pause never shortens a longer one.
      await one.pauseGateway(1_000);
      const seen = await other.lookAtGateway('h-2', 60_000);
      if (!factory.sharedByHosts) {
        expect(seen).toEqual({ pausedForMs: 0, others: [], joined: false });
        return;
      }
      expect(seen).toMatchObject({ others: ['h-1'], joined: true });
      expect(seen.pausedForMs).toBeGreaterThan(1_000);
      expect(seen.pausedForMs).toBeLessThanOrEqual(30_000);
      // Seen again within the window, a moment later by the store's clock, a host is still
      // the one that began at its first look.
      const looked = await leaseNow();
      for (let i = 0; i < 1000 && (await leaseNow()) <= looked; i++) await tick();
      const again = await one.lookAtGateway('h-1', 60_000);
      expect(again).toMatchObject({ others: ['h-2'], joined: false });
      // Once the store's clock is past both sights, a window that ends there leaves the
      // other out, and this host sends anew.
      const sighted = await leaseNow();
      for (let i = 0; i < 1000 && (await leaseNow()) <= sighted; i++) await tick();
      expect(await one.lookAtGateway('h-1', 0)).toMatchObject({ others: [], joined: true });
    });

    // Last: a member no case calls (a new one, say) fails here.
    it('calls every member of the interface', () => {
      expect(Object.keys(MEMBERS).filter((member) => !called.has(member))).toEqual([]);
    });
  });
}
