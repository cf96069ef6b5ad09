/**
 * A process whose clock is off: libfaketime preloaded into it (Debian's `faketime`
 * package), its monotonic clock left real, as a host whose clock NTP does not keep.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
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

/** libfaketime's offset: `skewMs` in whole seconds, ahead or behind. */
const offsetText = (skewMs: number): string =>
  `${skewMs < 0 ? '-' : '+'}${Math.round(Math.abs(skewMs) / 1000)}`;

/** The environment of a process whose clock reads `skewMs` off (whole seconds), ahead or behind. */
export function skewedClock(skewMs: number): Record<string, string> {
  return {
    LD_PRELOAD: libfaketime() ?? '',
    FAKETIME: offsetText(skewMs),
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/**
 * The environment of a process whose clock reads off by what the file `path` says, read
 * at each look at the clock: `setSkew` changes it while the process runs, as NTP would.
 */
export function clockSetBy(path: string, skewMs: number): Record<string, string> {
  setSkew(path, skewMs);
  return {
    LD_PRELOAD: libfaketime() ?? '',
    FAKETIME_TIMESTAMP_FILE: path,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

export function setSkew(path: string, skewMs: number): void {
  writeFileSync(path, `${offsetText(skewMs)}\n`);
}

export const TEN_MINUTES_MS = 10 * 60_000;
