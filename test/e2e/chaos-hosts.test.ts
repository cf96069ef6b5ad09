/**
 * Three `payouts watch` hosts on one home and one journal on PostgreSQL, against the
 * sandbox with faults, while the test does them harm in a seeded random order: a host
 * killed and started again, a host stopped past its lease and the lock's staleness then
 * resumed while another sends, PostgreSQL restarted, a host cut off from the database or
 * from the gateway for longer than its lease. Judged only by the sandbox's ledger and the
 * home's folders, so it holds whether hosts take turns or work at once: every row paid
 * once, every result one line per input line, no file set aside.
 *
 * In the suite: one fault of each kind on a fixed seed. `PAYOUTS_CHAOS_FAULTS=300` draws
 * that many at random on a random seed; `PAYOUTS_CHAOS_SEED` replays a printed one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestDeadlineMs } from '../../src/gateway/client.js';
import { openJournalReadOnly } from '../../src/journal/open.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { BIN, cleanEnv } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN, ledgerCounts } from '../support/gateway.js';
import { QUICK_TIMEOUTS, sandboxHome } from '../support/home.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor as waitUntil } from '../support/wait.js';

const KINDS = [
  'kill',
  'stop',
  'restart-database',
  'cut-database',
  'cut-gateway',
  '429-burst',
] as const;
type Kind = (typeof KINDS)[number];

const LONG_FAULTS = Number(process.env.PAYOUTS_CHAOS_FAULTS ?? 0);
const SEED = Number(
  process.env.PAYOUTS_CHAOS_SEED ?? (LONG_FAULTS > 0 ? Date.now() % 2 ** 31 : 31),
);
/** Rows of each file dropped; one file before each fault, so each lands mid-batch. */
const ROWS = 60;
/** The hosts' claims' lease, as engine-for sizes it from QUICK_TIMEOUTS (1 s each), and 2 s. */
const LEASE_MS =
  requestDeadlineMs({ connectTimeoutMs: 1_000, requestTimeoutMs: 1_000 }) + 1_000 + 2_000;
/** A state a fault waits for: generous, the machine is shared. */
const FAULT_BOUND_MS = 240_000;
/** Every file finished once the faults are over: leases, graces, a stale lock, and each file's polls. */
const endBoundMs = (files: number) => 300_000 + files * 30_000;

/** Waits (bounded) until `condition` holds, naming the seed when it times out. */
const waitFor = (what: string, condition: () => boolean | Promise<boolean>, ms: number) =>
  waitUntil(`${what} (seed ${SEED})`, condition, ms);

