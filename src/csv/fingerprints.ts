/**
 * A compact table from 64-bit fingerprints to small numbers, in typed arrays: 12 bytes
 * a row instead of the ~100 a Map of strings costs, so a million-row file still fits
 * in flat memory. A fingerprint collision (about 1 in 10^7 for a million rows) can only
 * make two different rows look alike; callers treat that as a problem to report.
 */
export class FingerprintTable {
  private high = new Uint32Array(1024);
  private low = new Uint32Array(1024);
  /** Stored value + 1; 0 marks an empty slot. */
  private values = new Uint32Array(1024);
  private size = 0;

  /** The value stored for this fingerprint, or undefined. */
  get(fingerprint: Uint8Array): number | undefined {
    const [hi, lo] = split(fingerprint);
    const slot = this.find(hi, lo);
    const stored = this.values[slot] ?? 0;
    return stored === 0 ? undefined : stored - 1;
  }

  set(fingerprint: Uint8Array, value: number): void {
    const [hi, lo] = split(fingerprint);
    const slot = this.find(hi, lo);
    if (this.values[slot] === 0) {
      this.size++;
      this.high[slot] = hi;
      this.low[slot] = lo;
    }
    this.values[slot] = value + 1;
    if (this.size * 2 > this.values.length) this.grow();
  }

  private find(hi: number, lo: number): number {
    const mask = this.values.length - 1;
    let slot = lo & mask;
    while (this.values[slot] !== 0 && (this.high[slot] !== hi || this.low[slot] !== lo)) {
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

function split(fingerprint: Uint8Array): [number, number] {
  const view = new DataView(fingerprint.buffer, fingerprint.byteOffset, 8);
  return [view.getUint32(0), view.getUint32(4)];
}
