import { describe, expect, it } from 'vitest';
import {
  planFile,
  planListedBatches,
  type BatchFacts,
  type FileFacts,
  type IntakeAction,
} from '../../src/app/intake.js';
import { emptyFileReport, type FileProblem, type FileReport } from '../../src/csv/reader.js';
import type { Said } from '../../src/messages/said.js';

const FILE = '/home/processing/folha.csv';
const TOTAL: FileProblem = {
  kind: 'held',
  message: { code: 'english', text: 'the control total does not match' },
};
const EMPTY: FileProblem = { kind: 'unusable', message: { code: 'english', text: 'empty' } };
const TEMP: Said = { code: 'english', text: 'finding repeated rows needs room in the temp folder' };

const report = (problems: FileProblem[]): FileReport => emptyFileReport(FILE, problems);

describe('what a pass does with a file', () => {
  it.each<[string, FileFacts, IntakeAction]>([
    [
      'an inbox file that settled is taken',
      { where: 'inbox', file: FILE, name: 'folha.csv', ready: true, settle: '30s' },
      { kind: 'take', file: FILE },
    ],
    [
      'an inbox file still changing is left there, saying for how long it must not change',
      { where: 'inbox', file: FILE, name: 'folha.csv', ready: false, settle: '30s' },
      {
        kind: 'leave',
        file: FILE,
        why: { code: 'waitingToSettle', settle: '30s', file: 'folha.csv' },
      },
    ],
    [
      'a file in processing/ this process has not journaled as it is is read',
      { where: 'processing', file: FILE, seenAs: undefined },
      { kind: 'read', file: FILE },
    ],
    [
      'a file this process journaled, unchanged since, is resumed without being read',
      { where: 'processing', file: FILE, seenAs: 7 },
      { kind: 'resume', file: FILE, batchId: 7 },
    ],
    [
      'a file another run moved on while it was read is forgotten',
      { where: 'read', file: FILE, read: { kind: 'gone' }, batchState: undefined },
      { kind: 'forget', file: FILE },
    ],
    [
      'bytes journaled before are resumed',
      { where: 'read', file: FILE, read: { kind: 'same-file', batchId: 3 }, batchState: 'open' },
      { kind: 'resume', file: FILE, batchId: 3 },
    ],
    [
      'bytes journaled before that wait for approval go back to wait, tried again next pass',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'same-file', batchId: 3 },
        batchState: 'awaiting-approval',
      },
      { kind: 'await-approval', file: FILE, batchId: 3, remember: false },
    ],
    [
      'a new file that needs approval waits for it',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'awaiting-approval', batchId: 4, report: report([]) },
        batchState: 'awaiting-approval',
      },
      { kind: 'await-approval', file: FILE, batchId: 4, remember: true },
    ],
    [
      'a file that cannot be used is rejected with its reasons',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'unusable', batchId: undefined, report: report([EMPTY]) },
        batchState: undefined,
      },
      { kind: 'reject', file: FILE, batchId: undefined, problems: [EMPTY.message] },
    ],
    [
      'a file whose reading stopped for want of temp space waits in processing/, never rejected',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'unfinished', batchId: 6, why: TEMP },
        batchState: 'admitting',
      },
      { kind: 'wait', file: FILE, batchId: 6, why: TEMP },
    ],
    [
      'a file held by its control total is journaled as held, saying why',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'held', batchId: 5, report: report([TOTAL]) },
        batchState: 'held',
      },
      { kind: 'journal', file: FILE, batchId: 5, state: 'held', problems: [TOTAL.message] },
    ],
    [
      'a usable file is journaled as taken',
      {
        where: 'read',
        file: FILE,
        read: { kind: 'open', batchId: 6, report: report([]) },
        batchState: 'open',
      },
      { kind: 'journal', file: FILE, batchId: 6, state: 'taken', problems: [] },
    ],
  ])('%s', (_, facts, action) => {
    expect(planFile(facts)).toEqual(action);
  });
});

