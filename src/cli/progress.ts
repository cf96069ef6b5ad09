/**
 * Progress of a pass on stderr, read from the journal (the one place that knows): a bar
 * redrawn in place on a terminal, or a plain `progress:` line now and then (the demo's,
 * whose output people read in a log). Counted from the pass's start over the batches it
 * may move, so months of paid payouts in the journal are not this run's, nor read.
 */
import { BATCH_STATES } from '../journal/batch-states.js';
import type { Journal } from '../journal/journal.js';
import type { RowState } from '../journal/states.js';
import type { Progress, SaidTexts } from '../messages/said.js';
import { say } from '../messages/say.js';
import type { TextOutput } from '../runtime/io.js';

const EVERY_MS = 200;
const LINE_EVERY_MS = 2_000;
const BAR_WIDTH = 24;

export type StateCounts = Partial<Record<RowState, { count: number }>>;

const SETTLED: readonly RowState[] = ['paid', 'failed', 'canceled', 'refunded'];

/** Pure: the progress between the counts at the start and now. */
export function progressOf(start: StateCounts, now: StateCounts, elapsedMs: number): Progress {
  const sum = (counts: StateCounts, states?: readonly RowState[]) =>
    Object.entries(counts)
      .filter(([state]) => states === undefined || states.includes(state as RowState))
      .reduce((total, [, entry]) => total + (entry?.count ?? 0), 0);
  const settledBefore = sum(start, SETTLED);
  const settled = sum(now, SETTLED) - settledBefore;
  const sent = settled + sum(now, ['pending']);
  const sentByThisPass = sent - sum(start, ['pending']);
  return {
    total: sum(now) - settledBefore,
    sent,
    sending: sum(now, ['sending']),
    toCheck: sum(now, ['unknown']),
    settled,
    perSecond: Math.max(0, sentByThisPass) / Math.max(0.001, elapsedMs / 1000),
  };
}

/** `10/17 sent · 4 settled · 50.0 rows/s` in `words`, and on a terminal a bar of what settled. */
export function progressText(progress: Progress, bar: boolean, words: { said: SaidTexts }): string {
  const text = say(words, { code: 'progress', ...progress });
  if (!bar) return text;
  const filled =
    progress.total === 0 ? 0 : Math.round((progress.settled / progress.total) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${text}`;
}

/** The progress shown, and how a remark (`note`) is said while it is. */
export interface ProgressShown {
  note(text: string): void;
  stop(): Promise<void>;
}

/**
 * `off`; `bar`, redrawn in place (a terminal); `lines`, one every 2 s and at the end; on
 * `stderr`. A remark said while it shows goes through its `note`, which says it with `note`.
 */
export async function startProgress(
  journal: Pick<Journal, 'batchesIn' | 'countsOfBatch'>,
  mode: 'off' | 'bar' | 'lines',
  stderr: TextOutput,
  note: (text: string) => void,
  words: { said: SaidTexts },
): Promise<ProgressShown> {
  if (mode === 'off') return { note, stop: async () => undefined };
  const began = Date.now();
  // Every batch not done when seen, kept once seen: its rows settling are this run's work.
  const batches = new Set<number>();
  const counts = async (): Promise<StateCounts> => {
    for (const state of BATCH_STATES.filter((state) => state !== 'done')) {
      for (const batch of await journal.batchesIn(state)) batches.add(batch.id);
    }
    const total: Partial<Record<RowState, { count: number }>> = {};
    for (const batchId of batches) {
      for (const [state, { count }] of Object.entries(await journal.countsOfBatch(batchId))) {
        total[state as RowState] = { count: (total[state as RowState]?.count ?? 0) + count };
      }
    }
    return total;
  };
  const start = await counts();
  let lastLine = 0;
  const draw = async (final: boolean): Promise<void> => {
    const progress = progressOf(start, await counts(), Date.now() - began);
    if (mode === 'bar') {
      // Back to the line's start, redraw, and erase what a longer earlier line left.
      stderr.write(`\r${progressText(progress, true, words)}\x1b[K${final ? '\n' : ''}`);
    } else if (final || Date.now() - lastLine >= LINE_EVERY_MS) {
      const said = { code: 'progress', ...progress } as const;
      stderr.write(`${say(words, { code: 'progressLine', progress: said })}\n`);
      lastLine = Date.now();
    }
  };
  // Not awaited by the timer: a journal that fails ends the pass, which stops the bar.
  const timer = setInterval(() => void draw(false), EVERY_MS);
  return {
    note(text) {
      // The bar's line has no end: the remark takes it, and the next draw is below it.
      if (mode === 'bar') stderr.write('\r\x1b[K');
      note(text);
    },
    async stop() {
      clearInterval(timer);
      await draw(true);
    },
  };
}
