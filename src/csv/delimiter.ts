/** Which delimiter a file uses: `,` `;` or tab, read from its header line. */

export const DELIMITERS = [';', ',', '\t'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** Excel's hint line, `sep=;`, which it writes and reads before the header. */
const SEP_LINE = /^sep=(.)\s*$/i;

export interface DelimiterReading {
  delimiter: Delimiter;
  /** True when the first line is a `sep=` hint, to be passed over. */
  hintLine: boolean;
}

/** Counts each candidate outside quotes on the first non-empty line; the most frequent wins. */
export function detectDelimiter(text: string): DelimiterReading {
  const lines = text.split(/\r\n|\n|\r/);
  const hint = SEP_LINE.exec(lines[0] ?? '')?.[1];
  if (hint !== undefined && (DELIMITERS as readonly string[]).includes(hint)) {
    return { delimiter: hint as Delimiter, hintLine: true };
  }
  const header = lines.find((line) => line.trim() !== '') ?? '';
  const counts = new Map<Delimiter, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char as Delimiter)) {
      counts.set(char as Delimiter, (counts.get(char as Delimiter) ?? 0) + 1);
    }
  }
  // Ties go to the order of DELIMITERS: `;` first, as Brazilian Excel writes it.
  let best: Delimiter = ',';
  let bestCount = 0;
  for (const delimiter of DELIMITERS) {
    const count = counts.get(delimiter) ?? 0;
    if (count > bestCount) {
      best = delimiter;
      bestCount = count;
    }
  }
  return { delimiter: best, hintLine: false };
}
