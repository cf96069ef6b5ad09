import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/journal/sqlite.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { JournalError, openJournal, type Journal } from '../../src/journal/journal.js';
import { useTempFolder } from '../support/files.js';

const request = (orderId: string, value = 1000): CashOutRequest => ({
  value,
  pixKeyType: 0,
  pixKey: '52998224725',
  cpfCnpj: '52998224725',
  person: { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' },
  orderId,
});

const batch = {
  fileName: 'payroll.csv',
  sha256: 'ab',
  state: 'open' as const,
  rows: 3,
  valid: 3,
  invalid: 0,
  totalCents: 3000,
  problems: [],
};

describe('journal', () => {
  const folder = useTempFolder();
  const opened: Journal[] = [];
  let clock = 1_000_000;
  const open = (name = 'journal.db') => {
    const journal = openJournal(join(folder(), 'home', name), { now: () => clock });
    opened.push(journal);
    return journal;
  };
  afterEach(() => {
    for (const journal of opened.splice(0)) journal.close();
  });

  it('is created owner-only, in WAL mode with synchronous FULL, and migrates once', () => {
    const journal = open();
    const path = journal.path;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(folder(), 'home')).mode & 0o777).toBe(0o700);
    journal.close();
    opened.pop();
    const raw = new Database(path);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
    raw.close();
    open(); // a second open finds the schema in place
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
  });

  it("keeps an invalid line's message as a value beside its English, and its problems too", () => {
    const journal = open();
    const id = journal.recordBatch({ ...batch, state: 'held', problems: [{ code: 'noRows' }] }, [
      {
        line: 4,
        kind: 'invalid',
        orderId: null,
        column: 'Nome',
        message: "is empty: the recipient's name is required",
        said: { code: 'nameEmpty' },
      },
      { line: 5, kind: 'skipped', orderId: null, column: null, message: 'a total line' },
    ]);
    expect(journal.linesOfBatch(id).map((line) => [line.line, line.message, line.said])).toEqual([
      [4, "is empty: the recipient's name is required", { code: 'nameEmpty' }],
      [5, 'a total line', undefined],
    ]);
    expect(journal.resultEntries(id, 0, 10).map((entry) => entry.said)).toEqual([
      { code: 'nameEmpty' },
      null,
    ]);
    expect(journal.batch(id)?.problems).toEqual([{ code: 'noRows' }]);
  });

  it("reads the English sentences an earlier version kept as a batch's problems", () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    const path = journal.path;
    journal.close();
    opened.pop();
    const raw = new Database(path);
    raw
      .prepare('UPDATE batches SET problems = ? WHERE id = ?')
      .run('["control total mismatch"]', id);
    raw.close();
    expect(open().batch(id)?.problems).toEqual([
      { code: 'english', text: 'control total mismatch' },
    ]);
  });

  it('refuses a journal written by a newer version', () => {
    const journal = open();
    journal.close();
    opened.pop();
    const raw = new Database(journal.path);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => open()).toThrow(JournalError);
    expect(() => open()).toThrow(
      `schema version 99, newer than this program knows (${MIGRATIONS.at(-1)?.version})`,
    );
  });

  it('journals new payouts as queued; an orderId of another file is held naming it, never a replay', () => {
    const journal = open();
    const first = journal.recordBatch(batch, []);
    expect(
      journal
        .admitPayouts(
          first,
          [
            { line: 2, request: request('p-1') },
            { line: 3, request: request('p-2', 2000) },
          ],
          { duplicateWindowMs: 0 },
        )
        .map((a) => a.admission),
    ).toEqual(['new', 'new']);
    const second = journal.recordBatch({ ...batch, fileName: 'outro.csv' }, [
      { line: 4, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
    ]);
    const admitted = journal.admitPayouts(
      second,
      [
        { line: 2, request: request('p-1') },
        { line: 3, request: request('p-2', 9999) },
        { line: 5, request: request('p-3', 3000) },
      ],
      { duplicateWindowMs: 0 },
    );
    expect(admitted.map((a) => a.admission)).toEqual(['journaled', 'journaled', 'new']);
    expect(journal.payout('p-2')?.valueCents).toBe(2000); // the other file's row is untouched
    expect(journal.linesOfBatch(second)).toEqual([
      {
        line: 2,
        kind: 'held',
        orderId: 'p-1',
        column: null,
        message:
          'orderId p-1 is already journaled from payroll.csv, line 2, on 1970-01-01 (now queued): not sent again. If this is another payment, give it an orderId of its own',
      },
      expect.objectContaining({ line: 3, kind: 'held', orderId: 'p-2' }),
      { line: 4, kind: 'invalid', orderId: null, column: 'name', message: 'is empty' },
    ]);
    // Counted as held, for a person: never as what became of the other file's payout.
    expect(journal.rowTotalsOfBatch(second).rows).toEqual({ held: 2, invalid: 1, queued: 1 });
    expect(journal.history('p-3')).toEqual([
      { at: clock, from: null, to: 'queued', reason: 'journaled from batch 2, line 5' },
    ]);
  });

  it('lets a fixed copy of the same file replace an orderId the gateway refused', () => {
    const journal = open();
    const file = { name: 'payroll.csv', nameKey: 'payroll', sha256: 'a1', arrived: true };
    const first = journal.batchForFile(file).batchId;
    journal.admitPayouts(first, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    journal.finishBatch(first, { ...batch, state: 'open' });
    const [claim] = journal.claimToSend('a', 10, 60_000);
    expect(
      journal.move('p-1', claim?.fence ?? 0, 'rejected', 'Validation Failed - pixKey (HTTP 400)', {
        message: 'Validation Failed - pixKey',
      }),
    ).toBe(true);
    // The same request again is a re-send, which only payouts retry makes: a held line.
    const unchanged = journal.batchForFile({ ...file, sha256: 'a2' }).batchId;
    expect(
      journal.admitPayouts(unchanged, [{ line: 2, request: request('p-1') }], {
        duplicateWindowMs: 0,
      })[0]?.admission,
    ).toBe('journaled');
    expect(journal.payout('p-1')).toMatchObject({ state: 'rejected', batchId: first });
    expect(journal.linesOfBatch(unchanged)[0]?.message).toMatch(
      /\(now rejected\): not sent again; to send that payment again on purpose, run: payouts retry p-1\./,
    );
    // Fixed (here its amount), it takes the refused row over.
    const second = journal.batchForFile({ ...file, sha256: 'a3' }).batchId;
    expect(
      journal.admitPayouts(second, [{ line: 7, request: request('p-1', 1234) }], {
        duplicateWindowMs: 0,
      })[0]?.admission,
    ).toBe('retry');
    expect(journal.payout('p-1')).toMatchObject({
      state: 'queued',
      valueCents: 1234,
      batchId: second,
      line: 7,
      message: null,
      attempts: 0,
    });
  });

  describe("the cover rule: the same document and amount as another file's payout", () => {
    const DAY = 86_400_000;
    const rules = { duplicateWindowMs: 20 * DAY };
    const admitIn = (journal: Journal, fileName: string, requests: CashOutRequest[]) => {
      const id = journal.recordBatch({ ...batch, fileName }, []);
      return journal
        .admitPayouts(
          id,
          requests.map((r, index) => ({ line: index + 2, request: r })),
          rules,
        )
        .map((a) => a.admission);
    };

    it('holds a row as a possible duplicate, naming the payout, within the window only', () => {
      const journal = open();
      admitIn(journal, 'folha.csv', [request('a-1')]);
      clock += 19 * DAY;
      expect(admitIn(journal, 'folha-final.csv', [request('b-1')])).toEqual(['duplicate']);
      expect(journal.payout('b-1')).toMatchObject({ state: 'held' });
      expect(journal.payout('b-1')?.message).toMatch(
        /^possible duplicate: the same document and amount as folha\.csv, line 2, journaled on 1970-01-01 \(now queued\); not sent\. If it is a new payment, run: payouts approve "folha-final\.csv" --new-batch$/,
      );
      clock += 2 * DAY; // 21 days after folha.csv, 2 after folha-final.csv
      expect(admitIn(journal, 'folha-2.csv', [request('c-1')])).toEqual(['duplicate']);
      expect(journal.payout('c-1')?.message).toContain('folha-final.csv');
    });

    it('compares documents as people write them, and amounts to the cent', () => {
      const journal = open();
      admitIn(journal, 'folha.csv', [request('a-1')]);
      const punctuated = { ...request('b-1'), cpfCnpj: '529.982.247-25' };
      expect(admitIn(journal, 'copia.csv', [punctuated, request('b-2', 1001)])).toEqual([
        'duplicate',
        'new',
      ]);
    });

    it('lets one payout cover one row: the second of two equal rows is held by the other', () => {
      const journal = open();
      admitIn(journal, 'folha.csv', [request('a-1'), request('a-2')]);
      expect(
        admitIn(journal, 'copia.csv', [request('b-1'), request('b-2'), request('b-3')]),
      ).toEqual(['duplicate', 'duplicate', 'new']);
      expect(journal.payout('b-1')?.message).toContain('line 2');
      expect(journal.payout('b-2')?.message).toContain('line 3');
    });

    it.each([
      ['failed', 'new'],
      ['rejected', 'new'],
      ['canceled', 'new'],
      ['paid', 'duplicate'],
      ['pending', 'duplicate'],
      ['unknown', 'duplicate'],
    ] as const)('a payout %s covers: %s', (state, expected) => {
      const journal = open();
      admitIn(journal, 'folha.csv', [request('a-1')]);
      const [claim] = journal.claimToSend('w', 1, 60_000);
      if (state === 'paid' || state === 'failed' || state === 'canceled') {
        journal.move('a-1', claim?.fence ?? 0, 'pending', 'created', {}, { release: false });
      }
      journal.move('a-1', claim?.fence ?? 0, state, 'answer');
      expect(admitIn(journal, 'copia.csv', [request('b-1')])).toEqual([expected]);
    });

    it('is checked again when a row is claimed: of two copies queued together one is sent, the other held', () => {
      const journal = open();
      const first = journal.recordBatch({ ...batch, fileName: 'folha.csv' }, []);
      journal.admitPayouts(first, [{ line: 2, request: request('a-1') }], rules);
      clock += 1;
      // Admitted as if no rule had seen the first (another process, a window of 0).
      const copy = journal.recordBatch({ ...batch, fileName: 'folha_final.csv' }, []);
      journal.admitPayouts(copy, [{ line: 2, request: request('b-1') }], { duplicateWindowMs: 0 });
      expect(journal.payout('b-1')?.state).toBe('queued');
      const claims = journal.claimToSend('w', 10, 60_000, rules);
      expect(claims.map((claim) => claim.orderId)).toEqual(['a-1']);
      expect(journal.payout('b-1')).toMatchObject({ state: 'held' });
      expect(journal.payout('b-1')?.message).toMatch(/^possible duplicate: .* folha\.csv, line 2/);
    });

    it('a row a person released as a new payment is not held again when it is claimed', () => {
      const journal = open();
      admitIn(journal, 'folha.csv', [request('a-1')]);
      admitIn(journal, 'folha_final.csv', [request('b-1')]);
      const copy = journal.batches('folha_final.csv')[0]?.id ?? 0;
      expect(journal.releaseHolds(copy, 'duplicate', 'released by maria').rows).toBe(1);
      const claimed = journal.claimToSend('w', 10, 60_000, rules).map((claim) => claim.orderId);
      expect(claimed.sort()).toEqual(['a-1', 'b-1']);
    });

    it('a file a person turned down covers nothing', () => {
      const journal = open();
      const file = { name: 'folha.csv', nameKey: 'folha', sha256: 'f1', arrived: true };
      const first = journal.batchForFile(file).batchId;
      journal.admitPayouts(first, [{ line: 2, request: request('a-1') }], rules);
      journal.finishBatch(first, { ...batch, state: 'awaiting-approval' });
      expect(journal.refuseBatch(first, 'wrong month')).toBe(true);
      expect(admitIn(journal, 'outra.csv', [request('b-1')])).toEqual(['new']);
    });
  });

  it('claims queued rows in file order, marks them sending with a fence, and audits', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(
      id,
      [3, 1, 2].map((n) => ({ line: n, request: request(`p-${n}`) })),
      { duplicateWindowMs: 0 },
    );
    const claims = journal.claimToSend('worker-a', 2, 60_000);
    expect(claims.map((c) => [c.orderId, c.state, c.attempts])).toEqual([
      ['p-1', 'sending', 1],
      ['p-2', 'sending', 1],
    ]);
    expect(journal.payout('p-1')).toMatchObject({
      state: 'sending',
      leaseOwner: 'worker-a',
      leaseUntil: clock + 60_000,
      lastSentAt: clock,
    });
    expect(journal.claimToSend('worker-b', 10, 60_000).map((c) => c.orderId)).toEqual(['p-3']);
    expect(journal.claimToSend('worker-b', 10, 60_000)).toEqual([]);
    expect(journal.history('p-1').at(-1)).toMatchObject({
      from: 'queued',
      to: 'sending',
      reason: 'claimed by worker-a (attempt 1)',
    });
  });

  it('two journals on one file never claim the same row', () => {
    const a = open();
    const b = open();
    const id = a.recordBatch(batch, []);
    a.admitPayouts(
      id,
      Array.from({ length: 200 }, (_, i) => ({ line: i + 2, request: request(`p-${i}`) })),
      { duplicateWindowMs: 0 },
    );
    const seen: string[] = [];
    for (let round = 0; round < 30; round++) {
      seen.push(...a.claimToSend('a', 4, 60_000).map((c) => c.orderId));
      seen.push(...b.claimToSend('b', 3, 60_000).map((c) => c.orderId));
    }
    expect(seen).toHaveLength(200);
    expect(new Set(seen).size).toBe(200);
  });

  it('writes only with the current fence: a process whose lease was taken over writes nothing', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    const [mine] = journal.claimToSend('old', 1, 60_000);
    expect(journal.claimAbandoned('new', 10, 60_000)).toEqual([]); // lease still running
    clock += 60_001;
    const [taken] = journal.claimAbandoned('new', 10, 60_000);
    expect(taken).toMatchObject({ orderId: 'p-1', state: 'unknown' });
    expect(taken?.fence).toBeGreaterThan(mine?.fence ?? 0);
    expect(
      journal.move('p-1', mine?.fence ?? 0, 'pending', 'late answer', { transactionId: 7 }),
    ).toBe(false);
    expect(journal.payout('p-1')).toMatchObject({ state: 'unknown', transactionId: null });
    expect(
      journal.move('p-1', taken?.fence ?? 0, 'pending', 'found by lookup', { transactionId: 7 }),
    ).toBe(true);
    expect(journal.history('p-1').map((h) => h.to)).toEqual([
      'queued',
      'sending',
      'unknown',
      'pending',
    ]);
  });

  it('refuses a move the transition table does not allow', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    const [claim] = journal.claimToSend('a', 1, 60_000);
    const fence = claim?.fence ?? 0;
    expect(
      journal.move('p-1', fence, 'paid', 'settled', { transactionId: 1, gatewayStatus: 'paid' }),
    ).toBe(true);
    expect(() => journal.move('p-1', fence, 'queued', 'oops')).toThrow(
      /a move from paid to queued is not allowed/,
    );
    expect(journal.payout('p-1')?.state).toBe('paid');
  });

  it('refuses a same-state move where the table says the state cannot repeat', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    const [claim] = journal.claimToSend('a', 1, 60_000);
    const fence = claim?.fence ?? 0;
    expect(() => journal.move('p-1', fence, 'sending', 'again', {}, { release: false })).toThrow(
      /a move from sending to sending is not allowed/,
    );
    expect(journal.move('p-1', fence, 'unknown', 'no answer', {}, { release: false })).toBe(true);
    // A lookup that did not settle it records what it saw, unaudited: not a move.
    expect(journal.move('p-1', fence, 'unknown', 'not found', { notFound: 1 })).toBe(true);
    expect(journal.payout('p-1')?.notFound).toBe(1);
    expect(journal.history('p-1').map((h) => h.to)).toEqual(['queued', 'sending', 'unknown']);
  });

  it('keeps a sending mark across a reopen, and resolves it as unknown once its lease ends', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    journal.claimToSend('crashed', 1, 30_000);
    journal.close();
    opened.pop();
    clock += 30_000;
    const again = open();
    expect(again.payout('p-1')?.state).toBe('sending');
    const [claim] = again.claimAbandoned('next', 10, 30_000);
    expect(claim).toMatchObject({ orderId: 'p-1', state: 'unknown', attempts: 1 });
    expect(again.markResending(claim!, 'not found twice after the grace period', 30_000)).toBe(
      true,
    );
    expect(again.payout('p-1')).toMatchObject({ state: 'sending', attempts: 2 });
    expect(again.payout('p-1')?.leaseUntil).toBe(clock + 30_000); // renewed for the re-send
    expect(again.countsByState()).toEqual({ sending: { count: 1, cents: 1000 } });
  });

  it('a failed poll says why in the row until a poll gets through; other messages stay', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(
      id,
      [1, 2].map((n) => ({ line: n + 1, request: request(`p-${n}`) })),
      { duplicateWindowMs: 0 },
    );
    const [first, second] = journal.claimToSend('a', 2, 30_000);
    journal.move('p-1', first!.fence, 'pending', 'created', { transactionId: 7 });
    journal.move('p-2', second!.fence, 'pending', 'created', {
      transactionId: 8,
      message: 'description from the gateway',
    });
    const poll = (orderId: string, details: Parameters<Journal['move']>[4]) => {
      const fence = journal.payout(orderId)!.fence;
      journal.move(orderId, fence, 'pending', 'polled', details);
    };
    poll('p-1', { message: 'last poll failed: no answer', pollFailed: true });
    expect(journal.payout('p-1')?.message).toBe('last poll failed: no answer');
    poll('p-1', { gatewayStatus: 'pending', pollFailed: false });
    expect(journal.payout('p-1')?.message).toBeNull();
    poll('p-2', { gatewayStatus: 'pending', pollFailed: false });
    expect(journal.payout('p-2')?.message).toBe('description from the gateway');
  });

  it('never marks a re-send on a claim whose lease has ended', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(id, [{ line: 2, request: request('p-1') }], { duplicateWindowMs: 0 });
    journal.claimToSend('crashed', 1, 30_000);
    clock += 30_000;
    const [claim] = journal.claimAbandoned('slow', 10, 1_000);
    clock += 1_000;
    expect(journal.markResending(claim!, 'too late', 30_000)).toBe(false);
    expect(journal.payout('p-1')).toMatchObject({ state: 'unknown', attempts: 1 });
  });

  it('a postback brings a poll forward: a pending row is due now and an older in-flight poll loses its fence; a row still sending keeps the request for when it is pending', () => {
    const journal = open();
    const id = journal.recordBatch(batch, []);
    journal.admitPayouts(
      id,
      [1, 2].map((n) => ({ line: n + 1, request: request(`p-${n}`) })),
      { duplicateWindowMs: 0 },
    );
    const [first, second] = journal.claimToSend('a', 2, 30_000);
    journal.move('p-1', first!.fence, 'pending', 'created', {
      transactionId: 7,
      nextPollAt: clock + 60_000,
    });
    const [polling] = journal.claimDue('a', 10, 30_000); // nothing due yet
    expect(polling).toBeUndefined();
    clock += 60_000;
    const [inFlight] = journal.claimDue('a', 10, 30_000);
    expect(journal.pollNow({ transactionId: 7 })).toBe(true);
    // The poll that started before the postback cannot write its (older) answer.
    expect(
      journal.move('p-1', inFlight!.fence, 'pending', 'polled', { nextPollAt: clock + 60_000 }),
    ).toBe(false);
    expect(journal.claimDue('a', 10, 30_000).map((c) => c.orderId)).toEqual(['p-1']);

    expect(journal.pollNow({ orderId: 'p-2' })).toBe(true); // still sending
    journal.move('p-2', second!.fence, 'pending', 'created', {
      transactionId: 8,
      nextPollAt: clock + 60_000,
    });
    expect(journal.payout('p-2')?.state).toBe('pending');
    expect(journal.claimDue('b', 10, 30_000).map((c) => c.orderId)).toEqual(['p-2']);
    expect(journal.pollNow({ transactionId: 999 })).toBe(false);
    expect(journal.pollNow({ orderId: 'nobody' })).toBe(false);
  });

  it('sends nothing from a batch still being admitted or held, and resumes an interrupted admission', () => {
    const journal = open();
    const id = journal.recordBatch({ ...batch, state: 'admitting' }, []);
    const first = [2, 3].map((line) => ({ line, request: request(`p-${line}`) }));
    expect(
      journal.admitPayouts(id, first, { duplicateWindowMs: 0 }).map((a) => a.admission),
    ).toEqual(['new', 'new']);
    expect(journal.claimToSend('a', 10, 60_000)).toEqual([]);
    // The process died here; the next one reads the file again into the same batch.
    const again = [2, 3, 4].map((line) => ({ line, request: request(`p-${line}`) }));
    expect(
      journal.admitPayouts(id, again, { duplicateWindowMs: 0 }).map((a) => a.admission),
    ).toEqual(['same', 'same', 'new']);
    expect(journal.linesOfBatch(id)).toEqual([]);
    // A held file's rows are never sent (it never opens: a new copy takes them over).
    const held = journal.recordBatch({ ...batch, state: 'admitting' }, []);
    journal.admitPayouts(held, [{ line: 2, request: request('h-2') }], { duplicateWindowMs: 0 });
    journal.setBatchState(held, 'held');
    expect(journal.claimToSend('a', 10, 60_000)).toEqual([]);
    expect(() => journal.setBatchState(held, 'open')).toThrow(JournalError);
    journal.setBatchState(id, 'open');
    expect(journal.claimToSend('a', 10, 60_000).map((c) => c.orderId)).toEqual([
      'p-2',
      'p-3',
      'p-4',
    ]);
    expect(journal.history('p-2').map((h) => h.to)).toEqual(['queued', 'sending']);
  });
});
