/**
 * A home folder whose runs are made in this process (runPass), against a sandbox that
 * keeps its ledger across runs, with a clock of its own that a test moves: for money
 * paths over weeks and months, where a CLI spawn per run would cost half a second.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { ensureFolders, homeFolders, type Folders } from '../../src/inbox/folders.js';
import { exitCodeOf, runPass, type FileSummary, type PassMemory } from '../../src/app/pass.js';
import type { Journal, JournalLocation } from '../../src/journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../src/journal/open.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { systemClock } from '../../src/runtime/clock.js';
import { TOKEN, clientFor } from './gateway.js';
import { postgresMissing, usePostgres } from './postgres.js';

export interface PassHome {
  sandbox: Sandbox;
  folders: Folders;
  /** Our clock (the journal's, the engine's): moved forward, or set to an instant. */
  now(): number;
  advance(ms: number): void;
  at(iso: string): void;
  /** The environment a CLI run of this home needs. */
  env(): Record<string, string>;
  config(settings?: Partial<Config>): Config;
  /** Writes a file into the inbox, changed now on our clock, CRLF line ends unless told. */
  drop(name: string, lines: readonly string[], lineEnd?: string): void;
  run(
    settings?: Partial<Config>,
    pass?: {
      followMs?: number;
      note?: (text: string) => void;
      signal?: AbortSignal;
      /** The client's request time-out (2 s unless told). */
      requestTimeoutMs?: number;
      /** What a daemon's process keeps between its passes (none: a `run`). */
      memory?: PassMemory;
    },
  ): Promise<{ files: FileSummary[]; exit: number }>;
  /** Opens the journal on our clock for `use`, and closes it once `use` is done. */
  withJournal<T>(use: (journal: Journal) => T | Promise<T>): Promise<T>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A new home and sandbox, both ended after the test that made them. */
export async function passHome(
  options: {
    balanceCents?: number;
    settleDelayMs?: number;
    onRequest?: SandboxOptions['onRequest'];
    /** Where the journal is kept: a PostgreSQL database (the home's journal.db unless told). */
    journal?: JournalLocation;
  } = {},
): Promise<PassHome> {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-pass-'));
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: options.settleDelayMs ?? 20,
    ...(options.balanceCents === undefined ? {} : { initialBalanceCents: options.balanceCents }),
    ...(options.onRequest === undefined ? {} : { onRequest: options.onRequest }),
  });
  cleanups.push(async () => {
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  });
  let offset = 0;
  const now = () => Date.now() + offset;
  const folders = homeFolders(join(folder, 'home'));
  ensureFolders(folders);
  const location = options.journal ?? sqliteJournalAt(folders.journal);
  const env = () => ({
    PAYOUTS_HOME: folders.home,
    PAYOUTS_BASE_URL: sandbox.url,
    PAYOUTS_TOKEN: TOKEN,
    ...(location.kind === 'postgres' ? { PAYOUTS_JOURNAL: location.url } : {}),
  });
  const config = (settings: Partial<Config> = {}): Config => ({
    ...loadConfig({ env: env() }).config,
    ...settings,
  });
  return {
    sandbox,
    folders,
    now,
    advance: (ms) => (offset += ms),
    at: (iso) => (offset = Date.parse(iso) - Date.now()),
    env,
    config,
    drop(name, lines, lineEnd = '\r\n') {
      const path = join(folders.inbox, name);
      writeFileSync(path, lines.join(lineEnd) + lineEnd);
      // Written now on our clock, which a test may have moved months ahead.
      utimesSync(path, new Date(now()), new Date(now()));
    },
    async run(settings = {}, pass = {}) {
      const journal = await openJournal(location, { now });
      const gateway = clientFor(
        sandbox.url,
        pass.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: pass.requestTimeoutMs },
      );
      try {
        const report = await runPass(journal, gateway, folders, config(settings), {
          followMs: pass.followMs ?? 10_000,
          signal: pass.signal ?? new AbortController().signal,
          pollPolicy: { firstMs: 20, growth: 1, capMs: 20 },
          isReady: () => true,
          note: pass.note ?? (() => undefined),
          clock: { now, sleep: systemClock.sleep },
          ...(pass.memory === undefined ? {} : { memory: pass.memory }),
        });
        return { files: report.files, exit: exitCodeOf(report.files, report.stopped) };
      } finally {
        await gateway.close();
        await journal.close();
      }
    },
    async withJournal(use) {
      const journal = await openJournal(location, { now });
      try {
        return await use(journal);
      } finally {
        await journal.close();
      }
    },
  };
}

/**
 * The stores a home's journal can be in, for describe.each: SQLite, and PostgreSQL when it
 * is here (a cluster for the calling block, started when its tests run), each with its
 * maker of a home whose journal is in that store, each its own database on PostgreSQL.
 */
export function passHomeStores(): [store: string, newHome: () => Promise<PassHome>][] {
  const postgres = postgresMissing() === undefined ? usePostgres() : undefined;
  let journals = 0;
  const stores: [string, () => Promise<PassHome>][] = [['SQLite', () => passHome()]];
  if (postgres)
    stores.push([
      'PostgreSQL',
      async () =>
        passHome({ journal: { kind: 'postgres', url: await postgres.made(`j${++journals}`) } }),
    ]);
  return stores;
}
