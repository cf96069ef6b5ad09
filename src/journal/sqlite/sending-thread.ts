/**
 * The journal's writes on the sending path, on a thread of their own with a connection of
 * their own to the journal file: a claim with the answers riding on it, answers alone,
 * claims given back. Each is the very transaction the journal runs itself (payouts.ts),
 * committed FULL on that thread before its promise resolves, so a claim's `sending` mark
 * is still on disk before its request may leave. What moves is where the wait for the
 * disk, and for another process's write lock, is spent: not on the event loop, where
 * answers arrive and places free. Those commits held the loop for a fifth of a run at
 * c=64 and 50 ms (see docs/benchmarks.md).
 *
 * The thread starts at the first such write (a command that never sends never starts
 * it) and ends with the journal. Each call carries the journal's clock and recovery, so
 * the thread decides by the same time and the same rules as the journal that asked.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { JournalError } from '../journal-error.js';
import type { JournalPayouts } from '../journal.js';
import type { Synchronous } from './context.js';

/** The journal's methods the thread runs. */
export type SendingMethod = 'claimToSend' | 'moveMany' | 'unclaim';
export type SendingMethods = Pick<Synchronous<JournalPayouts>, SendingMethod>;

/** One call, as the thread receives it. */
export type SendingCall = {
  [M in SendingMethod]: {
    id: number;
    method: M;
    args: Parameters<SendingMethods[M]>;
    now: number;
    recoverySince: number | null;
  };
}[SendingMethod];

/** What crosses back for a failure: a thrown object loses its class between threads. */
export interface FailureShape {
  name: string;
  message: string;
  code: unknown;
}

export type SendingReply = { id: number; result: unknown } | { id: number; failure: FailureShape };

export function failureShape(error: unknown): FailureShape {
  const { name, message, code } =
    error instanceof Error
      ? (error as Error & { code?: unknown })
      : {
          name: 'Error',
          message: String(error),
          code: undefined,
        };
  return { name, message, code };
}

/**
 * The failure as its caller acts on it: a JournalError as one (an intake tells a refusal
 * by its class), any other with SQLite's result code (a full disk, a damaged file, a
 * lock held too long are told by it).
 */
export function failureOf(shape: FailureShape): Error {
  if (shape.name === 'JournalError') return new JournalError(shape.message);
  return Object.assign(new Error(shape.message), { name: shape.name, code: shape.code });
}

export interface SendingThread {
  call<M extends SendingMethod>(
    method: M,
    args: Parameters<SendingMethods[M]>,
  ): Promise<ReturnType<SendingMethods[M]>>;
  /** Ends the thread once what was asked before is answered; its connection closed. */
  close(): Promise<void>;
}

export function sendingThread(
  path: string,
  now: () => number,
  recoverySince: () => number | null,
): SendingThread {
  let worker: Worker | undefined;
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

  const start = (): Worker => {
    const started = new Worker(workerFile(), { workerData: { path } });
    // Only a call waiting for its answer keeps the process alive.
    started.unref();
    started.on('message', (reply: SendingReply) => {
      const call = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) started.unref();
      if (!call) return;
      if ('failure' in reply) call.reject(failureOf(reply.failure));
      else call.resolve(reply.result as never);
    });
    // Its connection could not be opened, or the thread died: what waits fails, as the
    // journal failing would fail it, and so does every later call.
    started.on('error', (error) => endAll(failureOf(failureShape(error))));
    started.on('exit', (code) =>
      endAll(new JournalError(`the journal's sending thread ended (exit code ${code})`)),
    );
    return started;
  };

  return {
    call(method, args) {
      if (ended) return Promise.reject(ended);
      worker ??= start();
      const thread = worker;
      const id = next++;
      thread.ref();
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const call = { id, method, args, now: now(), recoverySince: recoverySince() };
        thread.postMessage(call as SendingCall);
      });
    },
    async close() {
      const thread = worker;
      ended ??= new JournalError('the journal is closed');
      if (!thread) return;
      const exited = once(thread, 'exit');
      // Its end is awaited: the process must not end first (exit 13, a wait unfinished).
      thread.ref();
      thread.postMessage('close');
      await exited;
    },
  };
}

/**
 * The thread's script: beside this module once built. Under the test runner this module
 * is its TypeScript source, which a thread cannot load: the thread runs the build of it
 * (`npm test` builds first).
 */
function workerFile(): URL {
  const here = import.meta.url;
  const built = here.endsWith('.ts') ? here.replace(/\/src\/(?!.*\/src\/)/, '/dist/') : here;
  return new URL('./sending-worker.js', built);
}