interface Host {
  name: string;
  /** The host's only ways to PostgreSQL and to the gateway, which the test cuts. */
  database: TcpProxy;
  gateway: TcpProxy;
  child: ChildProcess | undefined;
  /** What the current process logged. */
  log: string;
  /** How each of its processes ended that the test did not end itself. */
  exits: string[];
}

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `three hosts on one journal on PostgreSQL, with faults${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const folder = useTempFolder();
    const postgres = usePostgres();
    let sandbox: Sandbox;
    const answered = new Map<string, number>();
    /** The gateway's requests by what they ask: creates, lookups by orderId, the rest. */
    const asked = new Map<string, number>();
    const hosts: Host[] = [];
    let ending = false;
    const looks: pg.Pool[] = [];

    beforeEach(async () => {
      answered.clear();
      asked.clear();
      ending = false;
      sandbox = await startSandbox({
        token: TOKEN,
        settleDelayMs: 200,
        faults: {
          seed: SEED,
          latencyMs: { min: 20, max: 120 },
          dropAfterCommitRate: 0.03,
          serverErrorAfterCommitRate: 0.03,
          serverErrorRate: 0.02,
          rateLimitRate: 0.02,
          retryAfterSeconds: 1,
        },
        onRequest: ({ method, path, status, fault }) => {
          const key = fault === 'none' ? String(status) : fault;
          answered.set(key, (answered.get(key) ?? 0) + 1);
          const what =
            method === 'POST' ? 'create' : path.includes('/by/orderId/') ? 'lookup' : 'other';
          asked.set(what, (asked.get(what) ?? 0) + 1);
        },
      });
    });
    afterEach(async () => {
      ending = true;
      for (const host of hosts.splice(0)) {
        const child = host.child;
        if (child && child.exitCode === null && child.signalCode === null) {
          const gone = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await gone;
        }
        await host.database.close();
        await host.gateway.close();
      }
      for (const look of looks.splice(0)) await look.end();
      await sandbox.close();
    });

    it(
      `every valid row paid once through kills, pauses, cuts and a restarted database (seed ${SEED})`,
      { timeout: (LONG_FAULTS > 0 ? LONG_FAULTS * 4 : 20) * 60_000 },
      async () => {
        const started = Date.now();
        const random = createRandom(SEED);
        const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
        const faults: Kind[] =
          LONG_FAULTS > 0
            ? Array.from({ length: LONG_FAULTS }, () => pick(KINDS))
            : shuffled(KINDS, random);
        const say = (line: string) =>
          console.log(`chaos ${((Date.now() - started) / 1000).toFixed(1)} s: ${line}`);
        say(`seed ${SEED} (PAYOUTS_CHAOS_SEED=${SEED} replays it), faults: ${faults.join(', ')}`);

        const databaseUrl = await postgres.made('chaos');
        const databasePort = Number(new URL(databaseUrl).port);
        const { home, env } = sandboxHome(folder(), sandbox.url, {
          PAYOUTS_LOG_LEVEL: 'info',
          PAYOUTS_INBOX_SETTLE: '300ms',
          PAYOUTS_INBOX_RESCAN: '300ms',
          PAYOUTS_CONCURRENCY: '2',
          PAYOUTS_MAX_REQUESTS_PER_SECOND: '15',
          ...QUICK_TIMEOUTS,
        });
        // The test's own look at the journal: a lease's owner is no member of the interface.
        const look = new pg.Pool({ connectionString: databaseUrl, max: 1 });
        looks.push(look);
        look.on('error', () => undefined);
        const databaseNow = async () =>
          Number(
            (
              await look.query<{ now: string }>(
                'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
              )
            ).rows[0]!.now,
          );
        const liveLeases = async (host: Host) =>
          Number(
            (
              await look.query<{ n: string }>(
                `SELECT count(*) AS n FROM payouts WHERE lease_owner LIKE $1
                   AND lease_until > floor(extract(epoch FROM clock_timestamp()) * 1000)`,
                [`${host.name}:%`],
              )
            ).rows[0]!.n,
          );

        /** The host's `payouts watch`, started again whenever it ends, whatever its exit code. */
        const launch = (host: Host) => {
          const port = new URL(sandbox.url).port;
          const child = spawn(process.execPath, [BIN, 'watch'], {
            env: cleanEnv({
              ...env,
              PAYOUTS_HOST_NAME: host.name,
              PAYOUTS_JOURNAL: databaseUrl.replace(`:${databasePort}/`, `:${host.database.port}/`),
              PAYOUTS_BASE_URL: sandbox.url.replace(`:${port}`, `:${host.gateway.port}`),
            }),
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          host.child = child;
          host.log = '';
          child.stderr?.on('data', (chunk: Buffer) => (host.log += chunk.toString('utf8')));
          child.once('exit', (code, signal) => {
            if (ending || host.child !== child) return;
            host.exits.push(`${code ?? signal}:\n${lastLines(host.log)}`);
            launch(host);
          });
        };
        /** Launched, and waited for until it logs. */
        const start = async (host: Host) => {
          launch(host);
          await waitFor(`${host.name} started`, () => host.log.includes('"msg"'), FAULT_BOUND_MS);
        };
        for (const name of ['pay-1', 'pay-2', 'pay-3']) {
          hosts.push({
            name,
            database: await startTcpProxy(databasePort),
            gateway: await startTcpProxy(sandbox.port),
            child: undefined,
            log: '',
            exits: [],
          });
        }
        for (const host of hosts) await start(host);

        const dropped: { name: string; orderIds: string[]; lines: number }[] = [];
        // Archived: every row final (a result file is written, and rewritten, before that).
        const finished = (name: string) =>
          existsSync(join(home, 'archive')) &&
          readdirSync(join(home, 'archive')).some((file) =>
            file.startsWith(`${name.slice(0, -4)}.`),
          );
        const allFinished = () => dropped.every((file) => finished(file.name));
        /** A new file in the inbox; once some of its rows are paid, work is under way. */
        const drop = async () => {
          const n = dropped.length;
          const name = `folha-${n}.csv`;
          // An amount of its own per file: no row of one file covers a row of another.
          const content = payrollFile(`c${n}`, ROWS, () => `${n + 1},00`);
          const orderIds = Array.from({ length: ROWS }, (_, i) => `c${n}-${i}`);
          dropped.push({ name, orderIds, lines: content.trimEnd().split('\n').length });
          writeFileSync(join(home, 'inbox', name), content);
          await waitFor(
            `rows of ${name} paid`,
            () => {
              const paid = ledgerCounts(sandbox);
              return orderIds.filter((id) => paid.has(id)).length >= 5 || finished(name);
            },
            FAULT_BOUND_MS,
          );
        };
        /**
         * The working host: one holding rows now, else one holding the home (it said it is
         * watching the inbox; a host waiting its turn says so instead), else any.
         */
        const working = async () => {
          const holding: Host[] = [];
          for (const host of hosts)
            if ((await liveLeases(host).catch(() => 0)) > 0) holding.push(host);
          const watching = hosts.filter((host) => host.log.includes('"msg":"watching '));
          return pick([holding, watching, hosts].find((some) => some.length > 0)!);
        };
        /** What the hosts but `host` have sent to the gateway so far. */
        const sentByOthers = (host: Host) =>
          hosts.reduce((sum, other) => sum + (other === host ? 0 : other.gateway.forwarded()), 0);

        const done = new Map<Kind, number>();
        /** Seconds each kind of fault took, from its file's drop to the state it waited for. */
        const took = new Map<Kind, number>();
        for (const fault of faults) {
          const faultStarted = Date.now();
          await drop();
          const target = fault === 'kill' ? pick(hosts) : await working();
          say(
            `${fault}${fault === 'restart-database' || fault === '429-burst' ? '' : ` ${target.name}`}`,
          );
          if (fault === 'kill') {
            const child = target.child!;
            target.child = undefined;
            const gone = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGKILL');
            await gone;
            await start(target);
          } else if (fault === 'stop') {
            const child = target.child!;
            child.kill('SIGSTOP');
            const sent = sentByOthers(target);
            // Its claims ended and another host talks to the gateway: it was replaced.
            await waitFor(
              `${target.name}'s leases ended and another host at the gateway`,
              async () =>
                (await liveLeases(target)) === 0 && (sentByOthers(target) > sent || allFinished()),
              FAULT_BOUND_MS,
            );
            say(`${target.name} replaced; resumed`);
            child.kill('SIGCONT');
          } else if (fault === 'restart-database') {
            await postgres.cluster().restart();
          } else if (fault === 'cut-database' || fault === 'cut-gateway') {
            const proxy = fault === 'cut-database' ? target.database : target.gateway;
            const from = await databaseNow();
            proxy.cut();
            // Longer than its lease by the database's clock, which judges leases.
            await waitFor(
              `${target.name} cut off past its lease`,
              async () =>
                (await databaseNow()) > from + LEASE_MS &&
                (fault === 'cut-gateway' || (await liveLeases(target)) === 0),
              FAULT_BOUND_MS,
            );
            proxy.mend();
          } else {
            sandbox.setFaults({ rateLimitRate: 0.7 });
            const before = answered.get('rate-limit') ?? 0;
            await waitFor(
              'a burst of 429s',
              () => (answered.get('rate-limit') ?? 0) >= before + 10 || allFinished(),
              FAULT_BOUND_MS,
            );
            sandbox.setFaults({ rateLimitRate: 0.02 });
          }
          done.set(fault, (done.get(fault) ?? 0) + 1);
          took.set(fault, (took.get(fault) ?? 0) + (Date.now() - faultStarted) / 1000);
        }
        const faultsOverAt = Date.now();

        say('faults over: waiting for every file to finish');
        const folders = (name: string) =>
          existsSync(join(home, name)) ? readdirSync(join(home, name)) : [];
        await waitFor(
          'every file finished, nothing left in the inbox or processing',
          async () =>
            allFinished() &&
            folders('inbox').length === 0 &&
            folders('processing').length === 0 &&
            hosts.every((host) => host.child?.exitCode === null) &&
            (await Promise.all(hosts.map(liveLeases))).every((n) => n === 0),
          endBoundMs(dropped.length),
        );

        const counts = ledgerCounts(sandbox);
        const expected = dropped.flatMap((file) => file.orderIds);
        const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
        const lost = expected.filter((id) => !counts.has(id));
        const inFiles = new Set(expected);
        const strangers = [...counts.keys()].filter((id) => !inFiles.has(id));
        const history =
          twice.length + lost.length === 0
            ? ''
            : await historiesOf([...twice, ...lost], databaseUrl);
        expect({ twice, lost, strangers }, `seed ${SEED}\n${history}`).toEqual({
          twice: [],
          lost: [],
          strangers: [],
        });
        for (const file of dropped) {
          const result = folders('results').find(
            (name) => name.startsWith(`${file.name.slice(0, -4)}.`) && name.endsWith('.result.csv'),
          )!;
          const lines = readFileSync(join(home, 'results', result), 'utf8')
            .trimEnd()
            .split('\n');
          expect(lines.length, `${result} (seed ${SEED})`).toBe(file.lines);
        }
        expect(folders('rejected'), 'files set aside').toEqual([]);
        expect(folders('awaiting-approval'), 'files held for a person').toEqual([]);
        // A host may end (its lock lost, the database away) and is started again; never as a bug.
        const crashes = hosts.flatMap((host) =>
          host.exits.filter((exit) => /^70:|Node\.js v\d+|internal error/m.test(exit)),
        );
        expect(crashes, `hosts that crashed (seed ${SEED})`).toEqual([]);

        ending = true;
        for (const host of hosts) {
          const child = host.child!;
          const ended = new Promise<number | null>((resolve) =>
            child.once('exit', (code) => resolve(code)),
          );
          process.kill(child.pid!, 'SIGTERM');
          expect(await ended, `${host.name} stopped by its pid`).toBe(0);
        }

        const endings = new Map<string, number>();
        for (const exit of hosts.flatMap((host) => host.exits)) {
          const why = /lock was lost/.test(exit)
            ? 'its lock lost'
            : /cannot be reached/.test(exit)
              ? 'the database unreachable'
              : lastSaid(exit);
          const key = `exit ${exit.slice(0, exit.indexOf(':'))}, ${why}`;
          endings.set(key, (endings.get(key) ?? 0) + 1);
        }
        const restarts = [...endings].map(([key, n]) => `${n} (${key})`).join(', ') || 'none';
        const paid = ledgerCounts(sandbox);
        // The figures of the run for its closing note, from the gateway's ledger and the journal.
        const figures = {
          seed: SEED,
          faults: Object.fromEntries(done),
          faultSeconds: Object.fromEntries([...took].map(([kind, s]) => [kind, Math.round(s)])),
          files: dropped.length,
          rows: expected.length,
          rowsPaid: expected.filter((id) => paid.get(id) === 1).length,
          ledgerEntries: sandbox.ledger().length,
          requests: Object.fromEntries(asked),
          gatewayFaults: Object.fromEntries(
            [...answered].filter(([key]) => !/^\d+$/.test(key) || key === '429'),
          ),
          journal: await journalFigures(look),
          hostRestarts: Object.fromEntries(endings),
          finishSeconds: Math.round((Date.now() - faultsOverAt) / 1000),
          seconds: Math.round((Date.now() - started) / 1000),
        };
        console.log(`chaos figures ${JSON.stringify(figures)}`);
        say(
          `seed ${SEED}: ${faults.length} faults (${[...done].map(([kind, n]) => `${kind} ${n}`).join(', ')}), ` +
            `${expected.length} rows in ${dropped.length} files, each paid once; ` +
            `gateway faults ${[...answered]
              .filter(([key]) => !/^\d+$/.test(key))
              .map(([key, n]) => `${key} ${n}`)
              .join(', ')}; ` +
            `hosts ended on their own and started again: ${restarts}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
      },
    );
  },
);

/** `items` in an order drawn from `random` (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * Why a process ended, as its last line says it (a log line's message), its figures left
 * out so that alike ones count together.
 */
function lastSaid(exit: string): string {
  const last = exit.trimEnd().split('\n').at(-1) ?? '';
  const said = /^\{.*"msg":"((?:[^"\\]|\\.)*)"/.exec(last)?.[1] ?? last;
  return said.replace(/\d+/g, 'N').slice(0, 160);
}

/** The last lines a process logged (a crash's stack included), for the record of how it ended. */
function lastLines(log: string): string {
  return log.trimEnd().split('\n').slice(-30).join('\n');
}

/**
 * What the journal's audit says the hosts did: claims by host, rows found `sending` past
 * their lease (taken over, by another host or by the same host's next process), rows left
 * unknown by an answer that never came, how unknown rows ended (found by lookup, or sent
 * again after two lookups found nothing), and claims given back unsent, too old to leave.
 */
async function journalFigures(look: pg.Pool) {
  const { rows } = await look.query<{
    host: string | null;
    code: string;
    from_state: string | null;
    to_state: string;
    other_host: boolean | null;
    n: string;
  }>(
    `WITH said AS (
       SELECT id, payout_id, from_state, to_state,
              CASE WHEN reason LIKE '{%' THEN reason::json END AS reason
         FROM audit)
     SELECT CASE WHEN a.reason->>'code' = 'auditClaimed'
                 THEN split_part(a.reason->>'owner', ':', 1) END AS host,
            coalesce(a.reason->>'code', 'english') AS code, a.from_state, a.to_state,
            CASE WHEN a.reason->>'code' = 'auditLeaseEnded' THEN
              split_part(a.reason->>'owner', ':', 1) <> (
                SELECT split_part(c.reason->>'owner', ':', 1) FROM said c
                 WHERE c.payout_id = a.payout_id AND c.id < a.id
                   AND c.reason->>'code' = 'auditClaimed'
                 ORDER BY c.id DESC LIMIT 1) END AS other_host,
            count(*) AS n
       FROM said a GROUP BY 1, 2, 3, 4, 5`,
  );
  const sum = (which: (row: (typeof rows)[number]) => boolean) =>
    rows.filter(which).reduce((total, row) => total + Number(row.n), 0);
  const claimsByHost: Record<string, number> = {};
  for (const row of rows) if (row.host) claimsByHost[row.host] = Number(row.n);
  return {
    claimsByHost,
    takenOverSending: {
      byAnotherHost: sum((row) => row.code === 'auditLeaseEnded' && row.other_host === true),
      bySameHostAgain: sum((row) => row.code === 'auditLeaseEnded' && row.other_host !== true),
    },
    unknownAfterNoAnswer: sum(
      (row) =>
        row.to_state === 'unknown' &&
        row.from_state === 'sending' &&
        row.code !== 'auditLeaseEnded',
    ),
    unknownFoundByLookup: sum(
      (row) => row.from_state === 'unknown' && !['sending', 'unknown'].includes(row.to_state),
    ),
    resentAfterLookup: sum((row) => row.code === 'auditResending'),
    givenBackTooOld: sum((row) => row.code === 'auditClaimTooOld'),
  };
}

/** Each row's moves as the journal audited them, read through the interface. */
async function historiesOf(orderIds: readonly string[], url: string): Promise<string> {
  const journal = await openJournalReadOnly({ kind: 'postgres', url }, Date.now);
  try {
    const lines: string[] = [];
    for (const orderId of orderIds) {
      const record = await journal.payout(orderId);
      lines.push(`${orderId}: ${record?.state ?? 'not journaled'}`);
      for (const entry of await journal.history(orderId)) {
        lines.push(
          `  ${new Date(entry.at).toISOString()} ${entry.from ?? '-'} -> ${entry.to} ${JSON.stringify(entry.reason)}`,
        );
      }
    }
    return lines.join('\n');
  } finally {
    await journal.close();
  }
}
