/** Durations as people write them in config: `500ms`, `30s`, `5m`, `1h`, `20d`, or a number of ms. */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDurationMs(value: string | number): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = UNIT_MS[(match[2] ?? 'ms').toLowerCase()] ?? 1;
  const ms = amount * unit;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The same, written back for people: the largest unit that divides it (`2s`, `90s`, `5m`). */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
