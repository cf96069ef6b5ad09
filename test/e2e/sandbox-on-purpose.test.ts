/**
 * The embedded sandbox is never used by accident (issue 18, section 1): the commands
 * that move or report real payouts refuse to start without a gateway unless the sandbox
 * is asked for, and what they write against a sandbox says so in the file itself.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { useTempFolder, dated } from '../support/files.js';

const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));

describe('the embedded sandbox, only on purpose', { timeout: 60_000 }, () => {
  const folder = useTempFolder();

  /** A home with the payroll sample in its inbox, taken at once, not followed. */
  const home = (): { home: string; env: Record<string, string> } => {
    const path = join(folder(), 'home');
    mkdirSync(join(path, 'inbox'), { recursive: true });
    copyFileSync(join(SAMPLES, 'payroll-2026-11.csv'), join(path, 'inbox', 'payroll.csv'));
    return {
      home: path,
      env: {
        PAYOUTS_HOME: path,
        PAYOUTS_INBOX_SETTLE: '1ms',
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_LOG_LEVEL: 'silent',
      },
    };
  };

  it.each([
    [['run']],
    [['watch']],
    [['reconcile', '--days', '3']],
    [['status']],
    [['approve', 'payroll.csv']],
    [['reject', 'payroll.csv', '--reason', 'wrong month']],
  ])(
    '%j with no baseUrl: exit 1, says what is missing and how to ask for the sandbox, touches nothing',
    async (args) => {
      const { home: path, env } = home();
      const result = await runCli(args, { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('no gateway is configured: baseUrl and token are missing');
      expect(result.stderr).toContain('PAYOUTS_BASE_URL and PAYOUTS_TOKEN');
      expect(result.stderr).toContain('--sandbox');
      expect(result.stderr).toContain('"gateway": "sandbox"');
      expect(result.stderr).not.toContain('SANDBOX: no real money moves');
      expect(result.stderr).not.toContain('unexpected error');
      // Nothing taken, nothing journaled.
      expect(readdirSync(path).sort()).toEqual(['inbox']);
      expect(existsSync(join(path, 'inbox', 'payroll.csv'))).toBe(true);
    },
  );

  it('--sandbox beside a configured baseUrl is refused: one of the two is a mistake', async () => {
    const { home: path, env } = home();
    const result = await runCli(['run', '--sandbox'], {
      env: { ...env, PAYOUTS_BASE_URL: 'http://127.0.0.1:9', PAYOUTS_TOKEN: 't' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--sandbox asks for the embedded sandbox, but baseUrl is set');
    expect(readdirSync(path).sort()).toEqual(['inbox']);
  });

  it('"gateway": "sandbox" beside a baseUrl is a config error naming both', async () => {
    const { env } = home();
    const result = await runCli(['balance'], {
      env: {
        ...env,
        PAYOUTS_GATEWAY: 'sandbox',
        PAYOUTS_BASE_URL: 'http://127.0.0.1:9',
        PAYOUTS_TOKEN: 't',
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config: gateway is "sandbox" (from PAYOUTS_GATEWAY)');
    expect(result.stderr).toContain('baseUrl');
  });

  it.each([
    ['--sandbox', ['run', '--sandbox', '--json'], {}],
    ['PAYOUTS_GATEWAY=sandbox', ['run', '--json'], { PAYOUTS_GATEWAY: 'sandbox' }],
  ])(
    'asked for with %s: pays into the sandbox, and the summary, the result file and status say so',
    async (_how, args, extra) => {
      const { home: path, env } = home();
      const run = await runCli(args, { env: { ...env, ...extra } });
      expect(run.code, run.stderr).toBe(3); // sent, pending: not followed
      expect(run.stderr).toContain('SANDBOX: no real money moves');
      const summary = JSON.parse(run.stdout) as { sandbox: boolean; files: unknown[] };
      expect(summary.sandbox).toBe(true);
      const text = await runCli(['run', '--sandbox'], { env });
      expect(text.stdout.split('\n')[0]).toMatch(/^SANDBOX: no real money moved/);

      // The result file: a column that every row carries, still one CSV for csv-parse.
      const file = join(path, 'results', dated('payroll.csv', 'result'));
      const rows = parse(readFileSync(file), {
        bom: true,
        columns: true,
        delimiter: ';',
      }) as Record<string, string>[];
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row['sandbox']).toBe('SANDBOX: no real money moved');
        expect(row['status']).toBe('pending');
      }
      expect(Object.keys(rows[0] ?? {})[0]).toBe('sandbox');

      const status = await runCli(['status', '--sandbox'], { env });
      expect(status.code).toBe(0);
      expect(status.stdout.split('\n')[0]).toMatch(/^SANDBOX: no real money moved/);
      const byFile = await runCli(['status', 'payroll.csv', '--json', '--sandbox'], { env });
      // Each batch of the JSON says it too (a flag beside the rows, the shape unchanged).
      expect((JSON.parse(byFile.stdout) as unknown[])[0]).toMatchObject({ sandbox: true });
    },
  );

  it('an approval report made against the sandbox says so on its first line', async () => {
    const { home: path, env } = home();
    const run = await runCli(['run', '--sandbox'], {
      env: { ...env, PAYOUTS_REQUIRE_APPROVAL: 'true' },
    });
    expect(run.code).toBe(2);
    const report = readFileSync(join(path, 'awaiting-approval', 'payroll.csv.report.txt'), 'utf8');
    expect(report.split('\n')[0]).toMatch(/^SANDBOX: no real money moves/);
  });
});
