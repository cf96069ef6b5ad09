/**
 * Notifications of the journal's database heard on a connection of their own: LISTEN
 * belongs to a session, which a pooled connection would lose once given back. A lost
 * connection (a restart, a cut) is made again with a growing wait, never ending the process.
 */
import type pg from 'pg';
import { BoundedClient } from './connection.js';

/** Where a host that took a postback tells the others the payout it named (its orderId). */
export const POSTBACK_CHANNEL = 'payouts_postback';
/** Where a host that made rows sendable (a file read whole, a batch approved) tells the others. */
export const QUEUED_CHANNEL = 'payouts_queued';

const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 10_000;
/** A goodbye the server has not seen off this soon is not waited for: a cut never does. */
const END_WAIT_MS = 1_000;

/** Ends `client` within END_WAIT_MS: its socket destroyed when its peer does not answer. */
async function endSoon(client: pg.Client): Promise<void> {
  const cut = setTimeout(() => client.connection.stream.destroy(), END_WAIT_MS);
  try {
    await client.end();
  } catch {
    // Ended all the same: its socket is closed.
  } finally {
    clearTimeout(cut);
  }
}

export interface Heard {
  /** A notification's payload. */
  payload: (payload: string) => void;
  /** Listening again after a loss: what was notified meanwhile went unheard. */
  again: () => void;
}

/**
 * Listens on `channel` until the returned stop is called; resolves once listening, or once
 * the first attempt failed (it is tried again meanwhile, as after a loss).
 */
export async function listenTo(
  url: string,
  channel: string,
  heard: Heard,
): Promise<() => Promise<void>> {
  let stopped = false;
  // The connection made last, listening or on its way: a stop ends it where it stands.
  let latest: pg.Client | undefined;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;
  let lost = false;

  const later = (): void => {
    if (stopped) return;
    lost = true;
    retry = setTimeout(() => void connect(), retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  const connect = async (): Promise<void> => {
    const client = new BoundedClient({ connectionString: url });
    latest = client;
    // Unheard, a connection's error event ends the process; its end says it is lost.
    client.on('error', () => undefined);
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined)
        heard.payload(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch {
      await endSoon(client);
      return later();
    }
    if (stopped) return endSoon(client);
    client.once('end', later);
    retryMs = FIRST_RETRY_MS;
    if (lost) heard.again();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    if (latest) await endSoon(latest);
  };
}
