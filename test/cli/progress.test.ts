import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  progressOf,
  progressText,
  startProgress,
  type StateCounts,
} from '../../src/cli/progress.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { en } from '../../src/messages/en.js';
import { ptBR } from '../../src/messages/pt-BR.js';
import { sqliteBinding } from '../../src/runtime/sqlite.js';
import { addPayouts } from '../bench/support/old-payouts.mjs';
import { useTempFolder } from '../support/files.js';
import { planOf, recordStatements } from '../support/statements.js';

const counts = (entries: Record<string, number>): StateCounts =>
  Object.fromEntries(Object.entries(entries).map(([state, count]) => [state, { count }]));

describe('progressOf: a pass counted from its start, not the whole journal', () => {
  it.each([
    ['a new journal, all sent, some settled', {}, { pending: 6, paid: 4 }, [10, 10, 0, 0, 4, 5]],
    [
      'last month paid (100), this run 10 new',
      { paid: 100 },
      { paid: 103, pending: 5, queued: 2 },
      [10, 8, 0, 0, 3, 4],
    ],
    [
      'two left pending by the last run, settled now',
      { paid: 100, pending: 2 },
      { paid: 102 },
      [2, 2, 0, 0, 2, 0],
    ],
    ['held rows are in play but not sent', {}, { held: 3, paid: 1 }, [4, 1, 0, 0, 1, 0.5]],
    // The gateway has not taken a row still sending, nor one whose answer was lost.
    [
      'rows sending or to check are not sent',
      {},
      { sending: 2, unknown: 1, pending: 3, paid: 1 },
      [7, 4, 2, 1, 1, 2],
    ],
    [
      'left to check by the last run, taken by the gateway now',
      { unknown: 2 },
      { pending: 2 },
      [2, 2, 0, 0, 0, 1],
    ],
  ] as const)('%s', (_what, start, now, [total, sent, sending, toCheck, settled, perSecond]) => {
    const progress = progressOf(counts(start), counts(now), 2_000);
    expect(progress).toEqual({ total, sent, sending, toCheck, settled, perSecond });
  });

  it('draws a bar of what settled on a terminal, plain text otherwise', () => {
    const progress = { total: 8, sent: 8, sending: 0, toCheck: 0, settled: 4, perSecond: 12.345 };
    expect(progressText(progress, false, en)).toBe('8/8 sent · 4 settled · 12.3 rows/s');
    expect(progressText(progress, true, en)).toBe(
      `[${'#'.repeat(12)}${'-'.repeat(12)}] 8/8 sent · 4 settled · 12.3 rows/s`,
    );
    const none = { total: 0, sent: 0, sending: 0, toCheck: 0, settled: 0, perSecond: 0 };
    expect(progressText(none, true, en)).toMatch(/^\[-{24}\] 0\/0 sent/);
  });

  it('says apart the rows sending and to check, in the language of the home', () => {
    const progress = { total: 7, sent: 4, sending: 2, toCheck: 1, settled: 1, perSecond: 2 };
    expect(progressText(progress, false, en)).toBe(
      '4/7 sent · 2 sending · 1 to check · 1 settled · 2.0 rows/s',
    );
    expect(progressText(progress, false, ptBR)).toBe(
      '4/7 enviados · 2 enviando · 1 a conferir · 1 liquidado · 2,0 linhas/s',
    );
  });
});

/** What a terminal shows of `text`: `\r` back to the line's start, `ESC[K` erases the rest. */
function screenOf(text: string): string[] {
  const lines = [''];
  let column = 0;
  for (const part of text.split(/(\r|\n|\x1b\[K)/)) {
    const line = lines[lines.length - 1] ?? '';
    if (part === '\r') column = 0;
    else if (part === '\n') {
      lines.push('');
      column = 0;
    } else if (part === '\x1b[K') lines[lines.length - 1] = line.slice(0, column);
    else {
      lines[lines.length - 1] = line.slice(0, column) + part + line.slice(column + part.length);
      column += part.length;
    }
  }
  return lines;
}

describe('the bar on a terminal', () => {
  const folder = useTempFolder();

  it('a remark said while the bar is drawn has a line of its own', async () => {
    const journal = await openJournal(sqliteJournalAt(join(folder(), 'journal.db')), {
      now: () => Date.now(),
    });
    let written = '';
    const stderr = { write: (chunk: string | Uint8Array) => (written += String(chunk)) };
    const progress = await startProgress(
      journal,
      'bar',
      stderr,
      (text) => stderr.write(`${text}\n`),
      en,
    );
    try {
      for (const until = Date.now() + 10_000; !written.includes('\r'); await delay(20)) {
        if (Date.now() > until) throw new Error('the bar was never drawn');
      }
      progress.note('the gateway answered status "limbo", which payouts does not know');
    } finally {
      await progress.stop();
      await journal.close();
    }
    // The remark a line of its own, the bar one too, and nothing after its last line.
    expect(screenOf(written).join('\n')).toMatch(
      /^the gateway answered status "limbo", which payouts does not know\n\[[#-]{24}\] 0\/0 sent · 0 settled · 0\.0 rows\/s\n$/,
    );
  });
});

describe("a run's progress", () => {
  const folder = useTempFolder();

  it("reads this run's batches, never the payouts of finished ones", async () => {
    const path = join(folder(), 'journal.db');
    await (await openJournal(sqliteJournalAt(path), { now: () => Date.now() })).close();
    const db = new (sqliteBinding())(path);
    try {
      addPayouts(db, { count: 1_000, state: 'paid' });
      addPayouts(db, { count: 2, state: 'pending' });
    } finally {
      db.close();
    }
    const journal = await openJournal(sqliteJournalAt(path), { now: () => Date.now() });
    let written = '';
    const stderr = { write: (chunk: string | Uint8Array) => (written += String(chunk)) };
    const ran = await recordStatements(async () => {
      try {
        const progress = await startProgress(journal, 'lines', stderr, () => undefined, en);
        await progress.stop();
      } finally {
        await journal.close();
      }
    });
    // The two left pending by an earlier run are this run's to follow; the paid ones are not.
    expect(written).toBe('progress: 2/2 sent · 0 settled · 0.0 rows/s\n');
    const scans = ran.flatMap((statement) =>
      planOf(path, statement).filter((line) => /^SCAN (payouts|batches)\b/.test(line)),
    );
    expect(scans).toEqual([]);
  });
});
