/**
 * 64-bit fingerprints of text, and compact tables from them to small numbers, in memory
 * up to a bound and in a file of their own past it.
 *
 * The hash is cyrb53's two 32-bit lanes kept whole (64 bits): fast on short strings and
 * well spread, not cryptographic. Nothing here defends against crafted input, and
 * nothing needs to: a collision (about 1 in 10^7 for a million rows) only makes two
 * different rows look alike, which callers report as a duplicate or a conflict, never
 * pay twice. The table keeps 14 to 18 bytes a key instead of the ~100 a Map of strings
 * costs; past MEMORY_KEYS the keys of a reading go to a file, so memory is flat in the
 * row count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { PayoutsError } from '../errors.js';
import { sqliteBinding } from '../runtime/sqlite.js';

export interface Fingerprint {
  high: number;
  low: number;
}

export function fingerprint(text: string): Fingerprint {
  return joinedFingerprint([text], 0);
}

/**
 * The fingerprint of `parts` joined by the character `separator` (a code), without
 * joining them: a row's content is hashed part by part instead of as a string built and
 * flattened first, on every row.
 */
export function joinedFingerprint(parts: readonly string[], separator: number): Fingerprint {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let part = 0; part < parts.length; part++) {
    if (part > 0) {
      h1 = Math.imul(h1 ^ separator, 2654435761);
      h2 = Math.imul(h2 ^ separator, 1597334677);
    }
    const text = parts[part] ?? '';
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ code, 2654435761);
      h2 = Math.imul(h2 ^ code, 1597334677);
    }
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return { high: h2 >>> 0, low: h1 >>> 0 };
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function hex32(word: number): string {
  return (
    (HEX[word >>> 24] ?? '') +
    (HEX[(word >>> 16) & 0xff] ?? '') +
    (HEX[(word >>> 8) & 0xff] ?? '') +
    (HEX[word & 0xff] ?? '')
  );
}

/** Sixteen hex digits. */
export function fingerprintHex({ high, low }: Fingerprint): string {
  return hex32(high) + hex32(low);
}

/** Shards of the table: one grows at a time, so growing never holds two copies of it all. */
const SHARDS = 256;
/** Slots a shard starts with; each holds a key's two halves and its value. */
const FIRST_SLOTS = 16;
/**
 * How full a shard may get, and by how much it grows past that: a quarter more at a time
 * rather than twice, so a table is never far above its keys (docs/benchmarks.md).
 */
const MOST_FULL = 0.85;
const GROWTH = 1.25;
const TWO_32 = 2 ** 32;

/**
 * Keys the tables of one reading keep in memory, all together, so a reading stays under
 * 150 MB; past it a table's new keys go to a file (docs/benchmarks.md).
 */
const MEMORY_KEYS = 1_500_000;

/**
 * The tables of one reading of a file: memory for MEMORY_KEYS keys between them, and past
 * that one file in the temp folder (SpillFile), opened at the first key it takes. close()
 * gives it back; a reading that never spilled has nothing to close.
 */
export class FingerprintTables {
  readonly #memoryKeys: number;
  #room: number;
  #spill: SpillFile | undefined;
  #made = 0;

  /** `memoryKeys`: MEMORY_KEYS, or fewer (ingest's; tests', to read the spilled path). */
  constructor(memoryKeys = MEMORY_KEYS) {
    this.#memoryKeys = memoryKeys;
    this.#room = memoryKeys;
  }

