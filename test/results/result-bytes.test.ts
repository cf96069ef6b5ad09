/**
 * A result file is the same bytes however it is read and written (issue 34 made both
 * cheaper): here against the journal's one text of a batch's lines (RESULT_ENTRIES, which
 * the PostgreSQL store runs as it is), each line made by resultLine and quoted as RFC 4180
 * says, on a batch of every state and kind of line, quotes, accents, delimiters, line
 * breaks, formulas, held and covered rows, and the approval columns.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROW_STATES } from '../../src/domain/row-states.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { RESULT_ENTRIES, toResultEntry } from '../../src/journal/sqlite/reports.js';
import type { ResultLineRow } from '../../src/journal/sqlite/reports.js';
import {
  approvalCells,
  catalogFor,
  holdMessage,
  resultLine,
  writeResultFile,
  type ResultFormat,
} from '../../src/results/result-file.js';
import { APPROVAL_COLUMNS, RESULT_COLUMNS } from '../../src/results/columns.js';
import { safeCell } from '../../src/csv/safe-cell.js';
import { sqliteBinding } from '../../src/runtime/sqlite.js';
import { useTempFolder } from '../support/files.js';
import { EVERY_KIND } from '../support/lines.js';

const folder = useTempFolder('payouts-result-bytes-');

/** Texts a cell may hold: each quoting rule, accents, a formula, nothing. */
const TEXTS = [
  'José da Conceição',
  'Ana "Aninha" Souza',
  'Lima; Silva, e filhos',
  'linha\nquebrada',
  'só\r\nCRLF',
  'retorno\rsó',
  '\t=1',
  '=HYPERLINK("x")',
  '+55 11',
  '@soma',
  '-2+3',
  'ÇÃÕ ü ñ 😀',
  '',
];
const text = (i: number) => TEXTS[i % TEXTS.length]!;
const ANSWERED = ['paid', 'failed', 'refunded', 'canceled', 'pending', 'rejected', 'conflict'];
const FORMATS: readonly ResultFormat[] = [
  { dialect: 'excel', timeZone: 'America/Sao_Paulo', language: 'pt-BR' },
  { dialect: 'excel', timeZone: 'Asia/Kolkata', language: 'en' },
  { dialect: 'rfc4180', timeZone: 'America/Sao_Paulo' },
];

