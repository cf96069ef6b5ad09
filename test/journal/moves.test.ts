import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SQLITE = join(import.meta.dirname, '../../src/journal/sqlite');

/** The helpers that check a move against the transition table before they write it (rows.ts). */
const MOVES = /\b(?:guardedMove|mustMove|movedTogether)\(/g;

/** An UPDATE of payouts whose SET (before its WHERE) writes the state. */
const SETS_STATE = /UPDATE\s+payouts\s+SET\s(?:(?!\bWHERE\b)[^`])*?\bstate\s*=/g;

/** Statements (`name: db.prepare...(\`SQL\`)`) whose SQL changes a payout's state. */
function stateWritersOf(source: string): string[] {
  // Type arguments hold no call: a statement made from a constant is not given the next's SQL.
  const prepared = /(\w+): db\.prepare(?:<[^`()]*?>)?\(\s*`([^`]*)`/g;
  return [...source.matchAll(prepared)]
    .filter(([, , sql]) => new RegExp(SETS_STATE.source).test(sql ?? ''))
    .map(([, name]) => name ?? '');
}

/** Whether `at` lies inside the arguments of a call of a move helper. */
function insideAMove(source: string, at: number): boolean {
  const calls = [...source.slice(0, at).matchAll(MOVES)];
  const last = calls.at(-1);
  if (last?.index === undefined) return false;
  const between = source.slice(last.index + last[0].length, at);
  const depth = [...between].reduce((open, c) => open + (c === '(' ? 1 : c === ')' ? -1 : 0), 1);
  return depth > 0;
}

describe('every change of a payout state in the SQLite journal', () => {
  const files = readdirSync(SQLITE).filter((name) => name.endsWith('.ts'));
  const writers = files.flatMap((file) => {
    const source = readFileSync(join(SQLITE, file), 'utf8');
    const updates = source.match(SETS_STATE) ?? [];
    // Every such UPDATE is a named statement, so that its uses can be found.
    expect(stateWritersOf(source), file).toHaveLength(updates.length);
    return stateWritersOf(source).map((name) => ({ file, name, source }));
  });

  it('finds the statements that write a state', () => {
    expect(writers.map(({ name }) => name)).toEqual(
      expect.arrayContaining(['replacePayout', 'claimQueued', 'move', 'setRow']),
    );
  });

  it.each(writers.map((writer) => [`${writer.file}: ${writer.name}`, writer] as const))(
    '%s runs only inside a move checked against the transition table',
    (_, { name, source }) => {
      const uses = [...source.matchAll(new RegExp(`statements\\.${name}\\.`, 'g'))];
      expect(uses.length).toBeGreaterThan(0);
      for (const use of uses) {
        const line = source.slice(0, use.index).split('\n').length;
        expect(insideAMove(source, use.index ?? 0), `line ${line}`).toBe(true);
      }
    },
  );
});
