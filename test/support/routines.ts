/**
 * The world of the model of the finance team's routines (test/e2e/routines.model.test.ts):
 * one sandbox gateway that keeps its ledger and never deduplicates orderIds, two homes
 * paying through it (two companies, one account), one host clock the model moves, and
 * the real CLI run in this process. What the tool said is read back from `status --json`;
 * the ledger is the judge of who was paid.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../src/runtime/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { LedgerEntry } from '../../src/sandbox/ledger.js';
import { runCli, type CliResult } from './cli.js';
import { TOKEN, clientFor, topUp } from './gateway.js';

export const MINUTE = 60 * 1000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** The homes' duplicateWindow (the default). */
export const WINDOW = 20 * DAY;
/** Pairs this near a border of a window are not judged: the model's times are a step's. */
const MARGIN = HOUR;

export const PEOPLE = [
  { name: 'Ana Souza', cpf: '52998224725', shown: '529.982.247-25', phone: '(11) 98765-4321' },
  { name: 'Bruno Lima', cpf: '11144477735', shown: '111.444.777-35', phone: '(21) 99876-5432' },
  { name: 'Carla Dias', cpf: '39053344705', shown: '390.533.447-05', phone: '(31) 99123-4567' },
  { name: 'Diego Reis', cpf: '12345678909', shown: '123.456.789-09', phone: '(41) 99345-6789' },
  { name: 'Eva Castro', cpf: '98765432100', shown: '987.654.321-00', phone: '(51) 99456-7890' },
] as const;

/**
 * A file's reference column, by the heading accounts export: none, a supplier's invoice,
 * a refund's order, a payroll's competência.
 */
export type ReferenceColumn = 'none' | 'NF' | 'Pedido' | 'Competência';

/**
 * A row's reference as a tag of lower-case letters and digits (`nf1001`, `ped501`,
 * `c202611` for the competência 11/2026). The ledger keeps no reference, so the tag
 * rides in the row's Pix key (`ana+nf1001@example.com`): the model reads it back from
 * every payout and every row `status` lists.
 */
export interface Row {
  person: number;
  cents: number;
  ref?: string;
  /** The person's other Pix key (`@example.net`): a corrected key. */
  otherKey?: boolean;
}

export function header(column: ReferenceColumn): string {
  return column === 'none'
    ? 'Nome,CPF,E-mail,Celular,Chave Pix,Valor'
    : `Nome,CPF,E-mail,Celular,Chave Pix,${column},Valor`;
}

/** The cell a reference tag is exported as: `NF 01001`, `PED-501`, `11/2026`. */
function referenceCell(ref: string): string {
  const competence = /^c(\d{4})(\d{2})$/.exec(ref);
  if (competence) return `${competence[2]}/${competence[1]}`;
  if (ref.startsWith('nf')) return `NF 0${ref.slice(2)}`;
  return `PED-${ref.slice(3)}`;
}

export function csvLine(row: Row, column: ReferenceColumn): string {
  const person = PEOPLE[row.person];
  if (!person) throw new Error(`no person ${row.person}`);
  const tag = row.ref === undefined ? '' : `+${row.ref}`;
  const key = `${person.name.split(' ')[0]?.toLowerCase()}${tag}@example.${row.otherKey ? 'net' : 'com'}`;
  const reais = Math.floor(row.cents / 100).toLocaleString('pt-BR');
  const amount = `${reais},${String(row.cents % 100).padStart(2, '0')}`;
  const reference =
    column === 'none' ? '' : `${row.ref === undefined ? '' : referenceCell(row.ref)},`;
  return `${person.name},${person.shown},${key},${person.phone},${key},${reference}"${amount}"`;
}

/** One host's clock: moved by the model between steps, and by the tool's own waits. */
export interface ModelClock extends Clock {
  move(ms: number): void;
  /** The latest time any command was given. */
  highest(): number;
}

export function modelClock(start: number): ModelClock {
  let at = start;
  let highest = start;
  return {
    now: () => {
      highest = Math.max(highest, at);
      return at;
    },
    // A wait passes on this clock at once: following a payout costs a few real moments.
    async sleep(ms, signal) {
      const until = at + Math.max(0, ms);
      await delay(1, undefined, { signal }).catch(() => undefined);
      if (!signal.aborted) at = Math.max(at, until);
    },
    move: (ms) => (at += ms),
    highest: () => highest,
  };
}

