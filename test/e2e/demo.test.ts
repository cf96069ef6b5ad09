/** `npm start` end to end, as a person runs it first: the table, the result files, nothing left running. */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runCliOnTerminal } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLES = join(ROOT, 'samples');

describe('npm start (the demo)', { timeout: 90_000 }, () => {
  const folder = useTempFolder();

  it('pays the samples once through dropped answers and 429s, prints a table per file and the result files, and exits', async () => {
    const { code, stdout, stderr } = await new Promise<{
      code: number;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        'npm',
        ['start', '--silent'],
        { cwd: ROOT, env: cleanEnv({ PAYOUTS_HOME: folder() }), timeout: 60_000 },
        (error, out, err) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }),
      );
    });
    // It exited by itself, in time (execFile's time-out kills it otherwise, code not 0).
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('SANDBOX: no real money moves');
    expect(stderr).toMatch(/progress: 17\/17 sent · 17 settled/);
    const table = stdout.split('\n');
    expect(table[0]).toMatch(/^file\s+paid\s+failed\s+invalid\s+other$/);
    expect(stdout).toMatch(/^bonus-2026-11\.csv\s+2 \(R\$ 1\.250,00\)\s+1 \(R\$ 320,00\)\s+0$/m);
    expect(stdout).toMatch(/^payroll-2026-11\.csv\s+6 \(R\$ 27\.111,15\)\s+0\s+0$/m);
    expect(stdout).toMatch(/^payroll-with-mistakes\.csv\s+3 \(R\$ 4\.225,40\)\s+0\s+9$/m);
    expect(stdout).toContain('line 6, Nome: is empty: the recipient');
    expect(stdout).toMatch(
      /17 payouts reached the gateway, 0 of them twice, in [\d.]+s, through [1-9]\d* dropped answers and [1-9]\d* answers 429\. Nothing is left running\./,
    );

    // Every result file: one line per data row of its sample, in order.
    const results = [...stdout.matchAll(/^ {2}(\/\S+\.result\.csv)$/gm)].map(
      (match) => match[1] as string,
    );
    expect(results).toHaveLength(
      readdirSync(SAMPLES).filter((name) => name.endsWith('.csv')).length,
    );
    for (const result of results) {
      const rows = parse(readFileSync(result), {
        bom: true,
        columns: true,
        delimiter: ';',
      }) as Record<string, string>[];
      const lines = rows.map((row) => Number(row['line']));
      expect(lines).toEqual([...lines].sort((a, b) => a - b));
      expect(new Set(lines).size).toBe(lines.length);
      expect(rows.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('draws a progress bar in place on a terminal, and the same table', async () => {
    const { code, output } = await runCliOnTerminal(['demo'], {
      env: { PAYOUTS_HOME: folder() },
    });
    expect(code, output).toBe(0);
    // Redrawn over itself (a carriage return, the line erased after it), ending full.
    expect(output).toMatch(/\r\[#{24}\] 17\/17 sent · 17 settled · [\d.]+ rows\/s\x1b\[K\r?\n/);
    expect(output.match(/\r\[[#-]{24}\] /g)?.length).toBeGreaterThan(1);
    expect(output).not.toContain('progress:');
    expect(output).toMatch(/^bonus-2026-11\.csv\s+2 \(R\$ 1\.250,00\)\s+1 \(R\$ 320,00\)\s+0\r?$/m);
    expect(output).toContain('0 of them twice');
  });
});
