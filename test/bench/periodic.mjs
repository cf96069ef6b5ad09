// A daemon's periodic journal work against the journal's age: one home, its journal grown
// to 10,000, 100,000 and then 1,000,000 paid payouts (put straight in SQL, a
// batch each time), with a file of 3 payouts left pending at the in-process sandbox. At
// each size, five following passes as `payouts watch` makes them (unclear rows looked up,
// pending ones polled for 200 ms, each file's result written): the time spent in the
// journal's members in a pass (the median; calls that overlap, polls in flight, counted
// each), beside a bare `SELECT 1` on the same file (the floor of one statement, in µs),
// and the health line's counts once: as it was (countsByState of every state) and as it is
// (healthOf, the states in flight); and what `run`'s progress reads to start and stop
// (its batches' counts, the 3-payout file's open). Prints one JSON line per size. `BENCH_PERIODIC_SIZES=10000,100000`
// runs only the sizes named (`npm run build` first).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { newPassMemory, runPass } from '../../dist/app/pass.js';
import { healthOf } from '../../dist/app/serve.js';
import { startProgress } from '../../dist/cli/progress.js';
import { loadConfig } from '../../dist/config/load.js';
import { en } from '../../dist/messages/en.js';
import { withCheckDigits } from '../../dist/domain/check-digits.js';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { ensureFolders, homeFolders } from '../../dist/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { sqliteBinding } from '../../dist/runtime/sqlite.js';
import { startSandbox } from '../../dist/sandbox/server.js';
import { addPayouts } from './support/old-payouts.mjs';

const TOKEN = 'bench-token';
const SIZES = (process.env.BENCH_PERIODIC_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const PASSES = 5;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => Number(value.toFixed(3));

/** The journal, each of its members timed from its call until what it returns settles. */
function timed(journal) {
  const spent = { ms: 0 };
  const proxy = new Proxy(journal, {
    get(target, name) {
      const member = target[name];
      if (typeof member !== 'function') return member;
      return (...args) => {
        const began = performance.now();
        const result = member.apply(target, args);
        const end = () => (spent.ms += performance.now() - began);
        if (result instanceof Promise) return result.finally(end);
        end();
        return result;
      };
    },
  });
  return { journal: proxy, spent };
}

const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-periodic-'));
const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 3_600_000 });
const folders = homeFolders(join(folder, 'home'));
ensureFolders(folders);
const config = loadConfig({
  env: { PAYOUTS_HOME: folders.home, PAYOUTS_BASE_URL: sandbox.url, PAYOUTS_TOKEN: TOKEN },
}).config;
const gateway = createGatewayClient({
  baseUrl: sandbox.url,
  token: TOKEN,
  authScheme: '',
  getTransactionMethod: 'GET',
  connectTimeoutMs: 2000,
  requestTimeoutMs: 2000,
  connections: 8,
});
const memory = newPassMemory();
const pass = (journal, followMs) =>
  runPass(journal, gateway, folders, config, {
    followMs,
    signal: new AbortController().signal,
    pollPolicy: { firstMs: 20, growth: 1, capMs: 20 },
    isReady: () => true,
    memory,
    clock: systemClock,
    note: () => undefined,
  });

try {
  await (await openJournal(sqliteJournalAt(folders.journal))).close();
  writeFileSync(
    join(folders.inbox, 'folha.csv'),
    'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n' +
      [0, 1, 2]
        .map(
          (i) =>
            `folha-${i},Pessoa ${i},p${i}@example.com,11987654321,${withCheckDigits(String(100_000_000 + i))},EMAIL,p${i}@example.com,"1,00"`,
        )
        .join('\n') +
      '\n',
  );
  let paid = 0;
  for (const size of SIZES) {
    const db = new (sqliteBinding())(folders.journal);
    const built = performance.now();
    for (; paid < size; paid += Math.min(1_000_000, size - paid)) {
      addPayouts(db, { count: Math.min(1_000_000, size - paid), state: 'paid' });
    }
    const buildMs = performance.now() - built;
    const select = db.prepare('SELECT 1');
    const selects = [];
    for (let i = 0; i < 1_000; i++) {
      const began = performance.now();
      select.get();
      selects.push(performance.now() - began);
    }
    db.close();
    const opened = await openJournal(sqliteJournalAt(folders.journal));
    try {
      // The file is taken and sent by the first pass at the first size.
      if (size === SIZES[0]) await pass(opened, 0);
      const passes = [];
      for (let i = 0; i < PASSES; i++) {
        memory.resolvedAt = 0;
        const { journal, spent } = timed(opened);
        await pass(journal, 200);
        passes.push(spent.ms);
      }
      const began = performance.now();
      const counts = await opened.countsByState();
      const allCountsMs = performance.now() - began;
      const healthBegan = performance.now();
      await healthOf(opened, folders);
      const healthMs = performance.now() - healthBegan;
      const progressBegan = performance.now();
      const sink = { write: () => true };
      await (await startProgress(opened, 'lines', sink, () => undefined, en)).stop();
      const progressMs = performance.now() - progressBegan;
      console.log(
        JSON.stringify({
          bench: 'periodic',
          finished: size,
          pending: counts.pending?.count ?? 0,
          passJournalMs: ms(median(passes)),
          select1Micros: ms(median(selects) * 1000),
          allCountsMs: ms(allCountsMs),
          healthCountsMs: ms(healthMs),
          progressCountsMs: ms(progressMs),
          buildSeconds: Number((buildMs / 1000).toFixed(1)),
        }),
      );
    } finally {
      await opened.close();
    }
  }
} finally {
  await gateway.close();
  await sandbox.close();
  rmSync(folder, { recursive: true, force: true });
}