/** What `status FILE --json` says of a row. */
export interface StatusRow {
  line: number;
  orderId: string;
  cpfCnpj: string;
  status: string;
  valueCents: number | null;
  transactionId: number | null;
  pixKey: string;
  message: string;
}

export interface StatusBatch {
  batchId: number;
  file: string;
  receivedAt: string;
  state: string;
  rows: StatusRow[];
}

export interface Home {
  name: 'A' | 'B';
  folder: string;
  env: Record<string, string>;
  cli(args: readonly string[]): Promise<CliResult>;
  drop(name: string, column: ReferenceColumn, rows: readonly Row[]): void;
  /** Every batch of the journal with its rows, as `status --json` gives them. */
  batches(): Promise<StatusBatch[]>;
  snapshot(): string;
  restore(copy: string): void;
}

export interface World {
  sandbox: Sandbox;
  clock: ModelClock;
  homes: readonly [Home, Home];
  cashOuts(): LedgerEntry[];
  topUp(cents: number): Promise<void>;
  /** Pays most of the balance to someone outside both homes. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

const DRAIN = 'drain-';

/** A fresh sandbox and two homes; home B asks for approval of every file. */
export async function openWorld(): Promise<World> {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-routines-'));
  const sandbox = await startSandbox({
    token: TOKEN,
    settleDelayMs: 1,
    initialBalanceCents: 1_500_000,
  });
  const clock = modelClock(Date.parse('2026-11-02T12:00:00.000Z'));
  let drains = 0;
  const home = (name: 'A' | 'B', settings: Record<string, string>): Home => {
    const root = join(folder, name);
    const path = join(root, 'home');
    const env = {
      PAYOUTS_HOME: path,
      PAYOUTS_BASE_URL: sandbox.url,
      PAYOUTS_TOKEN: TOKEN,
      PAYOUTS_LOG_LEVEL: 'silent',
      PAYOUTS_INBOX_SETTLE: '1ms',
      PAYOUTS_LANGUAGE: 'en',
      ...settings,
    };
    mkdirSync(join(path, 'inbox'), { recursive: true });
    const cli = (args: readonly string[]) => runCli(args, { env, clock });
    return {
      name,
      folder: path,
      env,
      cli,
      drop(file, column, rows) {
        const at = join(path, 'inbox', file);
        const lines = rows.map((row) => csvLine(row, column));
        writeFileSync(at, [header(column), ...lines].join('\r\n') + '\r\n');
        const changed = new Date(clock.now());
        utimesSync(at, changed, changed);
      },
      async batches() {
        const list = await cli(['status', '--json']);
        if (list.code !== 0) return [];
        const names = new Set(
          (JSON.parse(list.stdout) as { file: string }[]).map((batch) => batch.file),
        );
        const all: StatusBatch[] = [];
        for (const file of names) {
          const rows = await cli(['status', file, '--json']);
          if (rows.code !== 0) throw new Error(`status ${file}: ${rows.stderr}`);
          for (const batch of JSON.parse(rows.stdout) as StatusBatch[])
            if (!all.some((known) => known.batchId === batch.batchId)) all.push(batch);
        }
        return all.sort((a, b) => a.batchId - b.batchId);
      },
      snapshot() {
        const copy = mkdtempSync(join(root, 'copy-'));
        cpSync(path, copy, { recursive: true });
        return copy;
      },
      restore(copy) {
        rmSync(path, { recursive: true, force: true });
        cpSync(copy, path, { recursive: true });
      },
    };
  };
  const homes = [home('A', {}), home('B', { PAYOUTS_REQUIRE_APPROVAL: 'true' })] as const;
  return {
    sandbox,
    clock,
    homes,
    cashOuts: () =>
      sandbox
        .ledger()
        .filter((entry) => entry.object === 'cashout' && !entry.orderId?.startsWith(DRAIN)),
    topUp: (cents) => topUp(sandbox.url, cents),
    async drain() {
      const gateway = clientFor(sandbox.url);
      try {
        const cents = (await gateway.getBalance()).balance - 100_000;
        if (cents <= 0) return;
        await gateway.createCashOut({
          value: cents,
          pixKeyType: 0,
          pixKey: '11222333000181',
          cpfCnpj: '11222333000181',
          person: { name: 'Fornecedor', email: 'f@example.com', phone: '+5511987654321' },
          orderId: `${DRAIN}${++drains}`,
        });
      } finally {
        await gateway.close();
      }
    },
    async close() {
      await sandbox.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A payout of the ledger as the model saw it made: by which home, at what time. */
export interface Made {
  entry: LedgerEntry;
  home: 'A' | 'B';
  at: number;
}

/**
 * Nobody paid twice, in one home, among the payouts that paid or may still pay:
 * - by document and amount, more than one in any window, a pair of two payouts that both
 *   carry a reference apart (a reference tells them apart);
 * - by document and reference (a competência with the amount), more than one whatever
 *   the window;
 * beyond the repeats a person released by name for that document and amount. Returns
 * what breaks it, in words.
 */
export function paidTwice(
  made: readonly Made[],
  released: ReadonlyMap<string, number>,
  cpfOf: (entry: LedgerEntry) => string,
): string[] {
  const live = made.filter((payout) => ['paid', 'pending'].includes(payout.entry.status));
  const person = (payout: Made) => `${payout.home} ${cpfOf(payout.entry)}`;
  const allowedFor = (payouts: readonly Made[]) =>
    1 +
    [...new Set(payouts.map((p) => `${person(p)} ${p.entry.valueCents}`))].reduce(
      (sum, key) => sum + (released.get(key) ?? 0),
      0,
    );
  const shown = (payouts: readonly Made[]) =>
    payouts.map((p) => `${p.entry.orderId} at ${new Date(p.at).toISOString()}`).join(', ');
  const broken: string[] = [];
  for (const [key, payouts] of groupBy(live, (p) => `${person(p)} ${p.entry.valueCents}`)) {
    const allowed = allowedFor(payouts);
    payouts.sort((a, b) => a.at - b.at);
    for (const [index, first] of payouts.entries()) {
      const inWindow = payouts
        .slice(index)
        .filter(
          (later) =>
            later === first ||
            ((referenceOf(first.entry) === undefined || referenceOf(later.entry) === undefined) &&
              later.at - first.at < WINDOW - MARGIN),
        );
      if (inWindow.length > allowed)
        broken.push(
          `${key}: ${inWindow.length} payouts within duplicateWindow (${shown(inWindow)}), ${allowed} allowed`,
        );
    }
  }
  const referenced = live.filter((payout) => referenceOf(payout.entry) !== undefined);
  for (const [key, payouts] of groupBy(referenced, (p) => `${person(p)} ${paymentOf(p.entry)}`)) {
    const allowed = allowedFor(payouts);
    if (payouts.length > allowed)
      broken.push(
        `${key}: ${payouts.length} payouts of one reference (${shown(payouts)}), ${allowed} allowed`,
      );
  }
  return broken;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

/** The reference tag a Pix key carries (`ana+nf1001@example.com`), if any. */
export function referenceOf(row: { pixKey: string | null }): string | undefined {
  return /^[a-z]+\+([a-z0-9]+)@/.exec(row.pixKey ?? '')?.[1];
}

/**
 * What one payment is to the rule on references: its reference; a competência (a month)
 * tells payments apart only with the amount.
 */
export function paymentOf(row: { pixKey: string | null; valueCents: number | null }): string {
  const ref = referenceOf(row) ?? '';
  return ref.startsWith('c') ? `${ref} ${row.valueCents}` : ref;
}

/** The document of a ledger entry, by the Pix key the model gave each person. */
export function cpfByKey(entry: LedgerEntry): string {
  const first = /^[a-z]+/.exec(entry.pixKey ?? '')?.[0];
  const person = PEOPLE.find((p) => p.name.split(' ')[0]?.toLowerCase() === first);
  return person?.cpf ?? entry.pixKey ?? '';
}

/** A row's orderId as sent: its own, or a retry's (`-r2`, `-r3`). */
export function sentFor(orderId: string, entries: readonly LedgerEntry[]): LedgerEntry[] {
  return entries.filter(
    (entry) =>
      entry.orderId === orderId ||
      (entry.orderId?.startsWith(`${orderId}-r`) === true &&
        /^\d+$/.test(entry.orderId.slice(orderId.length + 2))),
  );
}
