import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/gateway/errors.js';
import { Database } from '../../src/journal/sqlite.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest, clientFor } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';
import { startTrickleServer, type TrickleServer } from '../support/trickle.js';
import { payrollFile } from '../support/payroll.js';

const CONNECT_MS = 1_000;
const REQUEST_MS = 3_000;
const DEADLINE_MS = CONNECT_MS + REQUEST_MS;
/** One byte a second: a third of the request time-out, so a busy machine's late timer is no stall. */
const GAP_MS = 1_000;
/**
 * Bounds far from what is expected, for a busy machine: cut at the deadline, a create has
 * had about 5 of its ~200 bytes and taken 4 s; the whole body would take minutes. A stop
 * ends within its 2 s grace (10 s at a load of 19 on two cores): the bound catches one
 * that hangs, and the rows still queued show one not heeded.
 */
const FEW_BYTES = 20;
const CUT_BOUND_MS = DEADLINE_MS + 15_000;
const STOP_BOUND_MS = 30_000;

describe(
  'every request has an overall deadline, whatever the body rate',
  { timeout: 60_000 },
  () => {
    const folder = useTempFolder();
    let trickle: TrickleServer;

    beforeEach(async () => {
      trickle = await startTrickleServer(GAP_MS);
    });
    afterEach(() => trickle.close());

    it('a create answered one byte a second is cut at the deadline, as ambiguous', async () => {
      const client = clientFor(trickle.url, {
        connectTimeoutMs: CONNECT_MS,
        requestTimeoutMs: REQUEST_MS,
      });
      try {
        const started = Date.now();
        const failure = await client.createCashOut(cashOutRequest('d-1')).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(GatewayError);
        expect((failure as GatewayError).kind).toBe('ambiguous');
        expect((failure as GatewayError).message).toContain('deadline');
        expect(Date.now() - started).toBeLessThan(CUT_BOUND_MS);
        // Cut by us, far from complete (the body is ~200 bytes: minutes at this rate).
        expect(trickle.creates[0]?.bytes).toBeLessThanOrEqual(FEW_BYTES);
      } finally {
        await client.close();
      }
    });

    const runEnv = () =>
      sandboxHome(folder(), trickle.url, {
        PAYOUTS_FOLLOW_TIMEOUT: '0',
        PAYOUTS_INBOX_SETTLE: '1ms',
        PAYOUTS_CONNECT_TIMEOUT: `${CONNECT_MS}ms`,
        PAYOUTS_REQUEST_TIMEOUT: `${REQUEST_MS}ms`,
        PAYOUTS_CONCURRENCY: '4',
      });

    const states = (home: string) => {
      const db = new Database(join(home, 'journal.db'), { readonly: true });
      try {
        const rows = db
          .prepare('SELECT state, COUNT(*) AS n FROM payouts GROUP BY state')
          .all() as {
          state: string;
          n: number;
        }[];
        return Object.fromEntries(rows.map((row) => [row.state, row.n]));
      } finally {
        db.close();
      }
    };

    it('a run against it ends: every create cut at the deadline and left unknown, for lookup', async () => {
      const { home, env } = runEnv();
      writeFileSync(join(home, 'inbox', 'pay.csv'), payrollFile('t', 8));
      const result = await runCli(['run'], { env });
      expect(result.code, result.stderr).toBe(3);
      expect(trickle.creates).toHaveLength(8);
      expect(
        trickle.creates.every((create) => create.ended === 'cut' && create.bytes <= FEW_BYTES),
      ).toBe(true);
      expect(states(home)).toEqual({ unknown: 8 });
    });

    it(`SIGTERM while creates trickle ends the run within ${STOP_BOUND_MS} ms, the rows in flight left for lookup`, async () => {
      const { home, env } = runEnv();
      writeFileSync(join(home, 'inbox', 'pay.csv'), payrollFile('t', 8));
      const child = spawn(process.execPath, [BIN, 'run'], {
        env: cleanEnv(env),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        // The state: every slot of the pool holds a trickling answer.
        await trickle.startedCreates(4);
        const signalled = Date.now();
        child.kill('SIGTERM');
        const code = await exited;
        expect(Date.now() - signalled).toBeLessThan(STOP_BOUND_MS);
        expect(code, stderr).toBe(3);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      expect(trickle.creates).toHaveLength(4);
      expect(states(home)).toEqual({ unknown: 4, queued: 4 });
    });
  },
);