/** A journal with a batch of every kind of line (id 2), and an earlier one whose payouts cover some. */
async function variedJournal(path: string, options: { approved: boolean; sandbox: boolean }) {
  const opened = await openJournal(sqliteJournalAt(path));
  if (options.sandbox) await opened.bindGateway('sandbox');
  await opened.close();
  const db = new (sqliteBinding())(path);
  const batch = db.prepare(`
    INSERT INTO batches (id, file_name, sha256, received_at, state, rows, valid, invalid,
      total_cents, problems, held_because)
    VALUES (?, ?, ?, 1000, ?, 0, 0, 0, 0, '[]', ?)`);
  batch.run(1, 'anterior.csv', 'a', 'done', null);
  batch.run(
    2,
    'folha; "março".csv',
    'b',
    'underfunded',
    JSON.stringify({ code: 'english', text: 'saldo "baixo"; falta R$ 1,00' }),
  );
  const payout = db.prepare(`
    INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, pix_key_written,
      document, name, email, phone, request_written, payload_hash, state, transaction_id,
      message, said, fee, net, gateway_created_at, end_to_end_id, processed_at, updated_at,
      admitted_at, hold_reason, covered_by)
    VALUES (@orderId, @batchId, @line, @cents, @keyType, @keyWritten, @document, @name,
      @email, '+5511987654321', @request, x'00', @state, @transactionId, @message, @said,
      @fee, @net, @createdAt, @e2e, @processedAt, 1000, 1000, @holdReason, @coveredBy)`);
  const none = {
    keyWritten: null,
    request: null,
    transactionId: null,
    message: null,
    said: null,
    fee: null,
    net: null,
    createdAt: null,
    e2e: null,
    processedAt: null,
    holdReason: null,
    coveredBy: null,
  };
  for (const [i, state] of ['paid', 'refunded', 'failed'].entries()) {
    payout.run({
      ...none,
      orderId: `anterior-${state}`,
      batchId: 1,
      line: i + 2,
      cents: 500,
      keyType: 0,
      document: '52998224725',
      name: 'Anterior',
      email: 'a@example.com',
      state,
      transactionId: 900 + i,
    });
  }
  // Payouts on even lines, the other lines between the first of them: a page mixes both.
  let payoutLine = 2;
  let otherLine = 3;
  for (const [i, state] of [...ROW_STATES, ...ROW_STATES].entries()) {
    const answered = ANSWERED.includes(state);
    const cnpj = i % 3 === 1;
    payout.run({
      ...none,
      orderId: `p-${i};${text(i + 3)}`,
      batchId: 2,
      line: (payoutLine += 2) - 2,
      cents: [1, 99, 100, 123456, 100000000][i % 5]!,
      keyType: i % 5,
      keyWritten: i % 7 === 0 ? `chave ${text(i)}` : null,
      document: cnpj ? '11222333000181' : `${String(i).padStart(3, '0')}98224725`,
      name: text(i),
      email: `p${i}@example.com`,
      request:
        i % 4 === 3
          ? JSON.stringify({
              value: 4242,
              pixKeyType: 3,
              pixKey: '+5521998765432',
              cpfCnpj: '52998224725',
              person: { name: `escrito ${text(i + 1)}`, email: 'e@x', phone: '+5521998765432' },
              orderId: `p-${i}`,
            })
          : null,
      state,
      transactionId: answered || state === 'unknown' ? 1000 + i : null,
      message: i % 2 ? text(i + 5) : null,
      said:
        state === 'held' && i % 2 === 0
          ? JSON.stringify({
              code: 'heldDuplicate',
              file: 'anterior.csv',
              line: 2,
              at: 1000,
              state: 'queued',
              transactionId: 900,
              newFile: 'novo.csv',
              hintFlags: '',
            })
          : i % 5 === 4
            ? JSON.stringify({ code: 'english', text: text(i + 2) })
            : null,
      fee: answered ? '0.50' : null,
      net: answered ? (i % 2 ? '1234.06' : 'n/d; "x"') : null,
      createdAt: answered ? '2026-11-23T12:00:00.000Z' : null,
      e2e: answered ? `E${i}` : null,
      processedAt: state === 'paid' ? '2026-11-23T12:00:01.000' : i % 2 ? 'ontem' : null,
      holdReason: state === 'held' ? 'duplicate' : null,
      coveredBy:
        state === 'covered' || state === 'held'
          ? ['anterior-paid', 'anterior-refunded', 'anterior-failed'][i % 3]
          : null,
    });
  }
  const batchLine = db.prepare(`
    INSERT INTO batch_lines (batch_id, line, kind, order_id, column_heading, message, name,
      value_cents, value_written, said, cpf_cnpj, pix_key_type, pix_key)
    VALUES (2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const [i, kind] of [...EVERY_KIND, ...EVERY_KIND].entries()) {
    const named =
      kind === 'replay' || kind === 'covered'
        ? ['anterior-paid', 'anterior-refunded', 'anterior-failed'][i % 3]!
        : i % 2
          ? `linha-${i}`
          : null;
    batchLine.run(
      (otherLine += 2) - 2,
      kind,
      named,
      i % 3 ? text(i) : null,
      text(i + 4),
      i % 2 ? text(i + 1) : null,
      i % 2 ? 1050 : null,
      i % 2 ? '10,50' : i % 3 ? '=1+1' : null,
      i % 4 === 1 ? JSON.stringify({ code: 'english', text: text(i + 6) }) : null,
      i % 2 ? '529.982.247-25' : null,
      i % 2 ? 'EMAIL' : null,
      i % 2 ? text(i + 7) : null,
    );
  }
  if (options.approved) {
    const event = db.prepare(
      `INSERT INTO batch_events (batch_id, at, event, by, detail) VALUES (2, ?, ?, ?, ?)`,
    );
    event.run(2000, 'dropped', 'maria "m"; silva', JSON.stringify({ code: 'english', text: '' }));
    event.run(3000, 'approved', 'joão;x', JSON.stringify({ code: 'english', text: 'ok' }));
  }
  db.close();
  return ROW_STATES.length * 2 + EVERY_KIND.length * 2;
}

/** The batch's lines as RESULT_ENTRIES reads them whole. */
function linesRead(path: string): ResultLineRow[] {
  const db = new (sqliteBinding())(path, { readonly: true });
  const rows = db
    .prepare(RESULT_ENTRIES)
    .all({ batchId: 2, after: 0, limit: 1_000_000 }) as ResultLineRow[];
  db.close();
  return rows;
}

/** A cell as RFC 4180 writes it: quoted when it holds the delimiter, a quote or a line break. */
const quoted = (cell: string, delimiter: string) =>
  /["\r\n]/.test(cell) || cell.includes(delimiter) ? `"${cell.replaceAll('"', '""')}"` : cell;

/**
 * The result file as the journal's one text of a batch's lines and resultLine make it; the
 * batch and its events as the journal reads them.
 */
async function expected(path: string, format: ResultFormat, sandbox: boolean): Promise<string> {
  const rows = linesRead(path);
  const journal = await openJournal(sqliteJournalAt(path));
  const batch = (await journal.batch(2))!;
  const events = await journal.batchEvents(2);
  await journal.close();
  const words = catalogFor(format);
  const held = holdMessage(batch, words);
  const approval = approvalCells(events, format)?.map(safeCell) ?? [];
  const headings = [...RESULT_COLUMNS, ...(approval.length ? APPROVAL_COLUMNS : [])].map(
    (column) => words.heading[column],
  );
  const delimiter = format.dialect === 'excel' ? ';' : ',';
  const lines = [
    sandbox ? [words.heading.sandbox, ...headings] : headings,
    ...rows.map((row) => {
      const cells = [...resultLine(toResultEntry(row), format, held), ...approval];
      return sandbox ? [words.sandboxMoved, ...cells] : cells;
    }),
  ];
  const bom = format.dialect === 'excel' ? '\ufeff' : '';
  return (
    bom +
    lines
      .map((cells) => cells.map((cell) => quoted(cell, delimiter)).join(delimiter) + '\r\n')
      .join('')
  );
}

describe('a result file', () => {
  it.each([
    { approved: true, sandbox: false },
    { approved: false, sandbox: true },
  ])('is the same bytes as its lines read whole and quoted one by one (%o)', async (options) => {
    const path = join(folder(), 'journal.db');
    const lines = await variedJournal(path, options);
    for (const format of FORMATS) {
      const journal = await openJournal(sqliteJournalAt(path));
      const batch = await journal.batch(2);
      const result = join(folder(), `${format.dialect}-${format.language ?? 'en'}.csv`);
      expect(await writeResultFile(journal, batch!, result, format)).toBe(true);
      await journal.close();
      const written = readFileSync(result, 'utf8');
      const wanted = await expected(path, format, options.sandbox);
      // Every line, each kind of line among them, and the cells that need quoting.
      expect(wanted.split('\r\n').length).toBeGreaterThan(lines);
      expect(wanted).toMatch(/"[^"\r\n]*""/);
      expect(written).toBe(wanted);
    }
  });

  it.each([1, 2, 3, 7, 1_000])('is read the same in pages of %i lines', async (limit) => {
    const path = join(folder(), 'journal.db');
    await variedJournal(path, { approved: false, sandbox: false });
    const journal = await openJournal(sqliteJournalAt(path));
    const paged = [];
    for (let after = 0, pages = 0; pages < 1_000; pages++) {
      const page = await journal.resultEntries(2, after, limit);
      expect(page.length).toBeLessThanOrEqual(limit);
      paged.push(...page);
      const last = page.at(-1);
      if (!last) break;
      after = last.line;
    }
    await journal.close();
    const whole = linesRead(path).map(toResultEntry);
    expect(new Set(whole.map((entry) => entry.kind)).size).toBe(EVERY_KIND.length + 1);
    expect(paged).toEqual(whole);
  });
});
