/**
 * The journal's sending thread (see sending-thread.ts): a connection of its own to the
 * journal file, answering one call at a time with the very transaction the journal runs
 * itself, at the asking journal's time and recovery.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Database } from '../sqlite.js';
import { connect } from './connection.js';
import { contextOf } from './context.js';
import { createPayouts } from './payouts.js';
import { createRows } from './rows.js';
import {
  failureShape,
  type FailureShape,
  type SendingCall,
  type SendingReply,
} from './sending-thread.js';

const port = parentPort;
if (!port) throw new Error('sending-worker.js runs as the journal sending thread only');
const { path } = workerData as { path: string };

type Payouts = ReturnType<typeof createPayouts>;

let asked = 0;
let recoverySince: number | null = null;

/**
 * The connection and what runs on it; or why it could not be opened, told to every call
 * as the journal failing (a thrown SQLite error would cross to the journal without its
 * message: its class cannot be copied between threads).
 */
function opened(): { db: Database; payouts: Payouts } | FailureShape {
  try {
    const db = connect(path);
    const context = contextOf(db, () => asked);
    const payouts = createPayouts(context, createRows(context), {
      recoverySince: () => recoverySince,
      // The asking journal tells its marker once the answer reaches it.
      committed: () => undefined,
    });
    return { db, payouts };
  } catch (error) {
    return failureShape(error, path);
  }
}
const journal = opened();

function run(payouts: Payouts, call: SendingCall): unknown {
  switch (call.method) {
    case 'claimToSend':
      return payouts.claimToSend(...call.args);
    case 'moveMany':
      return payouts.moveMany(...call.args);
    case 'unclaim':
      return payouts.unclaim(...call.args);
  }
}

function answer(call: SendingCall): SendingReply {
  if (!('db' in journal)) return { id: call.id, failure: journal };
  try {
    return { id: call.id, result: run(journal.payouts, call) };
  } catch (error) {
    return { id: call.id, failure: failureShape(error, path) };
  }
}

port.on('message', (call: SendingCall | 'close') => {
  if (call === 'close') {
    if ('db' in journal) journal.db.close();
    port.close();
    return;
  }
  asked = call.now;
  recoverySince = call.recoverySince;
  port.postMessage(answer(call));
});
