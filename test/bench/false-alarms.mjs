// The false alarms of three routines (test/bench/support/routines.mjs): twelve weekly
// supplier files with an NF column, forty-five daily refund files with a pedido column,
// three months of payroll with férias and 13º under a competência column, each run file
// by file in a home of its own with the clock moved between runs, against the sandbox
// over real HTTP, then the real duplicate each routine meets. Each routine runs with its
// reference column read, and again with it unread (as before the column was read).
// Prints one JSON line per routine and reading: files, rows, held, held %, files that
// needed a person, the real duplicates held, and orderIds the gateway created twice.
// `node test/bench/false-alarms.mjs [ROUTINE]`, after `npm run build`.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPass } from '../../dist/app/pass.js';
import { loadConfig } from '../../dist/config/load.js';
import { createGatewayClient } from '../../dist/gateway/client.js';
import { ensureFolders, homeFolders } from '../../dist/inbox/folders.js';
import { openJournal, sqliteJournalAt } from '../../dist/journal/open.js';
import { systemClock } from '../../dist/runtime/clock.js';
import { startSandbox } from '../../dist/sandbox/server.js';
import { ROUTINES, runRoutine } from './support/routines.mjs';

const TOKEN = 'bench-token';

/** A home and a sandbox on a clock of their own, as test/support/pass-home.ts makes them. */
async function home() {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-false-alarms-'));
  const sandbox = await startSandbox({ token: TOKEN, settleDelayMs: 20 });
  const folders = homeFolders(join(folder, 'home'));
  ensureFolders(folders);
  let offset = 0;
  const now = () => Date.now() + offset;
  const env = { PAYOUTS_HOME: folders.home, PAYOUTS_BASE_URL: sandbox.url, PAYOUTS_TOKEN: TOKEN };
  const config = loadConfig({ env }).config;
  return {
    advance: (ms) => (offset += ms),
    drop(name, lines) {
      const path = join(folders.inbox, name);
      writeFileSync(path, lines.join('\r\n') + '\r\n');
      utimesSync(path, new Date(now()), new Date(now()));
    },
    async run() {
      const journal = await openJournal(sqliteJournalAt(folders.journal), { now });
      const gateway = createGatewayClient({
        baseUrl: sandbox.url,
        token: TOKEN,
        authScheme: '',
        getTransactionMethod: 'GET',
        connectTimeoutMs: 2000,
        requestTimeoutMs: 2000,
        connections: 8,
      });
      try {
        return await runPass(journal, gateway, folders, config, {
          followMs: 10_000,
          signal: new AbortController().signal,
          pollPolicy: { firstMs: 20, growth: 1, capMs: 20 },
          isReady: () => true,
          note: () => undefined,
          clock: { now, sleep: systemClock.sleep },
        });
      } finally {
        await gateway.close();
        await journal.close();
      }
    },
    ledger: () => sandbox.ledger(),
    async close() {
      await sandbox.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const only = process.argv[2];
for (const name of Object.keys(ROUTINES).filter((name) => !only || name === only)) {
  for (const reference of [true, false]) {
    const started = performance.now();
    const routineHome = await home();
    try {
      const figures = await runRoutine(routineHome, name, ROUTINES[name].full, { reference });
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
      console.log(JSON.stringify({ bench: 'false-alarms', ...figures, seconds }));
    } finally {
      await routineHome.close();
    }
  }
}
