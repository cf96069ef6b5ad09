/**
 * The gateway's limits are the cluster's: two hosts' engines, wired as `payouts run` wires
 * them (engineFor), send at once through one PostgreSQL journal against one sandbox. They
 * run in this process (hosts take turns on the home's lock today, so two `payouts watch`
 * would never send together); each has a journal of its own, as a host has.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineFor } from '../../src/app/engine-for.js';
import { loadConfig } from '../../src/config/load.js';
import { sendQueued } from '../../src/engine/engine.js';
import { POLLING } from '../../src/engine/policy.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import type { Journal } from '../../src/journal/journal.js';
import { openPostgresJournal } from '../../src/journal/postgres/open.js';
import { systemClock } from '../../src/runtime/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { recordOpenBatch } from '../support/batch.js';
import { TOKEN, cashOutRequest, clientFor, ledgerCounts } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const missing = postgresMissing();
(missing ? describe.skip : describe)(
  `the hosts of one PostgreSQL journal keep the gateway's limits together${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const postgres = usePostgres();
    let sandbox: Sandbox;
    const opened: { close(): Promise<void> }[] = [];
    // When each host started a create, when each reached the gateway, when it answered a 429.
    let starts: number[];
    let arrivals: number[];
    // What each host logged, by its name.
    let notes: string[];
    let rateLimitedAt: number | undefined;

    beforeEach(async () => {
      starts = [];
      arrivals = [];
      notes = [];
      rateLimitedAt = undefined;
      sandbox = await startSandbox({
        token: TOKEN,
        settleDelayMs: 3_600_000,
        onRequest: ({ path, fault }) => {
          if (!path.includes('cashout')) return;
          arrivals.push(Date.now());
          if (fault === 'rate-limit') {
            rateLimitedAt = Date.now();
            // One 429, to one host: the faults draw again for the next request.
            sandbox.setFaults({ rateLimitRate: 0 });
          }
        },
      });
    });
    afterEach(async () => {
      for (const each of opened.splice(0).reverse()) await each.close();
      await sandbox.close();
    });

    /** `rows` payouts queued in the journal of `database`. */
    const queued = async (database: string, rows: number): Promise<string[]> => {
      const journal = await host(database);
      const batchId = await recordOpenBatch(journal, 'payroll.csv', rows);
      const ids = Array.from({ length: rows }, (_, i) => `p-${String(i).padStart(4, '0')}`);
      await journal.admitPayouts(
        batchId,
        ids.map((id, i) => ({ line: i + 2, request: cashOutRequest(id) })),
        { duplicateWindowMs: 0 },
      );
      return ids;
    };

    async function host(database: string): Promise<Journal> {
      const journal = await openPostgresJournal(
        { kind: 'postgres', url: await postgres.made(database) },
        { now: Date.now, concurrency: 4 },
      );
      opened.push(journal);
      return journal;
    }

    /** Host `name` sending every queued payout it can claim, with the settings of `env`. */
    const sending = async (database: string, name: string, env: Record<string, string>) => {
      const journal = await host(database);
      const client = clientFor(sandbox.url, { requestTimeoutMs: 2000 });
      opened.push(client);
      const gateway: GatewayClient = {
        ...client,
        createCashOut: (request, callOptions) => {
          starts.push(Date.now());
          return client.createCashOut(request, callOptions);
        },
      };
      const { config } = loadConfig({ env: { ...env, PAYOUTS_HOST_NAME: name } });
      const { deps, engine } = engineFor(journal, gateway, config, {
        followMs: 0,
        signal: new AbortController().signal,
        pollPolicy: POLLING,
        clock: systemClock,
        note: (text) => notes.push(`${name}: ${text}`),
      });
      return sendQueued(deps, engine);
    };

    const expectEachPaidOnce = (ids: string[]) => {
      const counts = ledgerCounts(sandbox);
      expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
    };

    it('maxRequestsPerSecond is one budget for both hosts: never more starts in a second', async () => {
      const ids = await queued('budget', 60);
      const env = { PAYOUTS_MAX_REQUESTS_PER_SECOND: '10' };
      await Promise.all([sending('budget', 'pay-1', env), sending('budget', 'pay-2', env)]);
      expectEachPaidOnce(ids);
      // Any 11 starts in a row span about a second, counted as the requests leave (a new
      // connection may hold the first ones back on their way); the slack is the two hosts'
      // timers firing late on a busy machine.
      const ordered = [...starts].sort((a, b) => a - b);
      const spans = ordered.slice(10).map((at, i) => at - (ordered[i] as number));
      expect(Math.min(...spans)).toBeGreaterThanOrEqual(800);
    });

    it('a 429 answered to one host pauses the other as well, for its Retry-After', async () => {
      const ids = await queued('pause', 600);
      sandbox.setFaults({ latencyMs: 20, retryAfterSeconds: 3 });
      const env = { PAYOUTS_CONCURRENCY: '2' };
      const both = Promise.all([sending('pause', 'pay-1', env), sending('pause', 'pay-2', env)]);
      await waitFor('both hosts sending', () => arrivals.length >= 40, 30_000);
      sandbox.setFaults({ rateLimitRate: 1, operations: ['createCashOut'] });
      await both;
      expectEachPaidOnce(ids);
      expect(rateLimitedAt).toBeDefined();
      const at = rateLimitedAt as number;
      // Within the 3 s asked for, from 1 s on: the other host learns of the pause through
      // the journal within a fraction of that; until 2.5 s: the host that was answered
      // reads the 429 a moment after the gateway sent it.
      expect(arrivals.filter((when) => when > at + 1_000 && when < at + 2_500).length).toBe(0);
      // Each host says the pause once: the one answered, and the other as it learns of it.
      const said = notes.filter((note) => note.includes('429'));
      expect(said).toHaveLength(2);
      expect(said).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^pay-\d: another host of this journal was answered 429 \(too many requests\): no request starts here for [23]s$/,
          ),
          expect.stringMatching(
            /^pay-\d: the gateway answered 429 \(too many requests\): no request starts for 3s on any host of this journal$/,
          ),
        ]),
      );
    });
  },
);
