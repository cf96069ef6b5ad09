/**
 * The conformance suite of the Journal interface: what any journal must do, written
 * against the interface alone, every call awaited (a journal may answer with promises).
 * Each implementation runs it with `describeJournal(name, open)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { JournalError, type Journal } from '../../src/journal/journal.js';
import { canMove, type RowState } from '../../src/journal/states.js';

/** Opens the journal stored as `store` (the same name: the same journal), timed by `now`. */
export type OpenJournal = (store: string, now: () => number) => Journal | Promise<Journal>;

const request = (orderId: string, value = 1000): CashOutRequest => ({
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
export function describeJournal(name: string, openStore: OpenJournal): void {
  describe(name, () => {
    const opened: Journal[] = [];
    let clock = 1_000_000;
    const open = async (store = 'journal.db') => {
      const journal = await openStore(store, () => clock);
      opened.push(journal);
      return journal;
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
        (await journal.linesOfBatch(id)).map((line) => [line.line, line.message, line.said]),
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
      expect(await journal.linesOfBatch(second)).toEqual([
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
        { at: clock, from: null, to: 'queued', reason: 'journaled from batch 2, line 5' },
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
      expect((await journal.linesOfBatch(unchanged))[0]?.message).toMatch(
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
        expect((await journal.releaseHolds(copy, 'duplicate', 'released by maria')).rows).toBe(1);
        // Released, it says nothing: neither the English nor the value is left behind.
        expect(await journal.payout('b-1')).toMatchObject({ message: null, said: null });
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
        expect(held[1]?.repeats).toMatchObject({
          orderId: 'a-2',
          fileName: 'folha.csv',
          line: 3,
          state: 'queued',
        });
        expect(await journal.releaseHolds(copy, 'duplicate', 'by maria', ['b-2'])).toEqual({
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
        expect(await journal.refuseBatch(first, 'wrong month')).toBe(true);
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
      const claims = await journal.claimToSend('worker-a', 2, 60_000);
      expect(claims.map((c) => [c.orderId, c.state, c.attempts])).toEqual([
        ['p-1', 'sending', 1],
        ['p-2', 'sending', 1],
      ]);
      expect(await journal.payout('p-1')).toMatchObject({
        state: 'sending',
        leaseOwner: 'worker-a',
        leaseUntil: clock + 60_000,
        lastSentAt: clock,
      });
      expect((await journal.claimToSend('worker-b', 10, 60_000)).map((c) => c.orderId)).toEqual([
        'p-3',
      ]);
      expect(await journal.claimToSend('worker-b', 10, 60_000)).toEqual([]);
      expect((await journal.history('p-1')).at(-1)).toMatchObject({
        from: 'queued',
        to: 'sending',
        reason: 'claimed by worker-a (attempt 1)',
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
      const [mine] = await journal.claimToSend('old', 1, 60_000);
      expect(await journal.claimAbandoned('new', 10, 60_000)).toEqual([]); // lease still running
      clock += 60_001;
      const [taken] = await journal.claimAbandoned('new', 10, 60_000);
      expect(taken).toMatchObject({ orderId: 'p-1', state: 'unknown' });
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
      const claims = await journal.claimToSend('a', 3, 60_000);
      expect(claims.map((claim) => [claim.orderId, claim.attempts])).toEqual([
        ['p-1', 2],
        ['p-2', 1],
        ['p-3', 1],
      ]);
      // p-3 was taken over meanwhile (its lease ended): not ours to give back.
      clock += 60_001;
      const [taken] = await journal.claimAbandoned('b', 1, 60_000, { batchId: id, line: 3 });
      expect(taken).toMatchObject({ orderId: 'p-3', state: 'unknown' });
      expect(await journal.unclaim(claims, 'not sent: the run stopped')).toBe(2);
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
        reason: 'not sent: the run stopped',
      });
      // Claimed again as any queued row, by anyone.
      expect(
        (await journal.claimToSend('c', 5, 60_000)).map((c) => [c.orderId, c.attempts]),
      ).toEqual([
        ['p-1', 2],
        ['p-2', 1],
      ]);
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
      await journal.claimToSend('crashed', 1, 30_000);
      await journal.close();
      opened.pop();
      clock += 30_000;
      const again = await open();
      expect((await again.payout('p-1'))?.state).toBe('sending');
      const [claim] = await again.claimAbandoned('next', 10, 30_000);
      expect(claim).toMatchObject({ orderId: 'p-1', state: 'unknown', attempts: 1 });
      expect(
        await again.markResending(claim!, 'not found twice after the grace period', 30_000),
      ).toBe(true);
      expect(await again.payout('p-1')).toMatchObject({ state: 'sending', attempts: 2 });
      expect((await again.payout('p-1'))?.leaseUntil).toBe(clock + 30_000); // renewed for the re-send
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
      await journal.claimToSend('crashed', 1, 30_000);
      clock += 30_000;
      const [claim] = await journal.claimAbandoned('slow', 10, 1_000);
      clock += 1_000;
      expect(await journal.markResending(claim!, 'too late', 30_000)).toBe(false);
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
      expect(await journal.linesOfBatch(id)).toEqual([]);
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
  });
}
