/**
 * The gateway's answers, written to the journal in groups: with the next claim, in its
 * commit (`withAnswers`), or in a commit of their own when none comes within `groupMs`
 * (the queue is empty, a pause), when `groupSize` wait, or when asked (`flush`: the pool
 * ran dry, the run stopped). An answer not yet written when the process dies leaves its
 * row `sending`, which the next run resolves by lookup.
 */
import type { JournalAnswers, Move } from '../journal/journal.js';
import { failpoint } from '../runtime/failpoint.js';

export interface AnswerWriter {
  /** Keeps an answer's move to be written with the others. */
  add(move: Move): void;
  /**
   * Runs a claim's commit with the answers waiting written in it; when the commit fails,
   * none of them was written, and they wait again.
   */
  withAnswers<T>(commit: (answers: readonly Move[]) => Promise<T>): Promise<T>;
  /**
   * Writes the answers waiting in a commit of their own, after the groups on their way,
   * those a failed group put back included; resolves once all are written or have failed
   * (never rejects: see `fail`).
   */
  flush(): Promise<void>;
  /** Answers waiting or on their way to the journal. */
  readonly unwritten: number;
}

export function createAnswerWriter(options: {
  journal: JournalAnswers;
  groupMs: number;
  groupSize: number;
  /**
   * A group's write failed, with the journal's error as it is: its answers wait again,
   * for the next commit; the run ends with the error.
   */
  fail: (error: unknown) => void;
  /** A group is in the journal: what reads it now sees its answers. */
  written?: (group: readonly Move[]) => void;
}): AnswerWriter {
  const { journal, groupMs, groupSize, fail, written } = options;
  let waiting: Move[] = [];
  let onTheirWay = 0;
  let timer: NodeJS.Timeout | undefined;
  // One group after another, so that the last one is awaited before the run ends.
  let writing: Promise<void> = Promise.resolve();

  /** The answers waiting, taken for a commit; put back in front if it fails. */
  const take = (): Move[] => {
    clearTimeout(timer);
    timer = undefined;
    const group = waiting;
    waiting = [];
    onTheirWay += group.length;
    return group;
  };
  const putBack = (group: Move[]): void => {
    waiting = [...group, ...waiting];
  };

  // A write is queued that has not yet taken its group: it takes what waits at its turn.
  let queued = false;
  const flush = (): Promise<void> => {
    if (queued) return writing;
    queued = true;
    writing = writing.then(async () => {
      queued = false;
      // Taken at its turn, not when asked: answers a failed write put back go in this one.
      const group = take();
      if (group.length === 0) return;
      try {
        failpoint('before-answer-commit');
        await journal.moveMany(group);
      } catch (error) {
        putBack(group);
        fail(error);
        return;
      } finally {
        onTheirWay -= group.length;
      }
      // Outside the try: what the caller does once told must never put a written group back.
      written?.(group);
    });
    return writing;
  };

  return {
    add(move) {
      waiting.push(move);
      if (waiting.length >= groupSize) void flush();
      else timer ??= setTimeout(() => void flush(), groupMs);
    },
    async withAnswers(commit) {
      const group = take();
      let result: Awaited<ReturnType<typeof commit>>;
      try {
        if (group.length > 0) failpoint('before-answer-commit');
        result = await commit(group);
      } catch (error) {
        putBack(group);
        throw error;
      } finally {
        onTheirWay -= group.length;
      }
      if (group.length > 0) written?.(group);
      return result;
    },
    flush,
    get unwritten() {
      return waiting.length + onTheirWay;
    },
  };
}
