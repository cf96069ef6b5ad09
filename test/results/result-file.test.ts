import { describe, expect, it } from 'vitest';
import type { BatchEvent, PayoutRecord, ResultEntry } from '../../src/journal/journal.js';
import { approvalCells, holdMessage, resultLine } from '../../src/results/result-file.js';
import { archiveFileName, batchDay, resultFileNames } from '../../src/results/names.js';
import { cashOutRequest } from '../support/gateway.js';

const payout = (overrides: Partial<PayoutRecord> = {}): PayoutRecord => ({
  orderId: 'p-1',
  batchId: 1,
  line: 2,
  request: cashOutRequest('p-1', { value: 123456 }),
  valueCents: 123456,
  state: 'paid',
  attempts: 1,
  notFound: 0,
  lastSentAt: 0,
  transactionId: 1001,
  gatewayStatus: 'paid',
  message: null,
  said: null,
  fee: '0.50',
  net: '1234.06',
  gatewayCreatedAt: '2026-11-23T12:00:00.000Z',
  endToEndId: 'E123',
  processedAt: '2026-11-23T12:00:01.000',
  leaseOwner: null,
  leaseUntil: null,
  fence: 1,
  ...overrides,
});

const entry = (overrides: Partial<ResultEntry> = {}): ResultEntry => ({
  line: 2,
  kind: 'payout',
  orderId: 'p-1',
  payout: payout(),
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
  ...overrides,
});

const EXCEL = { dialect: 'excel', timeZone: 'America/Sao_Paulo' } as const;

