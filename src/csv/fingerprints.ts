/**
 * 64-bit fingerprints of text, and a compact table from them to small numbers.
 *
 * The hash is cyrb53's two 32-bit lanes kept whole (64 bits): fast on short strings and
 * well spread, not cryptographic. Nothing here defends against crafted input, and
 * nothing needs to: a collision (about 1 in 10^7 for a million rows) only makes two
 * different rows look alike, which callers report as a duplicate or a conflict, never
 * pay twice. The table keeps 12 bytes a row instead of the ~100 a Map of strings costs,
 * so a million-row file still fits in flat memory.
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

export class FingerprintTable {
  private high = new Uint32Array(1024);
  private low = new Uint32Array(1024);
  /** Stored value + 1; 0 marks an empty slot. */
  private values = new Uint32Array(1024);
  private size = 0;

  /** The value stored for this fingerprint, or undefined. */
  get(key: Fingerprint): number | undefined {
    const stored = this.values[this.find(key.high, key.low)] ?? 0;
    return stored === 0 ? undefined : stored - 1;
  }

  set(key: Fingerprint, value: number): void {
    const slot = this.find(key.high, key.low);
    if (this.values[slot] === 0) {
      this.size++;
      this.high[slot] = key.high;
      this.low[slot] = key.low;
    }
    this.values[slot] = value + 1;
    if (this.size * 2 > this.values.length) this.grow();
  }

  private find(high: number, low: number): number {
    const mask = this.values.length - 1;
    let slot = low & mask;
    while (this.values[slot] !== 0 && (this.high[slot] !== high || this.low[slot] !== low)) {
      slot = (slot + 1) & mask;
    }
    return slot;
  }

  private grow(): void {
    const { high, low, values } = this;
    this.high = new Uint32Array(values.length * 2);
    this.low = new Uint32Array(values.length * 2);
    this.values = new Uint32Array(values.length * 2);
    for (let i = 0; i < values.length; i++) {
      const stored = values[i] ?? 0;
      if (stored === 0) continue;
      const slot = this.find(high[i] ?? 0, low[i] ?? 0);
      this.high[slot] = high[i] ?? 0;
      this.low[slot] = low[i] ?? 0;
      this.values[slot] = stored;
    }
  }
}