  table(): FingerprintTable {
    return new FingerprintTable(this, this.#made++);
  }

  /** Whether memory takes one more key, and if it does, one less room. */
  takeRoom(): boolean {
    if (this.#room === 0) return false;
    this.#room--;
    return true;
  }

  spill(): SpillFile {
    this.#spill ??= spillSafely(this.#memoryKeys, () => new SpillFile(this.#memoryKeys));
    return this.#spill;
  }

  close(): void {
    this.#spill?.close();
    this.#spill = undefined;
  }
}

/**
 * Fingerprints to small numbers (a line): in memory while its tables have room, 12 bytes
 * a slot, filled to at most 85% before a shard grows by a quarter, so 14 to 18 bytes a key,
 * never more than one shard's copy while growing; then new keys in the spill file. A key
 * lives in one place only: memory, once full, takes no key again, so the file holds only
 * keys memory does not.
 */
export class FingerprintTable {
  /** Per shard, [high, low, value + 1] a slot; value 0 marks an empty slot. */
  private readonly slots: Uint32Array[] = Array.from(
    { length: SHARDS },
    () => new Uint32Array(FIRST_SLOTS * 3),
  );
  private readonly sizes = new Uint32Array(SHARDS);
  /** Room for every shard to grow in place, made when the first one needs it (see grow). */
  private region: Uint32Array | undefined;
  /** Set once memory has refused a key: from then on a key not in memory is in the file. */
  private spill: SpillFile | undefined;

  /** A table alone keeps every key in memory (tests of the table itself). */
  constructor(
    private readonly tables = new FingerprintTables(Number.POSITIVE_INFINITY),
    private readonly id = 0,
  ) {}

  /** The value stored for this fingerprint, or undefined. */
  get(key: Fingerprint): number | undefined {
    const slots = this.shardOf(key.high);
    const stored = slots[this.find(slots, key.high, key.low) + 2] ?? 0;
    if (stored !== 0) return stored - 1;
    return this.spill?.get(this.id, key);
  }

  /**
   * Stores `value` for a key not yet there and answers undefined; answers the value
   * already stored otherwise, unchanged. One look where get then set take two.
   */
  claim(key: Fingerprint, value: number): number | undefined {
    const slots = this.shardOf(key.high);
    const at = this.find(slots, key.high, key.low);
    const stored = slots[at + 2] ?? 0;
    if (stored !== 0) return stored - 1;
    if (this.spill || !this.tables.takeRoom()) return this.spilled().claim(this.id, key, value);
    this.fill(slots, at, key, value);
    return undefined;
  }

  set(key: Fingerprint, value: number): void {
    const slots = this.shardOf(key.high);
    const at = this.find(slots, key.high, key.low);
    if (slots[at + 2] !== 0) slots[at + 2] = value + 1;
    else if (this.spill || !this.tables.takeRoom()) this.spilled().set(this.id, key, value);
    else this.fill(slots, at, key, value);
  }

  private spilled(): SpillFile {
    this.spill ??= this.tables.spill();
    return this.spill;
  }

  /** Puts a new key in its empty slot, and grows its shard past MOST_FULL. */
  private fill(slots: Uint32Array, at: number, key: Fingerprint, value: number): void {
    slots[at] = key.high;
    slots[at + 1] = key.low;
    slots[at + 2] = value + 1;
    const shard = key.high >>> 24;
    const size = (this.sizes[shard] ?? 0) + 1;
    this.sizes[shard] = size;
    // A slot is three numbers.
    if (size > (slots.length / 3) * MOST_FULL) this.grow(shard);
  }

  private shardOf(high: number): Uint32Array {
    return this.slots[high >>> 24] as Uint32Array;
  }

  /** The slot (its first index) holding this key, or the empty one where it would go. */
  private find(slots: Uint32Array, high: number, low: number): number {
    const count = slots.length / 3;
    // The shard took the high byte: the low word spreads keys over its slots, of any count.
    for (
      let slot = Math.floor((low / TWO_32) * count);
      ;
      slot = slot + 1 === count ? 0 : slot + 1
    ) {
      const at = slot * 3;
      if (slots[at + 2] === 0 || (slots[at] === high && slots[at + 1] === low)) return at;
    }
  }

  /**
   * A quarter more slots. Past its first few, a shard grows in place in its part of the
   * table's region, its old slots copied aside into one scratch array shared by every
   * shard: a new array a growth left the old one dead until a full collection, raising the
   * peak of a reading (docs/benchmarks.md). A shard too big for its part
   * (keys far from evenly spread) goes on in arrays of its own.
   */
  private grow(shard: number): void {
    const old = this.slots[shard] as Uint32Array;
    const length = Math.ceil((old.length / 3) * GROWTH) * 3;
    let slots: Uint32Array;
    let from = old;
    if (length <= REGION_SLOTS * 3) {
      this.region ??= new Uint32Array(SHARDS * REGION_SLOTS * 3);
      const start = shard * REGION_SLOTS * 3;
      slots = this.region.subarray(start, start + length);
      if (old.buffer === this.region.buffer) {
        if (scratch.length < old.length) scratch = new Uint32Array(length);
        scratch.set(old);
        from = scratch;
        slots.fill(0, 0, old.length);
      }
    } else slots = new Uint32Array(length);
    for (let at = 0; at < old.length; at += 3) {
      const high = from[at] ?? 0;
      const low = from[at + 1] ?? 0;
      if (from[at + 2] === 0) continue;
      const to = this.find(slots, high, low);
      slots[to] = high;
      slots[to + 1] = low;
      slots[to + 2] = from[at + 2] ?? 0;
    }
    this.slots[shard] = slots;
  }
}

/** Where a growing shard's slots wait to be put back: as large as the largest shard yet. */
let scratch = new Uint32Array(0);

/**
 * Slots each shard has in its table's region: twice what MEMORY_KEYS spread over the
 * shards need, in one array made at the first growth, a plain allocation the OS maps
 * lazily: only the pages a shard has filled are memory. Not a resizable buffer a shard,
 * whose slots are slower to read (docs/benchmarks.md).
 */
const REGION_SLOTS = 2 * Math.ceil((MEMORY_KEYS / SHARDS / MOST_FULL) * GROWTH);

/** A table's statements in the spill file. */
interface SpillTable {
  claim: BetterSqlite3.Statement<[number, number, number]>;
  put: BetterSqlite3.Statement<[number, number, number]>;
  get: BetterSqlite3.Statement<[number, number], number>;
}

/**
 * The keys memory has no room for, in a SQLite database of their own (a table per
 * FingerprintTable): a file in a folder of the temp folder that only its owner may enter,
 * both removed as soon as the file is open, so nothing is left behind whatever ends the
 * process (an open file lives until it is closed). No journal, no sync: the file is
 * nothing once closed. Writes are committed every COMMIT_EVERY, since a commit a key
 * doubles a key's cost (docs/benchmarks.md).
 */
class SpillFile {
  private readonly db: BetterSqlite3.Database;
  private readonly tables: SpillTable[] = [];
  private writes = 0;

  /** `memoryKeys`: the bound past which a reading's keys come here, for its errors. */
  constructor(private readonly memoryKeys: number) {
    const Database = sqliteBinding();
    const folder = mkdtempSync(join(tmpdir(), 'payouts-keys-'));
    try {
      this.db = new Database(join(folder, 'keys.db'));
      try {
        // better-sqlite3's defensive mode refuses OFF (and keeps a rollback journal, a
        // second file and a copy of every page a commit changes): lifted for this only.
        this.db.unsafeMode(true);
        this.db.pragma('journal_mode = OFF');
        this.db.unsafeMode(false);
        this.db.pragma('synchronous = OFF');
        // Held from the first write to the close: SQLite never looks for the file again.
        this.db.pragma('locking_mode = EXCLUSIVE');
        // SQLite's 2 MiB default: room for the inner pages, which every look reads again.
        this.db.pragma('cache_size = -2048');
        // The first write, while the file is still there to be found (after, its removal
        // leaves nothing for SQLite to miss: without it, its IOERR_FSTAT).
        this.db.pragma('user_version = 1');
        this.db.exec('BEGIN');
      } catch (error) {
        this.db.close();
        throw error;
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }

  get(table: number, key: Fingerprint): number | undefined {
    return spillSafely(this.memoryKeys, () => this.tableOf(table).get.get(key.high, key.low));
  }

  /** As FingerprintTable's: one write for a new key, a look only for a repeat. */
  claim(table: number, key: Fingerprint, value: number): number | undefined {
    return spillSafely(this.memoryKeys, () => {
      const { changes } = this.tableOf(table).claim.run(key.high, key.low, value);
      this.wrote();
      return changes === 0 ? this.tableOf(table).get.get(key.high, key.low) : undefined;
    });
  }

  set(table: number, key: Fingerprint, value: number): void {
    spillSafely(this.memoryKeys, () => {
      this.tableOf(table).put.run(key.high, key.low, value);
      this.wrote();
    });
  }

  close(): void {
    this.db.close();
  }

  private tableOf(id: number): SpillTable {
    let table = this.tables[id];
    if (!table) {
      const name = `keys${id}`;
      this.db.exec(
        `CREATE TABLE ${name} (high INTEGER NOT NULL, low INTEGER NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (high, low)) WITHOUT ROWID`,
      );
      table = {
        claim: this.db.prepare(`INSERT OR IGNORE INTO ${name} VALUES (?, ?, ?)`),
        put: this.db.prepare(`INSERT OR REPLACE INTO ${name} VALUES (?, ?, ?)`),
        get: this.db
          .prepare<[number, number], number>(`SELECT value FROM ${name} WHERE high = ? AND low = ?`)
          .pluck(),
      };
      this.tables[id] = table;
    }
    return table;
  }

  private wrote(): void {
    if (++this.writes % COMMIT_EVERY !== 0) return;
    this.db.exec('COMMIT');
    this.db.exec('BEGIN');
  }
}

const COMMIT_EVERY = 10_000;

/**
 * The spill file's work, its failure said as the temp folder's (full, missing, not ours):
 * the file being read is not at fault, and the journal has nothing to do with it.
 */
function spillSafely<T>(memoryKeys: number, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    throw new PayoutsError(
      'temp-folder',
      `finding repeated rows needs room in the temp folder ${tmpdir()} (${String(code ?? 'error')}: ${String(message)}) in a file past ${memoryKeys.toLocaleString('en')} rows (half as many with an orderId column); free space there, or point TMPDIR at a folder that has it, then run again`,
      { cause: error },
    );
  }
}
