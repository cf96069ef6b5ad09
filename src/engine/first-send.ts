/**
 * The gateway's own record as a guard: before a pass sends a batch's queued rows, a few
 * of them (see sampleLines) are looked up. One the gateway already has, which this
 * journal never sent, means the journal is behind the gateway (a home folder restored
 * from a backup with its marker, or copied): sending would pay again what it forgot.
 */
import type { FirstSendSample, JournalRecovery, JournalReports } from '../journal/journal.js';
import { decideFirstSendLookup, type FirstSendLookup } from './decisions.js';
import type { EngineDeps } from './engine.js';
import { backoffMs } from './policy.js';

export type FirstSendCheck =
  | { kind: 'clear' }
  | {
      kind: 'behind';
      fileName: string;
      orderId: string;
      line: number;
      transactionId: number;
      statusRaw: string;
    }
  /** A lookup did not get through: nothing may be sent until one does. */
  | { kind: 'unchecked'; why: string; failed: boolean };

/** How often one orderId is asked before the batch waits for the next run. */
const MAX_ASKS = 4;

/** Looks up the samples of every batch with rows about to be sent. */
export async function checkFirstSends(
  deps: Pick<
    EngineDeps<JournalRecovery & Pick<JournalReports, 'payout'>>,
    'journal' | 'gateway' | 'pool' | 'random'
  >,
): Promise<FirstSendCheck> {
  const { pool, gateway } = deps;
  // Each sample also as the batches of its name a restored journal may have forgotten.
  const pending = (await deps.journal.firstSendSamples()).flatMap((batch: FirstSendSample) =>
    batch.payouts.flatMap(({ orderId, line, forgotten }) =>
      [orderId, ...forgotten].map((asked) => ({
        orderId: asked,
        line,
        fileName: batch.fileName,
        asks: 0,
      })),
    ),
  );
  const answers: { asked: (typeof pending)[number]; lookup: FirstSendLookup }[] = [];
  while (pending.length > 0) {
    const grant = await pool.grant();
    if (grant === 0) return { kind: 'unchecked', why: 'asked to stop', failed: false };
    await pool.runAll(pending.splice(0, grant), async (payout) => {
      const answer = await pool.ask((call) =>
        gateway.getTransactionByOrderId(payout.orderId, call),
      );
      const lookup = decideFirstSendLookup(answer);
      const asks = payout.asks + 1;
      // Nothing is sent meanwhile, so asking again costs only the wait: the whole pool
      // waits, as for a failed create, and a 429 as long as it asks.
      if (lookup.kind === 'unanswered' && lookup.signal.kind !== 'stop' && asks < MAX_ASKS) {
        const { signal } = lookup;
        pool.pause(
          signal.kind === 'pause' && signal.ms !== undefined
            ? signal.ms
            : backoffMs(asks, deps.random),
          signal.kind === 'pause' ? 'rate-limited' : 'unreachable',
        );
        pending.push({ ...payout, asks });
        return;
      }
      answers.push({ asked: payout, lookup });
    });
  }
  for (const { asked: payout, lookup } of answers) {
    if (lookup.kind === 'found') {
      const { fileName, orderId, line } = payout;
      // Claimed and sent since it was sampled, by another host of a shared journal: not forgotten.
      const now = await deps.journal.payout(orderId);
      if (now && now.state !== 'queued' && now.attempts > 0) continue;
      const { transactionId, statusRaw } = lookup;
      return { kind: 'behind', fileName, orderId, line, transactionId, statusRaw };
    }
  }
  for (const { asked: payout, lookup } of answers) {
    if (lookup.kind !== 'unanswered') continue;
    const { signal } = lookup;
    return {
      kind: 'unchecked',
      why:
        signal.kind === 'stop'
          ? signal.why
          : `the gateway could not be asked whether it already has payout ${payout.orderId} of ${payout.fileName} (${lookup.message}): nothing was sent; run again later`,
      failed: signal.kind === 'stop',
    };
  }
  return { kind: 'clear' };
}
