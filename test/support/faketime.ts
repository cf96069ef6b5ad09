/**
 * A process whose clock is off: libfaketime preloaded into it (Debian's `faketime`
 * package), its monotonic clock left real, as a host whose clock NTP does not keep.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** libfaketime for a process of many threads, where the package installs it. */
function libfaketime(): string | undefined {
  const folders = ['/usr/lib', '/usr/local/lib'].flatMap((lib) => [
    join(lib, 'faketime'),
    ...(existsSync(lib) ? readdirSync(lib).map((arch) => join(lib, arch, 'faketime')) : []),
  ]);
  return folders.map((folder) => join(folder, 'libfaketimeMT.so.1')).find(existsSync);
}

/**
 * Why a clock-skew test skips here, or undefined when it can run. Under
 * `PAYOUTS_REQUIRE_POSTGRES=1` (CI), where the clock-skew tests must run, it throws instead.
 */
export function faketimeMissing(): string | undefined {
  if (libfaketime()) return undefined;
  const why =
    'faketime is not installed: install the faketime package (Debian) to run the clock-skew tests';
  if (process.env.PAYOUTS_REQUIRE_POSTGRES === '1') throw new Error(why);
  return why;
}

/** The environment of a process whose clock reads `skewMs` off (whole minutes), ahead or behind. */
export function skewedClock(skewMs: number): Record<string, string> {
  return {
    LD_PRELOAD: libfaketime() ?? '',
    FAKETIME: `${skewMs > 0 ? '+' : '-'}${Math.abs(skewMs) / 60_000}m`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

export const TEN_MINUTES_MS = 10 * 60_000;
