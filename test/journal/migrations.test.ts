import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { homeTag } from '../../src/csv/order-id.js';
import { payloadHash } from '../../src/journal/admission.js';
import { type Journal } from '../../src/journal/journal.js';
import { openSqliteJournal } from '../../src/journal/sqlite/open.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { Database } from '../../src/journal/sqlite.js';
import { ROW_STATES } from '../../src/journal/states.js';
import { useTempFolder } from '../support/files.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');

/** A request as the reader makes it (toCashOutRequest's key order), by Pix key type. */
function requestOf(n: number, pixKeyType: number, cpfCnpj = '52998224725'): CashOutRequest {
  const email = `pessoa${n}@example.com`;
  const phone = `+55119876543${String(n).padStart(2, '0')}`;
  const pixKey = [cpfCnpj, cpfCnpj, email, phone, `0c6f1e2a-7f3b-4c1d-9e8a-${n}`][pixKeyType];
  return {
    value: 1000 + n,
    pixKeyType,
    pixKey: pixKey ?? '',
    cpfCnpj,
    person: { name: `Pessoa "${n}" São João \\ ção`, email, phone },
    orderId: `pay-${n}`,
  };
}

/** payloadHash as journals up to version 16 kept it: all 64 hex digits. */
function hashOfVersion16(request: CashOutRequest): string {
  const canonical = JSON.stringify([
    request.orderId,
    request.value,
    request.pixKeyType,
    request.pixKey,
    request.cpfCnpj,
    request.person.name,
    request.person.email,
    request.person.phone,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * A journal at schema version 16 with a payout in every state, written as that version
 * wrote them (the request as JSON, the whole hash), a few with what later moves leave
 * (answers, holds, covers, retries), and their audit.
 */
function writeVersion16(path: string): Map<string, string> {
  const db = new Database(path);
  for (const migration of MIGRATIONS.filter((m) => m.version <= 16)) db.exec(migration.sql);
  db.pragma('user_version = 16');
  db.prepare(
    `INSERT INTO batches (id, file_name, sha256, received_at, state, rows, valid, invalid,
      total_cents, problems, name_key, name_number)
     VALUES (1, 'folha.csv', 'aa', ?, 'open', 20, 20, 0, 0, '[]', 'folha', 1),
       (2, 'folha.csv', 'bb', ?, 'admitting', 0, 0, 0, 0, '[]', 'folha', 2)`,
  ).run(NOW - 3_600_000, NOW);
  const insert = db.prepare(`
    INSERT INTO payouts (order_id, batch_id, line, request, payload_hash, value_cents, state,
      attempts, last_sent_at, transaction_id, gateway_status, message, said, fee, net,
      gateway_created_at, end_to_end_id, processed_at, lease_owner, lease_until, fence,
      updated_at, polls, poll_failed, next_poll_at, document, admitted_at, hold_reason,
      covered_by, superseded_by, released_at, retry_of, attempt_number)
    VALUES (@orderId, @batchId, @line, @request, @hash, @value, @state, @attempts, @sentAt,
      @transactionId, @status, @message, @said, @fee, @net, @createdAt, @e2e, @processedAt,
      @owner, @leaseUntil, @fence, @updatedAt, @polls, @pollFailed, @nextPollAt, @document,
      @admittedAt, @holdReason, @coveredBy, @supersededBy, @releasedAt, @retryOf, @attempt)`);
  const requests = new Map<string, string>();
  const add = (n: number, state: string, request: CashOutRequest, json: string) => {
    const sent = !['queued', 'held', 'covered', 'superseded', 'invalid'].includes(state);
    insert.run({
      orderId: request.orderId,
      batchId: 1,
      line: n + 2,
      request: json,
      hash: hashOfVersion16(request),
      value: request.value,
      state,
      attempts: sent ? 1 : 0,
      sentAt: sent ? NOW - 1000 : null,
      transactionId: sent ? 7000 + n : null,
      status: sent ? 'PENDING' : null,
      message: state === 'held' ? 'held: a possible duplicate' : null,
      said: state === 'held' ? '{"code":"heldDuplicate"}' : null,
      fee: sent ? '0.50' : null,
      net: sent ? '9.50' : null,
      createdAt: sent ? '2026-11-20T11:59:00Z' : null,
      e2e: sent ? `E1234${n}` : null,
      processedAt: state === 'paid' ? '2026-11-20T11:59:30Z' : null,
      owner: state === 'sending' ? 'run-1' : null,
      leaseUntil: state === 'sending' ? NOW + 60_000 : null,
      fence: sent ? 2 : 0,
      updatedAt: NOW - 500,
      polls: state === 'pending' ? 3 : 0,
      pollFailed: 0,
      nextPollAt: state === 'pending' ? NOW + 5000 : null,
      document: request.cpfCnpj.replace(/[^0-9A-Za-z]/g, '').toUpperCase(),
      admittedAt: NOW - 3_600_000,
      holdReason: state === 'held' ? 'duplicate' : null,
      coveredBy: state === 'held' || state === 'covered' ? 'pay-0' : null,
      supersededBy: state === 'superseded' ? 2 : null,
      releasedAt: null,
      retryOf: state === 'retried' ? null : n === 30 ? 'pay-2' : null,
      attempt: n === 30 ? 2 : null,
    });
    db.prepare(
      `INSERT INTO audit (order_id, at, from_state, to_state, reason) VALUES (?, ?, NULL, 'queued', ?)`,
    ).run(request.orderId, NOW - 3_600_000, `journaled from batch 1, line ${n + 2}`);
    requests.set(request.orderId, json);
  };
  ROW_STATES.forEach((state, n) => {
    const request = requestOf(n, n % 5, n % 2 === 0 ? '52998224725' : '529.982.247-25');
    add(n, state, request, JSON.stringify(request));
  });
  // A CPF key that is not the row's document, a CNPJ with letters, a control character.
  const odd = [
    { ...requestOf(20, 0), pixKey: '11144477735' },
    { ...requestOf(21, 1, '12.ABC.345/01DE-35'), pixKey: '12ABC34501DE35' },
    { ...requestOf(22, 2), person: { name: 'Tab\there\u0001', email: 'x@y.z', phone: '+55' } },
  ];
  odd.forEach((request, i) => add(20 + i, 'queued', request, JSON.stringify(request)));
  // Written by hand, not by this program: its keys in another order, and spaced.
  const { orderId, ...rest } = requestOf(23, 0);
  add(23, 'failed', { ...rest, orderId }, JSON.stringify({ orderId, ...rest }, null, 1));
  db.close();
  return requests;
}

/** Every column a payout had at version 16 but its hash, as SQL reads them. */
function payoutsOf(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  const rows = db
    .prepare(
      `SELECT order_id, batch_id, line, request, value_cents, state, attempts, not_found,
        last_sent_at, transaction_id, gateway_status, message, said, fee, net,
        gateway_created_at, end_to_end_id, processed_at, lease_owner, lease_until, fence,
        updated_at, polls, poll_failed, next_poll_at, document, admitted_at, hold_reason,
        covered_by, superseded_by, released_at, retry_of, attempt_number
       FROM payouts ORDER BY order_id`,
    )
    .all();
  db.close();
  return rows;
}

/** The audit with each entry's orderId: kept in the entry until 18, by its payout since. */
function auditOf(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  const version = db.pragma('user_version', { simple: true }) as number;
  const rows = db
    .prepare(
      version < 18
        ? 'SELECT id, order_id, at, from_state, to_state, reason FROM audit ORDER BY id'
        : `SELECT a.id, p.order_id, a.at, a.from_state, a.to_state, a.reason
           FROM audit a JOIN payouts p ON p.id = a.payout_id ORDER BY a.id`,
    )
    .all();
  db.close();
  return rows;
}

describe('migrations 17 and 18: the compact payouts table and audit', () => {
  const folder = useTempFolder();
  const opened: Journal[] = [];
  afterEach(async () => {
    for (const journal of opened.splice(0)) await journal.close();
  });
  const open = (path: string) => {
    const journal = openSqliteJournal(path, { now: () => NOW });
    opened.push(journal);
    return journal;
  };
  const migrated = () => {
    mkdirSync(join(folder(), 'home'), { recursive: true });
    const path = join(folder(), 'home', 'journal.db');
    const requests = writeVersion16(path);
    const before = { payouts: payoutsOf(path), audit: auditOf(path) };
    return { path, requests, before, journal: open(path) };
  };

  it("migration 20: a file's batch from before derives the orderIds it has; a new one carries the home's tag", async () => {
    const { journal } = migrated();
    const file = { name: 'folha.csv', nameKey: 'folha', arrived: true };
    // Batch 2 was being read when the older version stopped: resumed as it began.
    expect(await journal.batchForFile({ ...file, sha256: 'bb' })).toEqual({
      kind: 'resume',
      batchId: 2,
      nameNumber: 2,
      orderIdHome: null,
    });
    const identity = await journal.identity();
    const made = await journal.batchForFile({ ...file, sha256: 'cc' });
    expect(made).toMatchObject({ kind: 'new', nameNumber: 3 });
    expect(made.orderIdHome).toBe(homeTag(identity?.journalId ?? ''));
    expect(made.orderIdHome).toMatch(/^[0-9a-f]{8}$/);
    expect((await journal.batch(made.batchId))?.orderIdHome).toBe(made.orderIdHome);
    expect((await journal.batch(1))?.orderIdHome).toBeNull();
  });

  it('keeps every row, state, field and audit entry, and each request to the byte', async () => {
    const { path, requests, before, journal } = migrated();
    await journal.close();
    opened.pop();
    expect(payoutsOf(path)).toEqual(before.payouts);
    expect(auditOf(path)).toEqual(before.audit);
    expect(before.payouts).toHaveLength(ROW_STATES.length + 4);
    const reopened = open(path);
    expect(await reopened.history('pay-6')).toEqual([
      {
        at: NOW - 3_600_000,
        from: null,
        to: 'queued',
        reason: { code: 'english', text: 'journaled from batch 1, line 8' },
      },
    ]);
    expect(await reopened.highWater()).toBe(before.audit.length);
    for (const [orderId, json] of requests) {
      const payout = await reopened.payout(orderId);
      expect(payout?.request, orderId).toEqual(JSON.parse(json));
      expect(JSON.stringify(payout?.request)).toBe(JSON.stringify(JSON.parse(json)));
    }
  });

  it('compares a row journaled before it with the same row after it as equal', async () => {
    const { requests, journal } = migrated();
    const rules = { duplicateWindowMs: 0 };
    for (const json of requests.values()) {
      const request = JSON.parse(json) as CashOutRequest;
      expect((await journal.known(request.orderId))?.payloadHash).toBe(payloadHash(request));
    }
    // An admission resuming: its own row again is the same row, not a new one.
    const queued = JSON.parse(requests.get('pay-1') ?? '') as CashOutRequest;
    expect(await journal.admitPayouts(1, [{ line: 3, request: queued }], rules)).toEqual([
      { orderId: 'pay-1', line: 3, admission: 'same' },
    ]);
    // A refused row unchanged is not taken over by a copy (only payouts retry sends it
    // again); changed, it is.
    const refused = JSON.parse(requests.get('pay-10') ?? '') as CashOutRequest;
    expect(refused.orderId).toBe(`pay-${ROW_STATES.indexOf('rejected')}`);
    expect(await journal.weigh(refused, 'folha', rules)).toMatchObject({ kind: 'journaled' });
    expect(await journal.weigh({ ...refused, value: 1 }, 'folha', rules)).toMatchObject({
      kind: 'retry',
    });
  });

  it("makes a document migration 9 copied with its punctuation the cover rule's key", async () => {
    mkdirSync(join(folder(), 'home'), { recursive: true });
    const path = join(folder(), 'home', 'journal.db');
    const requests = writeVersion16(path);
    // Rows journaled before version 9 had their document filled as upper(cpfCnpj), its
    // punctuation kept, where the cover rule looks for the digits.
    const queued = JSON.parse(requests.get('pay-1') ?? '') as CashOutRequest;
    expect(queued.cpfCnpj).toBe('529.982.247-25');
    const db = new Database(path);
    db.prepare(`UPDATE payouts SET document = upper(json_extract(request, '$.cpfCnpj'))`).run();
    db.close();
    const journal = open(path);
    const documents = new Database(path, { readonly: true });
    const row = documents
      .prepare(`SELECT document, cpf_cnpj FROM payouts WHERE order_id = 'pay-1'`)
      .get();
    documents.close();
    expect(row).toEqual({ document: '52998224725', cpf_cnpj: '529.982.247-25' });
    expect(JSON.stringify((await journal.payout('pay-1'))?.request)).toBe(JSON.stringify(queued));
  });

  it('gives a claim the request as it was journaled', async () => {
    const { requests, journal } = migrated();
    const claims = await journal.claimToSend('run-2', 100, 60_000);
    expect(claims.map((claim) => claim.orderId).sort()).toEqual([
      'pay-1',
      'pay-20',
      'pay-21',
      'pay-22',
    ]);
    for (const claim of claims) {
      expect(claim.request).toEqual(JSON.parse(requests.get(claim.orderId) ?? ''));
    }
  });
});
