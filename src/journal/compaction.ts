/**
 * `payouts journal compact`, the store's side, one seam for both stores: the audit entries
 * of finished batches received before a date, handed to an exporter and then deleted, a
 * thousand payouts' worth per short write transaction, so a daemon on the same journal
 * waits milliseconds, never the whole compaction. What the rules on who is paid read (each
 * orderId's row, its batch, its events) is never touched (docs/retention.md).
 */
import type { Said } from '../messages/said.js';
import type { RowState } from './states.js';

/** An audit entry as it leaves the journal. */
export interface MovedEntry {
  id: number;
  orderId: string;
  batchId: number;
  fileName: string;
  line: number;
  at: number;
  from: RowState | null;
  to: RowState;
  reason: Said;
}

/**
 * The journal's bytes: SQLite's file, its WAL and the bytes of its free pages; PostgreSQL's
 * tables with their indexes and TOAST (pg_total_relation_size), and the audit's among them.
 */
export type JournalBytes =
  | { kind: 'sqlite'; file: number; wal: number; free: number }
  | { kind: 'postgres'; tables: number; audit: number };

export interface CompactOutcome {
  entries: number;
  batches: number;
  /** The longest a chunk's write transaction held its locks, in ms. */
  longestHoldMs: number;
}

/** Payouts per chunk: about four entries each, deleted in tens of ms of lock at most. */
export const PAYOUTS_PER_CHUNK = 1_000;

/** The event a compacted batch is given, once per archive file its history went to. */
export const COMPACTED_EVENT = 'compacted';
export const COMPACTED_BY = 'payouts journal compact';

export interface Compaction {
  /** Finished batches received before `before` that still have entries to move. */
  batchesBefore(before: number): Promise<{ id: number; entries: number }[]>;
  /**
   * Moves every entry of those batches: each chunk's entries go to `exportEntries` (which
   * makes them durable), then a short write transaction checks the batch is still done,
   * deletes them and records on the batch (once) that its history is in `archive`, so an
   * entry is deleted only once exported. Entries in `exported` (the archive's last chunk,
   * from a run cut short) are deleted without being exported again. A batch `payouts
   * retry` opens again meanwhile keeps its entries (the next compaction writes that chunk
   * again). The journal's newest entry stays: its id is the high water the marker compares.
   */
  compact(
    before: number,
    options: {
      archive: string;
      now: number;
      exported: ReadonlySet<number>;
      exportEntries: (entries: readonly MovedEntry[]) => void;
      /** Between chunks, given the last one's hold in ms: other connections write here. */
      pause: (heldMs: number) => Promise<void>;
    },
  ): Promise<CompactOutcome>;
  /**
   * The space freed made usable: SQLite's WAL checkpointed, PostgreSQL's audit vacuumed.
   * False when it could not finish now (a reader on the WAL; the next one finishes it).
   */
  settle(): Promise<boolean>;
  bytes(): Promise<JournalBytes>;
  close(): Promise<void>;
}
