/** Admission of payouts into the SQLite journal, by the rules on who is paid (admission.ts). */
import type { CashOutRequest } from '../../gateway/contract.js';
import { admit, documentKey, payloadHash } from '../admission.js';
import { isResumed, planAdmission } from '../rules/admission.js';
import { keptMessage } from '../kept-message.js';
import { JournalError } from '../journal-error.js';
import type { JournalAdmission } from '../journal.js';
import type { AdmissionRules, AdmittedPayout, PayoutInput } from '../types.js';
import type { RowState } from '../states.js';
import {
  claimRange,
  coverKeyOf,
  coverSince,
  failedRepeated,
  holdAtClaim,
  type QueuedFacts,
} from '../rules/cover.js';
import { type Context, type Synchronous } from './context.js';
import { BY_AMOUNT, candidatesOf, toCandidate, type CandidateRow, type Rows } from './rows.js';

type Admitting = Synchronous<JournalAdmission>;

/** A payout's row as admission writes it (a retry's too, with what it retries). */
export interface PayoutParams {
  orderId: string;
  batchId: number;
  line: number;
  value: number;
  pixKeyType: number;
  pixKey: string;
  document: string;
  cpfCnpj: string;
  name: string;
  email: string;
  phone: string;
  hash: Buffer;
  now: number;
  reference: string | null;
}

/** `hash` is the request's payloadHash, when the caller has it already. */
export function payoutParams(
  request: CashOutRequest,
  batchId: number,
  line: number,
  now: number,
  hash = payloadHash(request),
  reference: string | null = null,
): PayoutParams {
  return {
    orderId: request.orderId,
    batchId,
    line,
    value: request.value,
    pixKeyType: request.pixKeyType,
    pixKey: request.pixKey,
    document: documentKey(request.cpfCnpj),
    cpfCnpj: request.cpfCnpj,
    name: request.person.name,
    email: request.person.email,
    phone: request.person.phone,
    hash: Buffer.from(hash, 'hex'),
    now,
    reference,
  };
}

/**
 * A request's columns (migration 17) and the values PayoutParams gives them: a Pix key
 * that repeats the field its type names, or a cpfCnpj that is its document, is not written
 * twice (the virtual columns pix_key and cpf_cnpj give them back, and request the whole).
 */
export const REQUEST_COLUMNS =
  'value_cents, pix_key_type, pix_key_written, document, cpf_cnpj_written, name, email, phone';
export const REQUEST_VALUES = `@value, @pixKeyType,
  NULLIF(@pixKey, CASE @pixKeyType WHEN 2 THEN @email WHEN 3 THEN @phone ELSE @cpfCnpj END),
  @document, NULLIF(@cpfCnpj, @document), @name, @email, @phone`;

/** A new payout, queued (test/bench/admit.mjs times it alone: the floor of admission). */
export const INSERT_PAYOUT = `
  INSERT INTO payouts (order_id, batch_id, line, ${REQUEST_COLUMNS}, payload_hash, admitted_at, state, updated_at, reference)
  VALUES (@orderId, @batchId, @line, ${REQUEST_VALUES}, @hash, @now, 'queued', @now, @reference)`;

