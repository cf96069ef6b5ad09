/**
 * The journal's aggregates (src/journal/journal.ts) and which of them each folder of src/
 * takes, read from the source: a folder that takes a wider part of the journal shows here
 * in review. The compiler holds each function to the aggregates it is typed with.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { EngineDeps } from '../../src/engine/engine.js';
import type { Journal } from '../../src/journal/journal.js';

const SRC = resolve(import.meta.dirname, '../../src');

/**
 * What each folder outside journal/ names of the journal. Only cli/ opens a journal, so
 * only it holds the whole; the others take the aggregates they use.
 */
const TAKES: Record<string, readonly string[]> = {
  app: [
    'JournalAdmission',
    'JournalAnswers',
    'JournalApproval',
    'JournalBatches',
    'JournalFollowing',
    'JournalGateway',
    'JournalIntake',
    'JournalLimits',
    'JournalReports',
    'JournalRetries',
    'JournalStore',
  ],
  cli: ['Journal', 'JournalApproval', 'JournalBatches', 'JournalGateway', 'JournalReports'],
  engine: [
    'JournalAdmission',
    'JournalAnswers',
    'JournalBatches',
    'JournalFollowing',
    'JournalIntake',
    'JournalLimits',
    'JournalRecovery',
    'JournalReports',
    'JournalSending',
    'JournalStore',
  ],
  inbox: [
    'JournalApproval',
    'JournalBatches',
    'JournalCorrections',
    'JournalGateway',
    'JournalLocks',
    'JournalReports',
    'JournalRetries',
  ],
  results: ['JournalBatches', 'JournalGateway', 'JournalReports'],
};

const journalSource = readFileSync(join(SRC, 'journal/journal.ts'), 'utf8');

/** The aggregates `Journal` extends, as declared. */
function aggregates(): string[] {
  const [, list = ''] = /export interface Journal\s+extends([^{]*)\{/.exec(journalSource) ?? [];
  return list.split(',').map((name) => name.trim());
}

/** The members each aggregate declares. */
function membersOf(aggregate: string): string[] {
  const [, body = ''] =
    new RegExp(`export interface ${aggregate} \\{\\n(.*?)\\n\\}`, 's').exec(journalSource) ?? [];
  return [...body.matchAll(/^ {2}(\w+)[(:<]/gm)].map(([, member = '']) => member);
}

/** The journal's names (the whole, or an aggregate) each folder imports, by folder. */
function takenByFolder(names: readonly string[]): Record<string, string[]> {
  const taken: Record<string, Set<string>> = {};
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  for (const file of files) {
    const folder = file.split('/')[0] ?? '';
    if (folder === 'journal' || !file.includes('/')) continue;
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const [, list = ''] of text.matchAll(
      /^import\s[^;]*?\{([^}]*)\}\s*from\s+'(?:\.\.\/)+journal\/journal\.js'/gm,
    )) {
      for (const name of list.split(',').map((item) => item.replace(/^\s*type\s+/, '').trim()))
        if (names.includes(name)) (taken[folder] ??= new Set()).add(name);
    }
  }
  return Object.fromEntries(
    Object.entries(taken)
      .map(([folder, found]) => [folder, [...found].sort()] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

describe("the journal's aggregates", () => {
  it('make up Journal, each member in one of them', () => {
    const members = aggregates().flatMap(membersOf);
    expect(aggregates().length).toBeGreaterThan(1);
    for (const aggregate of aggregates()) expect(membersOf(aggregate)).not.toEqual([]);
    expect(members.filter((member, i) => members.indexOf(member) !== i)).toEqual([]);
    expect(members.length).toBeGreaterThan(60);
  });

  it('each folder outside journal/ takes the aggregates its table names', () => {
    expect(takenByFolder(['Journal', ...aggregates()])).toEqual(TAKES);
  });

  it("the engine's loops cannot open, close or read batches of the journal", () => {
    expectTypeOf<EngineDeps['journal']>().not.toHaveProperty('close');
    expectTypeOf<EngineDeps['journal']>().not.toHaveProperty('batches');
    expectTypeOf<EngineDeps['journal']>().toHaveProperty('claimToSend');
    expectTypeOf<Journal>().toMatchTypeOf<EngineDeps['journal']>();
  });
});
