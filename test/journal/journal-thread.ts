/**
 * A journal opened in a worker thread of its own (`node:worker_threads`) on the store the
 * test's other journals share: its calls run at the same time as theirs, as another
 * process's would (a synchronous store such as better-sqlite3 interleaves nothing within
 * one thread). Each call carries the test's clock. A function cannot cross to a thread:
 * its `takeLock` is told every holder's process still runs, so only a stale heartbeat
 * frees a lock.
 */
import { Worker } from 'node:worker_threads';
import type { Journal } from '../../src/journal/journal.js';

/** How a thread opens a journal on the store: `(await import(module))[opener](location, { now })`. */
export interface OpenedElsewhere {
  module: string;
  opener: string;
  /** What the opener takes, as a worker's data carries it (a structured clone). */
  location: unknown;
}

type Method = {
  [K in keyof Journal]: Journal[K] extends (...args: never[]) => unknown ? K : never;
}[keyof Journal];

export interface JournalThread {
  /** Calls `method` there at the time `now`; a failure keeps its class's name. */
  call<M extends Method>(
    method: M,
    args: Parameters<Journal[M]>,
    now: number,
  ): Promise<Awaited<ReturnType<Journal[M]>>>;
  /** Closes its journal, then ends the thread. */
  close(): Promise<void>;
}

// CommonJS, as an evaluated worker runs; the journal's modules are imported as ESM.
const SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
let now = 0;
const opening = import(workerData.module).then((module) =>
  module[workerData.opener](workerData.location, { now: () => now }),
);
parentPort.on('message', async ({ id, method, args, at }) => {
  try {
    const journal = await opening;
    now = at;
    if (method === 'takeLock') args[3] = () => true;
    parentPort.postMessage({ id, result: await journal[method](...args) });
  } catch (error) {
    parentPort.postMessage({ id, failure: { name: error.name, message: error.message } });
  }
});
`;

export function journalThread(where: OpenedElsewhere): JournalThread {
  const worker = new Worker(SCRIPT, { eval: true, workerData: where });
  let next = 0;
  const waiting = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();
  const failAll = (error: Error): void => {
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the journal's thread ended (exit code ${code})`)));
  worker.on(
    'message',
    (reply: { id: number; result?: unknown; failure?: { name: string; message: string } }) => {
      const call = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (reply.failure) {
        call?.reject(Object.assign(new Error(reply.failure.message), { name: reply.failure.name }));
      } else call?.resolve(reply.result as never);
    },
  );
  const call: JournalThread['call'] = (method, args, now) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      // A function cannot be copied to a thread: takeLock's is made there (see above).
      const copied = args.map((arg: unknown) => (typeof arg === 'function' ? undefined : arg));
      worker.postMessage({ id, method, args: copied, at: now });
    });
  return {
    call,
    async close() {
      try {
        await call('close', [], 0);
      } finally {
        await worker.terminate();
      }
    },
  };
}
