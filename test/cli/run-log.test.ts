/**
 * What `payouts run` leaves in cron's run.log (docs/server.md, "From cron, or as a daemon"): every
 * line says when it was written, and a run with `--quiet` that found nothing to do writes
 * nothing, while a batch still open is named on every run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { usePendingSandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';

/** The arguments of the cron line docs/server.md gives, but the settings file (the test's own environment). */
function cronArguments(): string[] {
  const readme = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');
  const cron = /```cron\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const job = cron.split('\n').find((line) => /^[*\d]/.test(line)) ?? '';
  const words = job.split(/\s+/);
  const args = words.slice(words.indexOf('payouts') + 1, words.indexOf('>>'));
  const settings = args.indexOf('--settings-file');
  if (settings >= 0) args.splice(settings, 2);
  return args;
}

/** `2026-11-27T09:05:01-03:00 `: an ISO 8601 time with its offset, then the line. */
const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d) ./;

describe("payouts run in cron's log", { timeout: 60_000 }, () => {
  const made = usePendingSandboxHome();

  it("the README's cron line starts every line it writes with the time it was written", async () => {
    const { home, env } = made();
    writeFileSync(join(home, 'inbox', 'pay.csv'), payrollFile('p', 2));
    const before = Date.now();
    const run = await runCli(cronArguments(), { env });
    expect(run.code, run.stderr).toBe(3); // sent, still pending
    const lines = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const time = STAMPED.exec(line)?.[1];
      expect(time, line).toBeDefined();
      const ms = Date.parse(time ?? '');
      expect(ms).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(ms).toBeLessThanOrEqual(Date.now());
    }
    expect(run.stdout).toMatch(/ pay\.csv: /);
  });

  it('--quiet writes nothing when nothing happened, and names a batch still open on every run', async () => {
    const { home, env } = made();
    const empty = await runCli(['run', '--quiet'], { env });
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout + empty.stderr).toBe('');
    // Without --quiet, one line says so.
    const said = await runCli(['run'], { env });
    expect(said.stdout.trim().split('\n')).toEqual(['The inbox is empty: nothing to do.']);

    writeFileSync(join(home, 'inbox', 'pay.csv'), payrollFile('p', 2));
    expect((await runCli(['run', '--quiet'], { env })).code).toBe(3);
    // Nothing new arrived, but the batch waits for its payouts to settle: it is something.
    const open = await runCli(['run', '--quiet'], { env });
    expect(open.code, open.stderr).toBe(3);
    expect(open.stdout).toContain('pay.csv');
  });

  it('--log-times leaves --json as programs read it', async () => {
    const { env } = made();
    const run = await runCli(['run', '--json', '--log-times'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ files: [] });
  });
});