describe('resultLine', () => {
  it('a paid payout in the excel dialect: documents as text, decimal commas, our time zone', () => {
    expect(resultLine(entry(), EXCEL, '')).toEqual([
      '2',
      'p-1',
      'Ana Souza',
      'CPF',
      '529.982.247-25',
      '529.982.247-25',
      '1234,56',
      'paid',
      '1001',
      'E123',
      '0,50',
      '1234,06',
      // Both in São Paulo's time, as date-times: processedAt has no zone, and is UTC.
      '2026-11-23 09:00:00',
      '2026-11-23 09:00:01',
      '',
    ]);
  });

  it('the rfc4180 dialect stays for programs: raw digits and decimal points', () => {
    const cells = resultLine(entry(), { dialect: 'rfc4180', timeZone: 'UTC' }, '');
    expect([cells[4], cells[5], cells[6], cells[10], cells[11], cells[12], cells[13]]).toEqual([
      '52998224725',
      '52998224725',
      '1234.56',
      '0.50',
      '1234.06',
      '2026-11-23T12:00:00+00:00',
      '2026-11-23T12:00:01+00:00',
    ]);
  });

  const uuid = '123e4567-e89b-12d3-a456-426614174000';
  it.each([
    // type, key, excel cell, rfc4180 cell (a leading + made inert)
    [1, '11222333000181', '11.222.333/0001-81', '11222333000181'],
    [3, '+5511987654321', '(11) 98765-4321', "'+5511987654321"],
    [2, 'ana@example.com', 'ana@example.com', 'ana@example.com'],
    [4, uuid, uuid, uuid],
  ] as const)('a Pix key of type %i, %s, is written %s in excel', (type, key, excel, rfc) => {
    const request = { ...cashOutRequest('p-1'), pixKeyType: type, pixKey: key };
    const line = entry({ payout: payout({ request }) });
    expect(resultLine(line, EXCEL, '')[4]).toBe(excel);
    expect(resultLine(line, { dialect: 'rfc4180', timeZone: 'UTC' }, '')[4]).toBe(rfc);
  });

  it.each([
    ['invalid', 'João Silva', 5000, null, '50,00'],
    ['invalid', 'Maria', null, '12,3,4', '12,3,4'],
    ['superseded', 'Ana Souza', 123456, null, '1234,56'],
    ['held', 'Ana Souza', 99, null, '0,99'],
  ] as const)(
    "a %s line carries its row's name and value: %s",
    (kind, name, valueCents, valueWritten, value) => {
      const cells = resultLine(
        entry({ kind, payout: null, note: 'why', name, valueCents, valueWritten }),
        EXCEL,
        '',
      );
      expect([cells[2], cells[6]]).toEqual([name, value]);
    },
  );

  it.each([
    [
      'invalid',
      'column "CPF"',
      'is not a valid CPF',
      'invalid',
      'column "CPF": is not a valid CPF',
    ],
    ['skipped', null, 'a total line, not a payout', 'skipped', 'a total line, not a payout'],
  ] as const)(
    'a %s line keeps its line number, status and reason',
    (kind, column, note, status, message) => {
      const cells = resultLine(
        entry({ kind, payout: null, orderId: null, column, note }),
        EXCEL,
        '',
      );
      expect(cells[0]).toBe('2');
      expect(cells[7]).toBe(status);
      expect(cells[14]).toBe(message);
    },
  );

  // Written by earlier versions: it was never this file's payment, so it never reads as
  // `paid` (a summary's count of paid is a claim about money this file moved).
  it('a replay an earlier version recorded shows the payout it repeats, but not as paid', () => {
    const cells = resultLine(
      entry({ kind: 'replay', note: 'already journaled from line 5 of a.csv', payout: payout() }),
      EXCEL,
      '',
    );
    expect(cells[7]).toBe('replay');
    expect(cells[14]).toBe('already journaled from line 5 of a.csv');
  });

  it('a payout sent again leaves its value to the attempt that replaced it: a sum of the column counts it once', () => {
    const failed = resultLine(
      entry({
        payout: payout({
          state: 'retried',
          message:
            'failed; sent again on purpose by maria on 2026-11-24 (payouts retry), as p-1-r2',
        }),
      }),
      EXCEL,
      '',
    );
    const again = resultLine(
      entry({ orderId: 'p-1-r2', payout: payout({ orderId: 'p-1-r2' }) }),
      EXCEL,
      '',
    );
    expect([failed[6], failed[7]]).toEqual(['', 'retried']);
    expect(failed[14]).toContain('as p-1-r2');
    expect(again[6]).toBe('1234,56');
  });

  it("a row held by a rule on who is paid says its own reason, not its batch's", () => {
    const why = 'possible duplicate: the same document and amount as folha.csv, line 2';
    const cells = resultLine(
      entry({ payout: payout({ state: 'held', message: why }) }),
      EXCEL,
      'held: the balance did not cover',
    );
    expect(cells[7]).toBe('held');
    expect(cells[14]).toBe(why);
  });

  it('a held row says why', () => {
    const why = holdMessage({
      state: 'held',
      problems: [{ code: 'english', text: 'the control total does not match' }],
      heldBecause: null,
    });
    const cells = resultLine(entry({ payout: payout({ state: 'held' }) }), EXCEL, why);
    expect(cells[14]).toBe('held, nothing in this file is sent: the control total does not match');
    expect(holdMessage({ state: 'underfunded', problems: [], heldBecause: null })).toMatch(
      /balance did not cover/,
    );
    // The balance check's own reason, when it was kept: not read is not short.
    expect(
      holdMessage({
        state: 'underfunded',
        problems: [],
        heldBecause: {
          code: 'balanceShortfall',
          cents: 10_000,
          count: 1,
          feeCents: 0,
          readError: 'transient: connection refused',
        },
      }),
    ).toBe(
      'held: the balance could not be read (transient: connection refused), so R$ 100,00 cannot be checked against it; checked again on every run',
    );
  });

  it.each([`=cmd|' /C calc'!A0`, '+1', '@SUM(1)', '-2+3', '\t=1'])(
    'a cell that could run as a formula comes out inert: %s',
    (hostile) => {
      const request = cashOutRequest('p-1', {
        person: { name: hostile, email: 'a@b.co', phone: '+5511987654321' },
      });
      const cells = resultLine(
        entry({ payout: payout({ request, message: hostile, state: 'rejected' }) }),
        EXCEL,
        '',
      );
      expect(cells[2]).toBe(`'${hostile}`);
      expect(cells[14]).toBe(`'${hostile}`);
      for (const cell of cells) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    },
  );
});