describe('the batches a pass names from the journal alone', () => {
  const none: BatchFacts = {
    awaitingApproval: [],
    open: [],
    admitting: [],
    handled: new Set(),
    readElsewhere: new Set(),
    hintFlags: '',
  };

  it('names a waiting file by its name in awaiting-approval/, with how to approve it', () => {
    const listed = planListedBatches({
      ...none,
      awaitingApproval: [
        { id: 1, fileName: 'folha.csv', awaitingName: 'folha [2].csv' },
        { id: 2, fileName: 'bonus.csv', awaitingName: null },
      ],
      hintFlags: ' --sandbox',
    });
    expect(listed.map(({ file, state, problems }) => ({ file, state, problems }))).toEqual([
      {
        file: 'folha [2].csv',
        state: 'awaiting-approval',
        // Said as the accountant named it, picked by its batch.
        problems: [
          { code: 'awaitingApproval', file: 'folha.csv', hintFlags: ' --batch 1 --sandbox' },
        ],
      },
      {
        file: 'bonus.csv',
        state: 'awaiting-approval',
        problems: [{ code: 'awaitingApproval', file: 'bonus.csv', hintFlags: ' --sandbox' }],
      },
    ]);
    expect(listed.every((batch) => batch.fileNeedsAPerson)).toBe(true);
  });

  it('says a waiting file its waiting copy replaced is replaced, and offers the copy alone for approval', () => {
    const copy = { id: 2, fileName: 'folha.csv', awaitingName: 'folha [2].csv', receivedAt: 1_000 };
    const listed = planListedBatches({
      ...none,
      awaitingApproval: [
        { id: 1, fileName: 'folha.csv', awaitingName: 'folha.csv', replacedBy: copy },
        copy,
        { id: 3, fileName: 'bonus.csv', awaitingName: 'bonus.csv' },
      ],
    });
    expect(
      listed.map(({ file, state, problems, fileNeedsAPerson }) => [
        file,
        state,
        problems,
        fileNeedsAPerson,
      ]),
    ).toEqual([
      [
        'folha.csv',
        'replaced',
        [
          {
            code: 'replacedByCopy',
            copyFile: 'folha.csv',
            copyBatchId: 2,
            at: 1_000,
            next: { file: 'folha.csv', hintFlags: ' --batch 2' },
          },
        ],
        false,
      ],
      [
        'folha [2].csv',
        'awaiting-approval',
        [{ code: 'awaitingApproval', file: 'folha.csv', hintFlags: ' --batch 2' }],
        true,
      ],
      [
        'bonus.csv',
        'awaiting-approval',
        [{ code: 'awaitingApproval', file: 'bonus.csv', hintFlags: '' }],
        true,
      ],
    ]);
  });

  it('names every open batch whose file was not handled, retried or with its file elsewhere', () => {
    const totals: Said = { code: 'totalLineUnreadable', line: 9, text: 'Total: R$ 1,00' };
    const listed = planListedBatches({
      ...none,
      open: [
        { id: 3, fileName: 'folha.csv', retried: true, waitingRetry: false, problems: [] },
        { id: 4, fileName: 'bonus.csv', retried: false, waitingRetry: false, problems: [] },
        { id: 7, fileName: 'extra.csv', retried: false, waitingRetry: false, problems: [totals] },
      ],
      handled: new Set([4]),
    });
    expect(listed).toEqual([
      {
        file: 'folha.csv',
        batchId: 3,
        state: 'retried',
        outcome: 'sent again on purpose (payouts retry)',
        problems: [],
        fileNeedsAPerson: false,
        fileElsewhere: true,
      },
      {
        file: 'extra.csv',
        batchId: 7,
        state: 'resumed',
        outcome: 'resumed from the journal: its file is not in processing/',
        problems: [totals, { code: 'fileNotInProcessing', file: 'extra.csv' }],
        fileNeedsAPerson: false,
        fileElsewhere: true,
      },
    ]);
  });

  it('names a batch whose rows wait for payouts retry once, as reopened, unless its file was handled', () => {
    const listed = planListedBatches({
      ...none,
      open: [
        { id: 7, fileName: 'folha.csv', retried: false, waitingRetry: true, problems: [] },
        { id: 8, fileName: 'bonus.csv', retried: false, waitingRetry: true, problems: [] },
      ],
      handled: new Set([8]),
    });
    expect(listed).toEqual([
      {
        file: 'folha.csv',
        batchId: 7,
        state: 'waiting-retry',
        outcome: 'rows wait for payouts retry: a payout they repeat did not pay',
        problems: [],
        fileNeedsAPerson: false,
        fileElsewhere: true,
      },
    ]);
  });

  it('names a batch whose reading was cut short, for a person, unless its file was handled', () => {
    const listed = planListedBatches({
      ...none,
      admitting: [
        { id: 5, fileName: 'folha.csv' },
        { id: 6, fileName: 'bonus.csv' },
      ],
      handled: new Set([6]),
    });
    expect(listed).toEqual([
      {
        file: 'folha.csv',
        batchId: 5,
        state: 'cut-short',
        outcome: 'reading cut short',
        problems: [{ code: 'cutShort', file: 'folha.csv' }],
        fileNeedsAPerson: true,
        fileElsewhere: false,
      },
    ]);
  });

  it('leaves a batch another host is reading to that host: neither cut short nor elsewhere', () => {
    const listed = planListedBatches({
      ...none,
      admitting: [{ id: 5, fileName: 'folha.csv' }],
      open: [{ id: 6, fileName: 'bonus.csv', retried: false, waitingRetry: false, problems: [] }],
      readElsewhere: new Set(['folha.csv', 'bonus.csv']),
    });
    expect(listed).toEqual([]);
  });
});
