/**
 * Whether the journal in front of us is the one this home folder had: its loss is
 * detected (docs/operations.md, "A lost journal"). Pure: the facts are gathered by the caller.
 */
import type { JournalDescription } from './journal.js';
import { postgresDatabase } from './location.js';
import type { MarkerState } from './marker.js';
import type { JournalState } from './types.js';

/**
 * `missing`, `empty`: no journal, or one with nothing ever journaled, where the home has had one. `replaced`:
 * a journal, but another one than the marker names. `older`: this home's journal, but
 * an older copy of it (its audit ends below what the marker saw sent).
 */
export type LossKind = 'missing' | 'empty' | 'replaced' | 'older';

export interface JournalFacts {
  /** What the journal's store answers of it. */
  store: JournalState;
  marker: MarkerState | undefined;
  /** Files in processing/, archive/ or results/: the home has worked before. */
  homeHasHistory: boolean;
}

export interface OpenedFacts {
  marker: MarkerState | undefined;
  journalId: string;
  highWater: number;
}

/** Before opening: a journal that is not there, or empty, where one has been. */
export function judgeBeforeOpen(facts: JournalFacts): LossKind | undefined {
  if (facts.store === 'present') return undefined;
  if (facts.marker === undefined && !facts.homeHasHistory) return undefined; // a new home
  return facts.store === 'empty' ? 'empty' : 'missing';
}

/** After opening: another journal, or an older copy of this one. */
export function judgeOpened(facts: OpenedFacts): LossKind | undefined {
  const { marker } = facts;
  if (marker === undefined) return undefined; // no word to check against: adopted
  if (facts.journalId !== marker.journalId) return 'replaced';
  if (facts.highWater < marker.highWater) return 'older';
  return undefined;
}

/** What happened, as the first half of a sentence that goes on with what to do. */
export function describeLoss(
  kind: LossKind,
  journalPath: string,
  facts: { marker: MarkerState | undefined; journalId?: string; highWater?: number },
): string {
  const why =
    facts.marker === undefined
      ? 'its processing/, archive/ or results/ folders hold files'
      : `journal.marker beside it names journal ${facts.marker.journalId}`;
  switch (kind) {
    case 'missing':
      return `the journal ${journalPath} is missing, but this home folder has had one (${why})`;
    case 'empty':
      return `the journal ${journalPath} is empty (nothing was ever journaled in it), but this home folder has had one (${why})`;
    case 'replaced':
      return `${journalPath} is another journal (${facts.journalId ?? '?'}) than the one this home folder had (${facts.marker?.journalId ?? '?'}): copied from another home, or made anew`;
    case 'older':
      return `the journal ${journalPath} is older than this home folder's (its history ends at entry ${facts.highWater ?? '?'}; payouts had been sent up to entry ${facts.marker?.highWater ?? '?'}): a restored backup, or a copy`;
  }
}

/** A payout the gateway has and this journal never sent, found before its batch's first send. */
export interface FoundAtGateway {
  fileName: string;
  orderId: string;
  line: number;
  transactionId: number;
  statusRaw: string;
}

/** What happened when the gateway has a payout this journal never sent (see lossMessage). */
export function describeBehind(found: FoundAtGateway): string {
  return `the gateway already has payout ${found.orderId} (${found.fileName}, line ${found.line}: transaction ${found.transactionId}, status ${found.statusRaw}), which this journal never sent: the journal is behind the gateway (the home folder restored from a backup, or copied)`;
}

/** Said once recovery begins: how every payout is sent from now on. */
export function recoveryNote(what: string): string {
  return `recovery: ${what}. From now on every payout is looked up at the gateway by its orderId before its first send from this journal: found, its transaction is adopted; not found twice, and a lease and resendGrace after now, it is sent.`;
}

/** How to put a good copy of the journal back, in its store's own way, as a person reads it. */
export function restoreOf(kind: JournalDescription['kind'], address: string): string {
  switch (kind) {
    case 'sqlite':
      return `with SQLite's online backup (sqlite3 BACKUP.db ".backup '${address}'"; never a file copy)`;
    case 'postgres':
      return `with PostgreSQL's own backups of ${address} (pg_dump and pg_restore, or the server's point-in-time recovery)`;
  }
}

/**
 * What a person does when the journal's database itself is gone (`address`: a PostgreSQL
 * one), as a sentence: payouts may not make a database, for that takes rights beyond the journal's.
 */
export function remakeDatabase(address: string): string {
  const { database, user } = postgresDatabase(address);
  return `The database ${database} does not exist on its server, and payouts may not make one: make it, empty, as PostgreSQL's administrator (createdb --owner=${user ?? 'USER'} ${database}).`;
}

/** The two ways on after a loss: restore the right journal (`restore`: its store's way), or recover. */
export function waysOn(restore: string): string {
  return (
    `Either restore the right journal, ${restore}, ` +
    `or run "payouts run --recover": from then on this journal looks every payout up at the gateway by its orderId before its first send ` +
    `(found: its transaction is adopted; not found twice, and a lease and resendGrace after recovery began: sent).`
  );
}
