/**
 * The journal's sending thread (see sending-thread.ts): a connection of its own to the
 * journal file, answering one call at a time with the very transaction the journal runs
 * itself, at the asking journal's time and recovery.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from './connection.js';
import { contextOf } from './context.js';
import { createPayouts } from './payouts.js';
import { createRows } from './rows.js';
import { failureShape, type SendingCall, type SendingReply } from './sending-thread.js';

const port = parentPort;
if (!port) throw new Error('sending-worker.js runs as the journal sending thread only');

const db = connect((workerData as { path: string }).path);
let at = 0;
let recoverySince: number | null = null;
const context = contextOf(db, () => at);
const payouts = createPayouts(context, createRows(context), {
  recoverySince: () => recoverySince,
  // The asking journal tells its marker once the answer reaches it.
  committed: () => undefined,
});

function run(call: SendingCall): unknown {
  switch (call.method) {
    case 'claimToSend':
      return payouts.claimToSend(...call.args);
    case 'moveMany':
      return payouts.moveMany(...call.args);
    case 'unclaim':
      return payouts.unclaim(...call.args);
  }
}

port.on('message', (call: SendingCall | 'close') => {
  if (call === 'close') {
    db.close();
    port.close();
    return;
  }
  at = call.now;
  recoverySince = call.recoverySince;
  let reply: SendingReply;
  try {
    reply = { id: call.id, result: run(call) };
  } catch (error) {
    reply = { id: call.id, failure: failureShape(error) };
  }
  port.postMessage(reply);
});
