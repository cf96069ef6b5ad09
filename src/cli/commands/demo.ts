import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { Config } from '../../config/schema.js';
import { formatCents } from '../../messages/money.js';
import { POLLING } from '../../engine/policy.js';
import { createGatewayClient } from '../../gateway/client.js';
import { ensureFolders, homeFolders } from '../../inbox/folders.js';
import { runPass, type FileSummary } from '../../app/pass.js';
import type { JournalBatches } from '../../journal/journal.js';
import { openJournal, sqliteJournalAt } from '../../journal/open.js';
import { SANDBOX_DEFAULTS, startSandbox } from '../../sandbox/server.js';
import { openContext, type GlobalOptions } from '../context.js';
import { ExitError } from '../exit-error.js';
import { startProgress } from '../progress.js';
import { sayInEnglish } from '../../messages/say.js';
import { CATALOGS, type HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

const SAMPLES = fileURLToPath(new URL('../../../samples/', import.meta.url));
/** The demo's gateway: a few dropped answers and a 429 burst on creates, settling fast. */
const DEMO_FAULTS = {
  seed: 11,
  dropAfterCommitRate: 0.15,
  rateLimitRate: 0.15,
  retryAfterSeconds: 1,
  operations: ['createCashOut' as const],
};
const SETTLE_DELAY_MS = 800;
/** The demo ends within this, settled or not. */
const FOLLOW_MS = 30_000;
const INVALID_SHOWN = 4;

export function demoCommand(io: CliIo, { command: { demo: words } }: HelpTexts): Command {
  return new Command('demo')
    .description(words.description)
    .addHelpText('after', words.after)
    .action(async (_options: object, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const { out } = context;
      const started = io.clock.now();
      const home = resolve(
        context.config.home,
        'demo',
        new Date(started).toISOString().replace(/[:.]/g, '-'),
      );
      const config: Config = {
        ...context.config,
        home,
        // Short time-outs: a dropped answer is looked up at once, and the demo stays short.
        connectTimeout: 2_000,
        requestTimeout: 3_000,
        resendGrace: 2_000,
        inboxSettle: 1,
        concurrency: 8,
        balanceCheck: 'block',
        requireApproval: false,
      };
      const folders = homeFolders(home);
      ensureFolders(folders);
      const files = readdirSync(SAMPLES).filter((name) => name.endsWith('.csv'));
      for (const name of files) copyFileSync(join(SAMPLES, name), join(folders.inbox, name));

      const faults = new Map<string, number>();
      const sandbox = await startSandbox({
        token: SANDBOX_DEFAULTS.token,
        settleDelayMs: SETTLE_DELAY_MS,
        faults: DEMO_FAULTS,
        onRequest: ({ fault }) => faults.set(fault, (faults.get(fault) ?? 0) + 1),
      });
      const gateway = createGatewayClient({
        baseUrl: sandbox.url,
        token: SANDBOX_DEFAULTS.token,
        authScheme: '',
        getTransactionMethod: 'GET',
        connectTimeoutMs: config.connectTimeout,
        requestTimeoutMs: config.requestTimeout,
        connections: config.concurrency,
      });
      const journal = await openJournal(sqliteJournalAt(folders.journal), { now: io.clock.now });
      // Its results and status then say SANDBOX, like any sandbox home's.
      await journal.bindGateway('sandbox');
      out.warn(
        `SANDBOX: no real money moves (embedded sandbox at ${sandbox.url}, with some answers dropped and a 429 burst switched on)`,
      );
      out.note(`Demo home: ${home}; ${files.length} sample files dropped in its inbox.`);
      const progress = await startProgress(
        journal,
        out.json || out.quiet || context.config.logLevel === 'silent'
          ? 'off'
          : io.stderr.isTTY
            ? 'bar'
            : 'lines',
        io.stderr,
        out.note,
        CATALOGS[context.config.language ?? 'en'],
      );
      let filesDone: FileSummary[];
      try {
        const pass = await runPass(journal, gateway, folders, config, {
          followMs: FOLLOW_MS,
          signal: new AbortController().signal,
          pollPolicy: POLLING,
          clock: io.clock,
          note: () => undefined,
        });
        if (pass.failed) throw new ExitError(1, `payouts demo: stopped: ${pass.stopped}`);
        filesDone = pass.files;
      } finally {
        await progress.stop();
        await gateway.close();
        await sandbox.close();
      }
      try {
        const seconds = ((io.clock.now() - started) / 1000).toFixed(1);
        const ledger = sandbox.ledger().filter((entry) => entry.object === 'cashout');
        const invalid = new Map<FileSummary, string[]>();
        for (const file of filesDone) invalid.set(file, await invalidReasons(journal, file));
        const orderIds = new Set(ledger.map((entry) => entry.orderId));
        out.data({
          home,
          seconds: Number(seconds),
          gatewayTransactions: ledger.length,
          duplicates: ledger.length - orderIds.size,
          files: filesDone.map((file) => ({
            ...file,
            problems: file.problems.map(sayInEnglish),
            invalid: invalid.get(file) ?? [],
          })),
        });
        out.line(table(filesDone));
        for (const file of filesDone) {
          const reasons = invalid.get(file) ?? [];
          if (reasons.length === 0) continue;
          out.line(`\n${file.file}, invalid rows (never sent; fix and drop the file again):`);
          for (const reason of reasons.slice(0, INVALID_SHOWN)) out.line(`  ${reason}`);
          if (reasons.length > INVALID_SHOWN) {
            out.line(`  … and ${reasons.length - INVALID_SHOWN} more, in its result file`);
          }
        }
        out.line('\nResult files:');
        for (const file of filesDone) if (file.result) out.line(`  ${file.result}`);
        out.line(
          `\n${ledger.length} payouts reached the gateway, ${ledger.length - orderIds.size} of them twice, in ${seconds}s, through ${faults.get('drop-after-commit') ?? 0} dropped answers and ${faults.get('rate-limit') ?? 0} answers 429. Nothing is left running.`,
        );
      } finally {
        await journal.close();
      }
    });
}

async function invalidReasons(journal: JournalBatches, file: FileSummary): Promise<string[]> {
  if (file.batchId === null) return [];
  // Every one: the demo's own sample files have a few lines.
  const lines = await journal.linesOfBatch(file.batchId, ['invalid'], Number.MAX_SAFE_INTEGER);
  return lines.first.map(
    (line) => `line ${line.line}${line.column ? `, ${line.column}` : ''}: ${line.message}`,
  );
}

/** One row per file: paid, failed and invalid rows with their amounts. */
function table(files: readonly FileSummary[]): string {
  const cell = (file: FileSummary, state: 'paid' | 'failed' | 'invalid') => {
    const count = file.rows[state] ?? 0;
    const cents = file.cents[state] ?? 0;
    return cents > 0 ? `${count} (${formatCents(cents)})` : String(count);
  };
  const rows = [
    ['file', 'paid', 'failed', 'invalid', 'other'],
    ...files.map((file) => {
      const other = Object.entries(file.rows)
        .filter(([state]) => !['paid', 'failed', 'invalid'].includes(state))
        .map(([state, count]) => `${count} ${state}`)
        .join(', ');
      return [file.file, cell(file, 'paid'), cell(file, 'failed'), cell(file, 'invalid'), other];
    }),
  ];
  const widths = rows[0]!.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      row
        .map((text, column) => text.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
