/**
 * 64-bit fingerprints of text, and a compact table from them to small numbers.
 *
 * The hash is cyrb53's two 32-bit lanes kept whole (64 bits): fast on short strings and
 * well spread, not cryptographic. Nothing here defends against crafted input, and
 * nothing needs to: a collision (about 1 in 10^7 for a million rows) only makes two
 * different rows look alike, which callers report as a duplicate or a conflict, never
 * pay twice. The table keeps 14 to 18 bytes a key instead of the ~100 a Map of strings
 * costs, so a million-row file still fits in flat memory.
 */

export interface Fingerprint {
  high: number;
  low: number;
}

export function fingerprint(text: string): Fingerprint {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
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
 * rather than twice, so a table is never far above its keys (doubling left a million keys
 * in slots for two million, 25 MB, at every count just past a doubling).
 */
const MOST_FULL = 0.85;
const GROWTH = 1.25;
const TWO_32 = 2 ** 32;

/**
 * Fingerprints to small numbers (a line), in flat memory: 12 bytes a slot, filled to at
 * most 85% before a shard grows by a quarter, so 14 to 18 bytes a key (a million keys:
 * about 17 MB; three million: 50 MB), and never more than one shard's copy while growing.
 */
export class FingerprintTable {
  /** Per shard, [high, low, value + 1] a slot; value 0 marks an empty slot. */
  private readonly slots: Uint32Array[] = Array.from(
    { length: SHARDS },
    () => new Uint32Array(FIRST_SLOTS * 3),
  );
  private readonly sizes = new Uint32Array(SHARDS);

  /** The value stored for this fingerprint, or undefined. */
  get(key: Fingerprint): number | undefined {
    const slots = this.shardOf(key.high);
    const stored = slots[this.find(slots, key.high, key.low) + 2] ?? 0;
    return stored === 0 ? undefined : stored - 1;
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
    this.fill(slots, at, key, value);
    return undefined;
  }

  set(key: Fingerprint, value: number): void {
    const slots = this.shardOf(key.high);
    const at = this.find(slots, key.high, key.low);
    if (slots[at + 2] === 0) this.fill(slots, at, key, value);
    else slots[at + 2] = value + 1;
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

  private grow(shard: number): void {
    const old = this.slots[shard] as Uint32Array;
    const slots = new Uint32Array(Math.ceil((old.length / 3) * GROWTH) * 3);
    for (let at = 0; at < old.length; at += 3) {
      const high = old[at] ?? 0;
      const low = old[at + 1] ?? 0;
      if (old[at + 2] === 0) continue;
      const to = this.find(slots, high, low);
      slots[to] = high;
      slots[to + 1] = low;
      slots[to + 2] = old[at + 2] ?? 0;
    }
    this.slots[shard] = slots;
  }
}