describe('resultFileNames', () => {
  // 22:30 on 23 November in São Paulo (UTC-3): already the 24th in UTC.
  const evening = Date.parse('2026-11-24T01:30:00Z');
  it.each([
    ['payroll.csv', 'payroll.2026-11-23.result.csv', 'payroll.2026-11-23 [2].result.csv'],
    [
      'payroll (2).csv',
      'payroll (2).2026-11-23.result.csv',
      'payroll (2).2026-11-23 [2].result.csv',
    ],
    ['payroll [3].csv', 'payroll.2026-11-23.result.csv', 'payroll.2026-11-23 [2].result.csv'],
    [
      'folha.2026.11.txt',
      'folha.2026.11.2026-11-23.result.csv',
      'folha.2026.11.2026-11-23 [2].result.csv',
    ],
    ['noext', 'noext.2026-11-23.result.csv', 'noext.2026-11-23 [2].result.csv'],
  ])('%s -> %s, then %s', (input, first, second) => {
    const names = resultFileNames(input, 7, evening);
    expect(names.slice(0, 2)).toEqual([first, second]);
    expect(names.at(-1)).toMatch(/ \[batch 7\]\.result\.csv$/);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('batchDay', () => {
  it.each([
    ['2026-11-24T01:30:00Z', '2026-11-23'],
    ['2026-11-24T03:00:00Z', '2026-11-24'],
    ['2026-01-01T02:59:59Z', '2025-12-31'],
  ])('%s is %s in São Paulo', (iso, day) => {
    expect(batchDay(Date.parse(iso))).toBe(day);
  });
});

describe('archiveFileName', () => {
  it.each([
    ['fornecedores.2026-11-23.result.csv', 'fornecedores.csv', 'fornecedores.2026-11-23.csv'],
    ['folha.2026-11-23 [2].result.csv', 'folha [2].TXT', 'folha.2026-11-23 [2].TXT'],
    ['payroll.result.csv', 'payroll.csv', 'payroll.csv'],
    ['payroll (batch 2).result.csv', 'payroll.csv', 'payroll (batch 2).csv'],
  ])('%s of %s -> %s', (result, input, archived) => {
    expect(archiveFileName(result, input)).toBe(archived);
  });
});

describe('approvalCells', () => {
  const at = (iso: string) => Date.parse(iso);
  const fourEyes = (by: string, uid: number, when: string, code: string, needed: number) =>
    ({
      at: at(when),
      event: 'approved',
      by,
      detail: {
        code: 'eventFourEyesApproved',
        approvalCode: code,
        count: 2,
        cents: 600000,
        needed,
        via: `folha.csv.${by}.aprovado`,
        uid,
      },
    }) satisfies BatchEvent;
  const dropped: BatchEvent = {
    at: at('2026-11-28T12:00:00Z'),
    event: 'dropped',
    by: 'maria',
    detail: { code: 'eventDropped', uid: 1001 },
  };

  it('names the approvers of the code that released the batch, each once, at their first approval', () => {
    const events: BatchEvent[] = [
      dropped,
      fourEyes('carla', 1004, '2026-11-28T12:30:00Z', 'AAAA-AAAA-AAAA', 1),
      fourEyes('ana', 1002, '2026-11-28T17:02:07Z', 'K3F9-M2XA-P9RT', 1),
      // Recorded again when a second approver was needed: still ana, once.
      fourEyes('ana', 1002, '2026-11-28T17:09:00Z', 'K3F9-M2XA-P9RT', 2),
      fourEyes('bruno', 1003, '2026-11-28T17:10:00Z', 'K3F9-M2XA-P9RT', 2),
    ];
    expect(approvalCells(events, { ...EXCEL, language: 'pt-BR' })).toEqual([
      'maria',
      'ana 2026-11-28 14:02:07; bruno 2026-11-28 14:10:00 (código K3F9-M2XA-P9RT)',
    ]);
    expect(approvalCells(events, { dialect: 'rfc4180', timeZone: 'America/Sao_Paulo' })).toEqual([
      'maria',
      'ana 2026-11-28T14:02:07-03:00; bruno 2026-11-28T14:10:00-03:00 (code K3F9-M2XA-P9RT)',
    ]);
  });

  it('says a file moved into approved/ by hand was approved by someone the journal cannot name', () => {
    const moved: BatchEvent = {
      at: at('2026-11-28T17:02:07Z'),
      event: 'approved',
      by: 'a person',
      detail: { code: 'eventMovedIntoApproved' },
    };
    expect(approvalCells([moved], { ...EXCEL, language: 'pt-BR' })).toEqual([
      '',
      'alguém (movido para approved/) 2026-11-28 14:02:07',
    ]);
  });

  it('is nothing for a batch nobody approved, dropped under four eyes or not', () => {
    expect(approvalCells([], EXCEL)).toBeUndefined();
    expect(approvalCells([dropped], EXCEL)).toBeUndefined();
  });
});
