import { describe, expect, it } from 'vitest';
import {
  FingerprintTable,
  FingerprintTables,
  fingerprint,
  fingerprintHex,
  joinedFingerprint,
  type Fingerprint,
} from '../../src/csv/fingerprints.js';
import { createRandom } from '../../src/sandbox/faults.js';

describe('fingerprint', () => {
  it('is the fingerprint it always was', () => {
    expect(fingerprintHex(fingerprint(''))).toBe('488bdcb81aee8d83');
    expect(fingerprintHex(fingerprint('o-1'))).toBe('2df4c832812ccdfa');
  });

  it('of parts is the fingerprint of the parts joined by the separator', () => {
    const cases: string[][] = [
      [],
      [''],
      ['', ''],
      ['a'],
      ['folha', 'CPF', '52998224725', '52998224725', '1000', 'ana souza'],
      ['a\u001f', '', 'b'],
      ['😀', 'ç', '\u0000'],
    ];
    for (const parts of cases) {
      expect(joinedFingerprint(parts, 0x1f)).toEqual(fingerprint(parts.join('\u001f')));
      expect(joinedFingerprint(parts, 0x3b)).toEqual(fingerprint(parts.join(';')));
    }
  });
});

describe('FingerprintTable', () => {
  it('keeps every key apart through growth, in one shard and one slot as much as in many', () => {
    const table = new FingerprintTable();
    // Keys that share a shard (high byte) and a first slot (low bits), and keys that
    // differ in one half only, and keys whose first slot is a shard's last (the search
    // goes on from its first): each must keep its own value.
    const keys: Fingerprint[] = [];
    for (let i = 0; i < 5_000; i++)
      keys.push({ high: 0x3300_0000 + i, low: 0xffff_ffff - (i % 3) });
    for (let i = 0; i < 5_000; i++) keys.push({ high: 0x7f00_0000 + (i % 7), low: i << 12 });
    for (let i = 0; i < 5_000; i++) keys.push({ high: (i * 0x0101_0101) >>> 0, low: 1 });
    for (let i = 0; i < 20_000; i++) keys.push(fingerprint(`o-${i}`));
    keys.forEach((key, i) => table.set(key, i));
    expect(keys.every((key, i) => table.get(key) === i)).toBe(true);
    expect(table.get({ high: 0x7f00_0000, low: 1 })).toBeUndefined();
    expect(table.get(fingerprint('o-20000'))).toBeUndefined();
  });

  it('overwrites the value of a key already there', () => {
    const table = new FingerprintTable();
    const key = fingerprint('payroll');
    table.set(key, 0);
    table.set(key, 41);
    expect(table.get(key)).toBe(41);
  });

  it('claims a key once: the first value stays, and later claims answer it', () => {
    const table = new FingerprintTable();
    const answers = Array.from({ length: 3_000 }, (_, i) =>
      table.claim(fingerprint(`o-${i % 1_000}`), i),
    );
    expect(answers.slice(0, 1_000).every((answer) => answer === undefined)).toBe(true);
    expect(answers.slice(1_000).every((answer, i) => answer === i % 1_000)).toBe(true);
  });
});

describe('FingerprintTables', () => {
  it('answers past its memory as in memory: tables sharing it, keys new and repeated on both sides', () => {
    const tables = new FingerprintTables(40);
    try {
      const spilled = [tables.table(), tables.table(), tables.table()];
      const expected = spilled.map(() => new Map<number, number>());
      const random = createRandom(19);
      for (let step = 0; step < 3_000; step++) {
        const which = Math.floor(random() * 3);
        const id = Math.floor(random() * 400);
        const [table, map] = [spilled[which], expected[which]];
        if (!table || !map) throw new Error('three tables');
        const key = fingerprint(`o-${id}`);
        const op = random();
        if (op < 0.5) {
          expect(table.claim(key, step)).toBe(map.get(id));
          if (!map.has(id)) map.set(id, step);
        } else if (op < 0.8) {
          table.set(key, step);
          map.set(id, step);
        } else expect(table.get(key)).toBe(map.get(id));
      }
      for (const [which, map] of expected.entries())
        for (let id = 0; id < 400; id++)
          expect(spilled[which]?.get(fingerprint(`o-${id}`))).toBe(map.get(id));
    } finally {
      tables.close();
    }
  });
});
