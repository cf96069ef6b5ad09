/** Which text encoding a file's bytes are in, from its first bytes. */

export type TextEncoding = 'utf-8' | 'windows-1252' | 'utf-16le' | 'utf-16be';

/** Settings a person can force when detection is wrong; `latin1` reads as Windows-1252. */
export const ENCODING_SETTINGS = ['auto', 'utf-8', 'windows-1252', 'latin1'] as const;
export type EncodingSetting = (typeof ENCODING_SETTINGS)[number];

/** A byte-order mark, and how many bytes it takes. */
export function readBom(head: Uint8Array): { encoding: TextEncoding; length: number } | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)
    return { encoding: 'utf-8', length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/** Text files hold no NUL bytes; spreadsheets (.xlsx), UTF-16 without a BOM and binaries do. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, 8192).includes(0);
}
