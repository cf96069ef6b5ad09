/** Lines that say when they were written (`run --log-times`, for cron's run.log). */
import { describe, expect, it } from 'vitest';
import { localIsoTime, withLogTimes, type CliIo } from '../../src/runtime/io.js';

const AT = Date.parse('2026-11-27T12:05:01.250Z');

function captured(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: { write: (chunk) => out.push(String(chunk)), isTTY: false },
    stderr: { write: (chunk) => err.push(String(chunk)) },
    env: {},
    clock: { now: () => AT, sleep: () => Promise.resolve() },
  };
}

describe('log times', () => {
  it.each([[AT], [Date.parse('2026-06-01T00:00:00Z')], [Date.parse('2018-12-01T12:00:59.999Z')]])(
    'localIsoTime(%i) is that instant, to the second, with the offset of this process',
    (ms) => {
      const shown = localIsoTime(ms);
      expect(shown).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
      expect(Date.parse(shown)).toBe(Math.floor(ms / 1000) * 1000);
    },
  );

  it('stamps the start of every line, across writes, but not a blank line', () => {
    const io = captured();
    const timed = withLogTimes(io, { stdout: true });
    timed.stdout.write('pay.csv: journaled\n  result: r.csv\n\nStopped');
    timed.stdout.write(' early\n');
    timed.stderr.write(Buffer.from('payouts run: another run\n'));
    const stamp = `${localIsoTime(AT)} `;
    expect(io.out.join('')).toBe(
      `${stamp}pay.csv: journaled\n${stamp}  result: r.csv\n\n${stamp}Stopped early\n`,
    );
    expect(io.err.join('')).toBe(`${stamp}payouts run: another run\n`);
    expect(timed.stdout.isTTY).toBe(false);
  });

  it('leaves stdout as it is for programs (--json)', () => {
    const io = captured();
    const timed = withLogTimes(io, { stdout: false });
    timed.stdout.write('{\n  "files": []\n}\n');
    expect(io.out.join('')).toBe('{\n  "files": []\n}\n');
  });
});