export function createAdmitting({ db, now, admitting }: Context, rows: Rows): Admitting {
  const statements = {
    insertPayout: db.prepare<PayoutParams>(INSERT_PAYOUT),
    // A new payload takes the place of one the gateway never saw (admission decided),
    // guarded by the state admission read.
    replacePayout: db.prepare<PayoutParams & { from: RowState }>(`
      UPDATE payouts SET batch_id = @batchId, line = @line, (${REQUEST_COLUMNS}) = (${REQUEST_VALUES}),
        request_written = NULL, payload_hash = @hash, admitted_at = @now, reference = @reference,
        state = 'queued', attempts = 0, not_found = 0, last_sent_at = NULL, transaction_id = NULL,
        gateway_status = NULL, message = NULL, said = NULL, fee = NULL, net = NULL, gateway_created_at = NULL,
        end_to_end_id = NULL, processed_at = NULL, lease_owner = NULL, lease_until = NULL,
        hold_reason = NULL, covered_by = NULL, updated_at = @now
      WHERE order_id = @orderId AND state = @from`),
    // Payouts of every batch (all after batch 0) of a row's document and amount, with the
    // Pix key each paid.
    failedRepeated: db.prepare<
      { document: string; value: number; batchId: 0 },
      CandidateRow & { pix_key: string }
    >(candidatesOf(BY_AMOUNT, ', p.pix_key')),
  };

  function admitOne(
    batch: { id: number; fileName: string; nameKey: string | null },
    payout: PayoutInput,
    rules: AdmissionRules,
  ): AdmittedPayout {
    const { line, request } = payout;
    const batchId = batch.id;
    const hash = payloadHash(request);
    const previous = rows.knownOf(request.orderId, batch.nameKey);
    if (isResumed(previous, { batchId, line, hash })) {
      return { orderId: request.orderId, line, admission: 'same' };
    }
    const at = now();
    const covering = rows.coveringOf(coverKeyOf(request, payout.reference), batchId, rules);
    const plan = planAdmission(batch, payout, { previous, covering, hash });
    const params = payoutParams(request, batchId, line, at, hash, payout.reference ?? null);
    switch (plan.write) {
      case 'insert':
        // The audit names the row just inserted by its id: no lookup of its orderId.
        rows.auditNew(Number(statements.insertPayout.run(params).lastInsertRowid), {
          code: 'auditJournaled',
          batchId,
          line,
        });
        break;
      case 'replace': {
        // The earlier row's own request, before the new one takes its place.
        const earlier = plan.supersedes && rows.payoutRow(request.orderId);
        const { from } = plan;
        rows.mustMove(
          request.orderId,
          from,
          'queued',
          { code: 'auditReplaced', batchId, line },
          () => statements.replacePayout.run({ ...params, from }),
        );
        if (plan.supersedes) {
          const was = earlier && (JSON.parse(earlier.request) as CashOutRequest);
          rows.insertLines(plan.supersedes.batchId, [
            {
              line: plan.supersedes.line,
              kind: 'superseded',
              orderId: request.orderId,
              column: null,
              message: keptMessage(plan.supersedes.said),
              said: plan.supersedes.said,
              name: was ? was.person.name : null,
              valueCents: was ? was.value : null,
            },
          ]);
        }
        break;
      }
      case 'held-line':
        rows.insertLines(batchId, [
          {
            line,
            kind: 'held',
            orderId: request.orderId,
            column: null,
            message: keptMessage(plan.said),
            said: plan.said,
            name: request.person.name,
            valueCents: request.value,
          },
        ]);
        break;
    }
    if (plan.write !== 'held-line' && plan.hold) {
      const { reason, said, coveredBy } = plan.hold;
      rows.holdQueuedRow(request.orderId, reason, said, { ...(coveredBy && { coveredBy }), at });
    }
    return { orderId: request.orderId, line, admission: plan.admission.kind };
  }

  const weigh: Admitting['weigh'] = (request, nameKey, rules, reference) =>
    admit(
      rows.knownOf(request.orderId, nameKey),
      rows.coveringOf(coverKeyOf(request, reference), 0, rules),
      payloadHash(request),
    );

  const failedRepeatOf: Admitting['failedRepeatOf'] = (request, rules) => {
    const candidates = statements.failedRepeated
      .all({ document: documentKey(request.cpfCnpj), value: request.value, batchId: 0 })
      .map((row) => ({ ...toCandidate(row), pixKey: row.pix_key }));
    const row = { valueCents: request.value, pixKey: request.pixKey };
    return failedRepeated(row, candidates, coverSince(now(), rules));
  };

  return {
    admitPayouts: admitting(
      (
        batchId: number,
        payouts: readonly PayoutInput[],
        rules: AdmissionRules,
      ): AdmittedPayout[] => {
        const row = rows.batchRow(batchId);
        if (!row) throw new JournalError('refused', `batch ${batchId} is not in the journal`);
        const batch = { id: batchId, fileName: row.file_name, nameKey: row.name_key };
        return payouts.map((payout) => admitOne(batch, payout, rules));
      },
    ),

    known: (orderId) => rows.knownOf(orderId, null),

    weigh,

    failedRepeatOf,

    // In-process reads: a row at a time costs no round trip.
    weighMany: (payouts, nameKey, rules) =>
      payouts.map(({ request, reference }) => {
        const admission = weigh(request, nameKey, rules, reference);
        const failed = admission.kind === 'new' ? failedRepeatOf(request, rules) : undefined;
        return failed ? { admission, failed } : { admission };
      }),
  };
}

/** A queued row as a claim reads it: what the cover rule weighs it by, from its own columns. */
export interface QueuedRow {
  id: number;
  order_id: string;
  batch_id: number;
  document: string;
  value_cents: number;
  released_at: number | null;
  reference: string | null;
  /** Of a released row: the row id of the payout the person said it repeats, if any. */
  confirmed_id: number | null;
}

export const QUEUED_COLUMNS = `p.id, p.order_id, p.batch_id, p.document, p.value_cents, p.released_at,
  p.reference, (SELECT c.id FROM payouts c WHERE c.order_id = p.covered_by) AS confirmed_id`;

/**
 * The cover rule once more, inside a claim's transaction: a queued row that an earlier
 * payout of another file now covers (two copies approved together, say) is held, not
 * sent. A row a person released was weighed against what they were shown: only a payout
 * journaled after it and after the repeat they confirmed, that has left since, holds it
 * again. The row's columns are all it needs: its request (a virtual column, built as
 * JSON) is neither read nor parsed.
 */
export function heldAtClaim(
  rows: Rows,
  row: QueuedRow,
  rules: AdmissionRules,
  when: 'claimed' | 'correctionAnswered' = 'claimed',
): boolean {
  const facts = queuedFactsOf(row);
  const covering = rows.coveringOf(facts.key, facts.batchId, rules, claimRange(facts));
  if (!covering) return false;
  const fileName = rows.batchRow(row.batch_id)?.file_name ?? '';
  const hold = holdAtClaim(facts, covering, fileName, rules, when);
  rows.holdQueuedRow(row.order_id, 'duplicate', hold.said, hold);
  return true;
}

/** What the cover rule weighs a queued row by, from its columns (both stores read them alike). */
export const queuedFactsOf = (row: QueuedRow): QueuedFacts => ({
  key: {
    orderId: row.order_id,
    document: row.document,
    valueCents: row.value_cents,
    reference: row.reference,
  },
  batchId: row.batch_id,
  journalOrder: row.id,
  releasedAt: row.released_at,
  confirmedOrder: row.confirmed_id,
});
