/**
 * `payouts journal compact`, the store's side, one seam for both stores: the audit entries
 * of finished batches received before a date, handed to an exporter and then deleted, a
 * thousand payouts' worth per short write transaction, so a daemon on the same journal
 * waits milliseconds, never the whole compaction. What the rules on who is paid read (each
 * orderId's row, its batch, its events) is never touched (docs/retention.md).
 */
import { performance } from 'node:perf_hooks';
import type { Said } from '../messages/said.js';
import type { RowState } from './states.js';
import { reasonColumn } from './sqlite/context.js';

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

export interface CompactOptions {
  archive: string;
  now: number;
  exported: ReadonlySet<number>;
  exportEntries: (entries: readonly MovedEntry[]) => void;
  /** Between chunks, given the last one's hold in ms: other connections write here. */
  pause: (heldMs: number) => Promise<void>;
}

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
  compact(before: number, options: CompactOptions): Promise<CompactOutcome>;
  /**
   * The space freed made usable: SQLite's WAL checkpointed, PostgreSQL's audit vacuumed.
   * False when it could not finish now (a reader on the WAL; the next one finishes it).
   */
  settle(): Promise<boolean>;
  bytes(): Promise<JournalBytes>;
  close(): Promise<void>;
}

/** An audit entry as both stores read it for the archive, its reason the column's text. */
export interface EntryRow {
  id: number;
  order_id: string;
  batch_id: number;
  file_name: string;
  line: number;
  at: number;
  from_state: RowState | null;
  to_state: RowState;
  reason: string;
}

export function movedEntryOf(row: EntryRow, reason: Said): MovedEntry {
  return {
    id: row.id,
    orderId: row.order_id,
    batchId: row.batch_id,
    fileName: row.file_name,
    line: row.line,
    at: row.at,
    from: row.from_state,
    to: row.to_state,
    reason,
  };
}

/** A batch's payouts are read in file order, PAYOUTS_PER_CHUNK after this one at a time. */
export interface ChunkCursor {
  line: number;
  id: number;
}

/** What a store does for `compactBatches`, in its own SQL, synchronously or not. */
export interface CompactionSteps {
  batchesBefore(before: number): Promise<readonly { id: number }[]>;
  /** The entries of a batch's next chunk of payouts, and the last of those payouts. */
  readChunk(
    batchId: number,
    after: ChunkCursor,
  ):
    | { last: ChunkCursor | undefined; entries: MovedEntry[] }
    | Promise<{ last: ChunkCursor | undefined; entries: MovedEntry[] }>;
  /** Deletes entries in one short write transaction; false, deleting none, once the batch is no longer done. */
  removeChunk(
    batchId: number,
    ids: number[],
    moved: { at: number; detail: string },
  ): boolean | Promise<boolean>;
}

/** `Compaction.compact`, for either store: the chunks, their export, their removal, the pauses. */
export async function compactBatches(
  steps: CompactionSteps,
  before: number,
  { archive, now, exported, exportEntries, pause }: CompactOptions,
): Promise<CompactOutcome> {
  const moved = { at: now, detail: reasonColumn({ code: 'historyMoved', archive }) };
  let entries = 0;
  let batches = 0;
  let longestHoldMs = 0;
  for (const { id: batchId } of await steps.batchesBefore(before)) {
    batches += 1;
    for (let cursor: ChunkCursor = { line: -1, id: -1 }; ;) {
      const chunk = await steps.readChunk(batchId, cursor);
      if (!chunk.last) break;
      cursor = { line: chunk.last.line, id: chunk.last.id };
      if (chunk.entries.length === 0) continue;
      // Exported (and on disk) before the transaction that deletes them.
      const fresh = chunk.entries.filter((entry) => !exported.has(entry.id));
      if (fresh.length > 0) exportEntries(fresh);
      const began = performance.now();
      const removed = await steps.removeChunk(
        batchId,
        chunk.entries.map((entry) => entry.id),
        moved,
      );
      const heldMs = performance.now() - began;
      longestHoldMs = Math.max(longestHoldMs, heldMs);
      if (!removed) break;
      entries += fresh.length;
      await pause(heldMs);
    }
  }
  return { entries, batches, longestHoldMs };
}
