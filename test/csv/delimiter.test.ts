import { describe, expect, it } from 'vitest';
import { detectDelimiter } from '../../src/csv/delimiter.js';
import { looksBinary, readBom } from '../../src/csv/encoding.js';

describe('detectDelimiter', () => {
  it.each([
    ['name,email,value\n', ',', false],
    ['Nome;E-mail;Valor (R$)\r\n', ';', false],
    ['name\temail\tvalue\n', '\t', false],
    ['"Nome, completo";email;valor\n', ';', false],
    ['\n\nname;email\n', ';', false],
    ['sep=;\nname,email;value;x\n', ';', true],
    ['SEP=,\r\nnome;email\r\n', ',', true],
    ['single\n', ',', false],
  ] as const)('%j -> %j (hint line: %s)', (text, delimiter, hintLine) => {
    expect(detectDelimiter(text)).toEqual({ delimiter, hintLine });
  });
});

describe('encoding marks', () => {
  it.each([
    [[0xef, 0xbb, 0xbf, 0x61], { encoding: 'utf-8', length: 3 }],
    [[0xff, 0xfe, 0x61, 0x00], { encoding: 'utf-16le', length: 2 }],
    [[0xfe, 0xff, 0x00, 0x61], { encoding: 'utf-16be', length: 2 }],
    [[0x61, 0x62], undefined],
  ])('%j -> %j', (bytes, expected) => {
    expect(readBom(Uint8Array.from(bytes))).toEqual(expected);
  });

  it('tells binary from text by NUL bytes in the first 8 KiB', () => {
    expect(looksBinary(Buffer.from('name;email\n'))).toBe(false);
    expect(looksBinary(Buffer.from('PK\u0003\u0004\u0000\u0000'))).toBe(true);
    expect(looksBinary(Buffer.concat([Buffer.alloc(9000, 0x61), Buffer.from([0])]))).toBe(false);
  });
});
