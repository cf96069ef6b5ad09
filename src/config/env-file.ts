/**
 * The environment file (`/etc/payouts.env`), read by payouts itself so that cron and
 * systemd, which only name it, read it alike: `NAME=value` a line, the value as written
 * (no quotes, no expansion: a `$` is a `$`, spaces are kept), `#` lines and blank lines
 * skipped. `readEnvFileText` is pure.
 */

/** The variable that names the file, as `--settings-file` does (cron's line, a systemd unit). */
export const ENV_FILE_VARIABLE = 'PAYOUTS_SETTINGS_FILE';

/** What a file holds: each setting's value, and the line it is on. */
export interface EnvFileSettings {
  values: Readonly<Record<string, string>>;
  lineOf: Readonly<Record<string, number>>;
}

export type EnvFileReading =
  { ok: true; settings: EnvFileSettings } | { ok: false; problems: readonly string[] };

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

export function readEnvFileText(text: string): EnvFileReading {
  const values: Record<string, string> = {};
  const lineOf: Record<string, number> = {};
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = ASSIGNMENT.exec(trimmed);
    if (match === null) {
      problems.push(`line ${line}: expected NAME=value, such as PAYOUTS_HOME=/srv/payouts`);
      return;
    }
    const name = match[1] as string;
    const value = (match[2] as string).trim();
    if (!name.startsWith('PAYOUTS_')) {
      problems.push(
        `line ${line}: ${name} is not a payouts setting: this file holds PAYOUTS_* settings only (set ${name} in the unit's Environment= or the crontab)`,
      );
    } else if (/^(["']).*\1$/.test(value) && value.length >= 2) {
      problems.push(
        `line ${line}: the value of ${name} is in quotes, which would be read as part of it: this file is read as written, so write the value without quotes`,
      );
    } else if (lineOf[name] !== undefined) {
      problems.push(`line ${line}: ${name} is set again (first on line ${lineOf[name]}): keep one`);
    } else {
      values[name] = value;
      lineOf[name] = line;
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, settings: { values, lineOf } };
}

/**
 * Whether a shell's `.` may read this value otherwise than payouts does: anything but
 * letters, digits and `@%+=:,./_-` is split, expanded or quoted by sh.
 */
export function shellReadsOtherwise(value: string): boolean {
  return !/^[A-Za-z0-9@%+=:,./_-]*$/.test(value);
}
