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

/**
 * An elapsed time for people, to the minute once past one: `45s`, `12m`, `2h 05m`,
 * `14d 3h` (how long a payout has waited).
 */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}
