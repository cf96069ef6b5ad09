/**
 * `payouts status --approvals [--since DAY]` on a journal with years of history reads only
 * the batches it shows, through the approvals' index, and says what reading every batch
 * and every event of the journal said: the list is worked out here from all of them,
 * through the journal's interface, and held to the command's, on each store.
 */
import { describe, expect, it, vi } from 'vitest';
import { describeTotals } from '../../src/app/describe-file.js';
import { inTimeZone } from '../../src/results/cells.js';
import type { Journal } from '../../src/journal/journal.js';
import { CATALOGS } from '../../src/messages/catalog.js';
import type { Said } from '../../src/messages/said.js';
import { say } from '../../src/messages/say.js';
import { runCli } from '../support/cli.js';
import { passHomeStores, type PassHome } from '../support/pass-home.js';
import { planOf, recordStatements } from '../support/statements.js';

vi.setConfig({ testTimeout: 60_000 });

const TIME_ZONE = 'America/Sao_Paulo';
const dayOf = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: TIME_ZONE }).format(ms);

/** A batch's history: what happened to it, by whom and when (UTC). */
type History = [event: string, by: string, at: string, detail?: Said][];

const fourEyes = (approvalCode: string): Said => ({
  code: 'eventFourEyesApproved',
  approvalCode,
  count: 2,
  cents: 600_000,
  needed: 2,
  via: 'folha.csv.ana.aprovado',
});

/** Batches of years, each with its history, and the edges of the day `--since` names. */
const HISTORIES: History[] = [
  [
    ['dropped', 'maria', '2024-03-01T12:00:00Z'],
    ['approved', 'ana', '2024-03-01T13:00:00Z'],
    ['retried', 'ana', '2024-03-09T13:00:00Z'],
  ],
  [
    ['dropped', 'maria', '2025-06-01T12:00:00Z'],
    ['refused', 'bruno', '2025-06-01T13:00:00Z'],
  ],
  [],
  // Approved over two days: the second, in the home's zone, on 2026-11-01.
  [
    ['dropped', 'maria', '2026-10-31T20:00:00Z'],
    ['approved', 'ana', '2026-11-01T02:30:00Z', fourEyes('K7QD-M2XA-P9RT')],
    ['approved', 'bruno', '2026-11-01T13:00:00Z', fourEyes('K7QD-M2XA-P9RT')],
  ],
  // 2026-11-01 in UTC, 2026-10-31 at home.
  [['approved', 'a person', '2026-11-01T01:00:00Z']],
  // The clock moved back: its last approval is the earlier one.
  [
    ['approved', 'ana', '2026-11-05T12:00:00Z'],
    ['approved', 'bruno', '2026-10-20T12:00:00Z'],
  ],
  // Waiting still.
  [['dropped', 'maria', '2026-11-02T12:00:00Z']],
  [
    ['approved', 'carla', '2026-11-02T02:59:00Z', fourEyes('NGJM-3VKW-XMRV')],
    ['replaced', 'payouts', '2026-11-03T12:00:00Z'],
  ],
];

/** The home with a journal of HISTORIES, each batch's events written at their times. */
async function withHistory(newHome: () => Promise<PassHome>): Promise<PassHome> {
  const home = await newHome();
  expect((await home.run()).exit).toBe(0);
  await home.withJournal(async (journal) => {
    for (const [i, history] of HISTORIES.entries()) {
      const batchId = await journal.recordBatch(
        {
          fileName: `folha-${i}.csv`,
          sha256: `${i}`.padStart(64, '0'),
          state: 'done',
          rows: 0,
          valid: 0,
          invalid: 0,
          totalCents: 0,
          problems: [],
        },
        [],
      );
      for (const [event, by, at, detail] of history) {
        home.at(at);
        await journal.recordBatchEvent(
          batchId,
          event,
          by,
          detail ?? { code: 'eventMovedIntoApproved' },
        );
      }
    }
  });
  return home;
}

/** What `status --approvals` says, worked out from every batch and every event of the journal. */
async function everyRelease(journal: Journal, since: string | undefined) {
  const releases = [];
  for (const batch of await journal.batches()) {
    const events = await journal.batchEvents(batch.id);
    const approvals = events.filter((event) => event.event === 'approved');
    const last = approvals.at(-1);
    if (!last || (since !== undefined && dayOf(last.at) < since)) continue;
    const coded = approvals.flatMap((event) =>
      event.detail.code === 'eventFourEyesApproved' ? [event.detail.approvalCode] : [],
    );
    releases.push({
      batchId: batch.id,
      file: batch.fileName,
      droppedBy: events.find((event) => event.event === 'dropped')?.by ?? null,
      approvedBy: approvals.map((event) => ({
        by: event.by,
        at: inTimeZone(new Date(event.at), TIME_ZONE),
      })),
      approvalCode: coded.at(-1) ?? null,
      state: batch.state,
      totals: await journal.rowTotalsOfBatch(batch.id),
    });
  }
  return releases;
}

const SINCE = [undefined, '2024-03-01', '2026-10-31', '2026-11-01', '2026-11-02', '2999-01-01'];

describe.each(passHomeStores())('status --approvals on %s', (store, newHome) => {
  it('says what every batch and every event of the journal say, on every day', async () => {
    const home = await withHistory(newHome);
    const env = { ...home.env(), PAYOUTS_TIME_ZONE: TIME_ZONE };
    const shown: Record<string, number[]> = {};
    for (const since of SINCE) {
      const releases = await home.withJournal((journal) => everyRelease(journal, since));
      shown[since ?? 'ever'] = releases.map((release) => release.batchId);
      const args = ['status', '--approvals', ...(since ? ['--since', since] : [])];
      const json = await runCli(['--json', ...args], { env });
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(
        releases.map(({ totals, ...release }) => ({ ...release, done: describeTotals(totals) })),
      );
      for (const [language, locale] of [
        ['en', 'C.UTF-8'],
        ['pt-BR', 'pt_BR.UTF-8'],
      ] as const) {
        const words = CATALOGS[language];
        const text = await runCli(args, { env: { ...env, LC_ALL: locale } });
        const lines = releases.map(({ totals, ...release }) =>
          say(words, { code: 'approvalsRelease', ...release, done: describeTotals(totals, words) }),
        );
        expect(text.stdout.trimEnd().split('\n')).toEqual(
          lines.length > 0 ? lines : [say(words, { code: 'approvalsNone', since: since ?? null })],
        );
      }
    }
    // The history reaches each edge of a day: approvals across midnight, in UTC and at home.
    expect(shown).toEqual({
      ever: [1, 4, 5, 6, 8],
      '2024-03-01': [1, 4, 5, 6, 8],
      '2026-10-31': [4, 5, 8],
      '2026-11-01': [4, 8],
      '2026-11-02': [],
      '2999-01-01': [],
    });
    if (store !== 'SQLite') return;
    // Read through indexes: never every batch, nor every event.
    const ran = await recordStatements(async () => {
      expect((await runCli(['status', '--approvals', '--since', '2026-11-01'], { env })).code).toBe(
        0,
      );
    });
    const plans = ran.map((statement) => planOf(home.folders.journal, statement).join('; '));
    expect(plans.filter((plan) => /\bSCAN (batches|batch_events)\b/.test(plan))).toEqual([]);
    expect(plans.join('\n')).toContain('USING INDEX batch_events_approved_by_time (at>?)');
  });
});
