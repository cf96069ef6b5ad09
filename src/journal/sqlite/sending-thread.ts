/**
 * The journal's writes on the sending path, on a thread of their own with a connection of
 * their own to the journal file: a claim with the answers riding on it, answers alone,
 * claims given back. Each is the very transaction the journal runs itself (payouts.ts),
 * committed FULL on that thread before its promise resolves, so a claim's `sending` mark
 * is still on disk before its request may leave. What moves is where the wait for the
 * disk, and for another process's write lock, is spent: not on the event loop, where
 * answers arrive and places free (docs/benchmarks.md).
 *
 * The thread starts at the first such write (a command that never sends never starts
 * it) and ends with the journal. Each call carries the journal's clock and recovery, so
 * the thread decides by the same time and the same rules as the journal that asked.
 */
import { Worker } from 'node:worker_threads';
import type { Said } from '../../messages/said.js';
import { JournalError, type JournalErrorKind } from '../journal-error.js';
import type { JournalAnswers, JournalSending } from '../journal.js';
import type { Synchronous } from './context.js';
import { journalErrorOf } from './store-errors.js';

/** The journal's methods the thread runs. */
export type SendingMethod = 'claimToSend' | 'moveMany' | 'unclaim';
export type SendingMethods = Pick<Synchronous<JournalSending & JournalAnswers>, SendingMethod>;

/** One call, as the thread receives it. */
export type SendingCall = {
  [M in SendingMethod]: {
    id: number;
    method: M;
    args: Parameters<SendingMethods[M]>;
    /**
     * The asking journal's time when it asked: the thread's transaction is timed by it,
     * as the journal's own would be by its clock (tests move that clock). A claim that
     * waits there (behind another call, for another process's lock) keeps the time it was
     * asked at: its lease and last send start then, and the engine counts a row claimed
     * ahead as waiting from that time (see claimRows in engine/claim-ahead.ts).
     */
    now: number;
    recoverySince: number | null;
  };
}[SendingMethod];

/**
 * What crosses back for a failure, the JournalError the journal at `path` makes of it: a
 * thrown object loses its class between threads.
 */
export interface FailureShape {
  kind: JournalErrorKind;
  message: string;
  storeCode: string | undefined;
  path: string | undefined;
  refusal: Said | undefined;
  stack: string | undefined;
}

export type SendingReply = { id: number; result: unknown } | { id: number; failure: FailureShape };

export function failureShape(error: unknown, path: string): FailureShape {
  const thrown = error instanceof Error ? error : threadFailure(error);
  const { kind, message, storeCode, path: at, refusal } = journalErrorOf(thrown, path);
  return { kind, message, storeCode, path: at, refusal, stack: thrown.stack };
}

/** What a thread that died of a throw that is not an Error sends: its own fields only. */
function threadFailure(thrown: unknown): Error {
  const code = (thrown as { code?: unknown } | null)?.code;
  if (typeof thrown !== 'object' || thrown === null) return new Error(String(thrown));
  const error = new Error(
    `the journal's sending thread failed${code === undefined ? '' : ` (${String(code)})`}`,
  );
  error.stack = undefined;
  return Object.assign(error, { code });
}

/**
 * The failure as its caller acts on it, the JournalError of its kind (an intake tells the
 * journal's failure from a file's by it), with the thread's stack, where it was thrown.
 */
export function failureOf(shape: FailureShape): JournalError {
  const { kind, message, storeCode, path, refusal, stack } = shape;
  const error = new JournalError(kind, message, {
    ...(storeCode === undefined ? {} : { storeCode }),
    ...(path === undefined ? {} : { path }),
    ...(refusal === undefined ? {} : { refusal }),
  });
  if (stack !== undefined) error.stack = stack;
  return error;
}

/** The thread's script, beside this module. */
const WORKER_FILE = new URL('./sending-worker.js', import.meta.url);

export interface SendingThread {
  call<M extends SendingMethod>(
    method: M,
    args: Parameters<SendingMethods[M]>,
  ): Promise<ReturnType<SendingMethods[M]>>;
  /**
   * Ends the thread once what was asked before is answered, its connection closed; at
   * once when it never started or has already ended.
   */
  close(): Promise<void>;
}

export function sendingThread(
  path: string,
  now: () => number,
  recoverySince: () => number | null,
): SendingThread {
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  let closing = false;
  let ended: Error | undefined;
  let next = 0;
  const waiting = new Map<
    number,
    { resolve: (result: never) => void; reject: (e: Error) => void }
  >();

  const endAll = (error: Error): void => {
    ended ??= error;
    for (const { reject } of waiting.values()) reject(ended);
    waiting.clear();
  };
  // Only a call waiting for its answer, or the thread's closing, keeps the process alive.
  const holdProcess = (thread: Worker): void => {
    if (closing || waiting.size > 0) thread.ref();
    else thread.unref();
  };

  const start = (): Worker => {
    const started = new Worker(WORKER_FILE, { workerData: { path } });
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    started.on('message', (reply: SendingReply) => {
      const call = waiting.get(reply.id);
      waiting.delete(reply.id);
      holdProcess(started);
      if (!call) return;
      if ('failure' in reply) call.reject(failureOf(reply.failure));
      else call.resolve(reply.result as never);
    });
    // Its connection could not be opened, or the thread died: what waits fails, as the
    // journal failing would fail it, and so does every later call.
    started.on('error', (error) => endAll(failureOf(failureShape(error, path))));
    started.on('exit', (code) =>
      endAll(
        new JournalError('unavailable', `the journal's sending thread ended (exit code ${code})`, {
          path,
        }),
      ),
    );
    return started;
  };

  return {
    call(method, args) {
      if (ended) return Promise.reject(ended);
      worker ??= start();
      const thread = worker;
      const id = next++;
      return new Promise((resolve, reject) => {
        const call = {
          id,
          method,
          args,
          now: now(),
          recoverySince: recoverySince(),
        } as SendingCall;
        waiting.set(id, { resolve, reject });
        try {
          thread.postMessage(call);
        } catch (error) {
          waiting.delete(id);
          reject(journalErrorOf(error, path));
        }
        holdProcess(thread);
      });
    },
    async close() {
      ended ??= new JournalError('unavailable', 'the journal is closed', { path });
      if (!worker || closing) return exited;
      closing = true;
      // Its end is awaited: the process must not end first (exit 13, a wait unfinished).
      holdProcess(worker);
      // A thread already ended takes no message, and its exit has been seen.
      worker.postMessage('close');
      return exited;
    },
  };
}
