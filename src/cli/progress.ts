/**
 * Progress of a pass on stderr, read from the journal (the one place that knows): a bar
 * redrawn in place on a terminal, or a plain `progress:` line now and then (the demo's,
 * whose output people read in a log). Counted from the pass's start, so months of paid
 * payouts in the journal are not this run's.
 */
import type { JournalReports } from '../journal/journal.js';
import type { RowState } from '../journal/states.js';
import type { TextOutput } from '../runtime/io.js';

const EVERY_MS = 200;
const LINE_EVERY_MS = 2_000;
const BAR_WIDTH = 24;

export type StateCounts = Partial<Record<RowState, { count: number }>>;

const SETTLED: readonly RowState[] = ['paid', 'failed', 'canceled', 'refunded'];
const IN_FLIGHT: readonly RowState[] = ['sending', 'unknown', 'pending'];

export interface Progress {
  /** Rows this pass has in play: not settled when it began, or journaled since. */
  total: number;
  /** Of those, sent at least once (settled, or at the gateway). */
  sent: number;
  settled: number;
  /** Rows sent by this pass a second, since it began. */
  perSecond: number;
}

/** Pure: the progress between the counts at the start and now. */
export function progressOf(start: StateCounts, now: StateCounts, elapsedMs: number): Progress {
  const sum = (counts: StateCounts, states?: readonly RowState[]) =>
    Object.entries(counts)
      .filter(([state]) => states === undefined || states.includes(state as RowState))
      .reduce((total, [, entry]) => total + (entry?.count ?? 0), 0);
  const settledBefore = sum(start, SETTLED);
  const settled = sum(now, SETTLED) - settledBefore;
  const sent = settled + sum(now, IN_FLIGHT);
  const sentByThisPass = sent - sum(start, IN_FLIGHT);
  return {
    total: sum(now) - settledBefore,
    sent,
    settled,
    perSecond: Math.max(0, sentByThisPass) / Math.max(0.001, elapsedMs / 1000),
  };
}

/** `10/17 sent · 4 settled · 50.0 rows/s`, and on a terminal a bar of what settled. */
export function progressText(progress: Progress, bar: boolean): string {
  const text = `${progress.sent}/${progress.total} sent · ${progress.settled} settled · ${progress.perSecond.toFixed(1)} rows/s`;
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
  journal: JournalReports,
  mode: 'off' | 'bar' | 'lines',
  stderr: TextOutput,
  note: (text: string) => void,
): Promise<ProgressShown> {
  if (mode === 'off') return { note, stop: async () => undefined };
  const began = Date.now();
  const start = await journal.countsByState();
  let lastLine = 0;
  const draw = async (final: boolean): Promise<void> => {
    const text = progressText(
      progressOf(start, await journal.countsByState(), Date.now() - began),
      mode === 'bar',
    );
    if (mode === 'bar') {
      // Back to the line's start, redraw, and erase what a longer earlier line left.
      stderr.write(`\r${text}\x1b[K${final ? '\n' : ''}`);
    } else if (final || Date.now() - lastLine >= LINE_EVERY_MS) {
      stderr.write(`progress: ${text}\n`);
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
