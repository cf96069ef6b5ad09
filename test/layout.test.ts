/**
 * The floors of CONTRIBUTING.md ("Layout"), held against the imports of src/: a folder may
 * import only folders on floors below its own, so no import runs back up and no two
 * folders import each other. A new floor or a folder moved is a change of both.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** The folders of src/, lowest floor first. */
const FLOORS: readonly (readonly string[])[] = [
  // Logger, clock, signals, a command's io, SQLite's handle, crash points.
  ['runtime'],
  // The gateway's contract and client; the postback receiver.
  ['gateway', 'postback'],
  // What people read: a Said and the catalogs that say it.
  ['messages'],
  // Reading a file: amounts, documents, Pix keys, rows.
  ['csv'],
  ['journal'],
  ['engine', 'results'],
  // The config's schema names the closed lists of the floors below.
  ['config'],
  ['inbox'],
  // The wiring, and the sandbox only the commands start.
  ['app', 'sandbox'],
  ['cli'],
];

/** Imports that run up a floor, each with its reason: being taken down, not to grow. */
const UPWARD: readonly { from: string; to: string; reason: string }[] = [
  {
    from: 'messages',
    to: 'journal',
    reason: 'a Said and the catalogs name the row states, listed with their moves in journal/',
  },
  {
    from: 'runtime',
    to: 'csv',
    reason: "the logger's mask tells a CNPJ by its check digits, which csv/documents.ts computes",
  },
];

const floorOf = (folder: string): number => FLOORS.findIndex((floor) => floor.includes(folder));

/** Files at the root of src/ that every folder may import: the one error family. */
const EVERYONE_MAY_IMPORT = ['errors.js'];

/** Every relative import and re-export of every file under src/, by folder. */
function importsBetweenFolders(): { from: string; to: string; file: string }[] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  return files.flatMap((file) => {
    const text = readFileSync(join(SRC, file), 'utf8');
    const from = file.split('/')[0] ?? '';
    return [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms)].flatMap(
      ([, specifier = '']) => {
        const to = relative(SRC, resolve(dirname(join(SRC, file)), specifier)).split('/')[0] ?? '';
        return to === from || EVERYONE_MAY_IMPORT.includes(to) ? [] : [{ from, to, file }];
      },
    );
  });
}

describe('which folder of src/ may import which', () => {
  const imports = importsBetweenFolders();

  it('finds the imports it checks', () => {
    expect(imports.some(({ from, to }) => from === 'cli' && to === 'app')).toBe(true);
  });

  it('every folder is on a floor, and on one only', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(FLOORS.flat().sort()).toEqual(folders);
  });

  it('every import between folders goes down a floor', () => {
    const upward = imports
      .filter(({ from, to }) => floorOf(to) >= floorOf(from))
      .filter(
        ({ from, to }) => !UPWARD.some((allowed) => allowed.from === from && allowed.to === to),
      )
      .map(({ from, to, file }) => `${file} imports ${to}/, not on a floor below ${from}/`);
    expect(upward).toEqual([]);
  });

  it('every exception is still an import', () => {
    const unused = UPWARD.filter(
      (allowed) => !imports.some(({ from, to }) => allowed.from === from && to === allowed.to),
    );
    expect(unused).toEqual([]);
  });

  it('only the commands import the app and the sandbox, and nothing imports the commands', () => {
    const users = (folder: string) => [
      ...new Set(imports.filter(({ to }) => to === folder).map(({ from }) => from)),
    ];
    expect(users('app')).toEqual(['cli']);
    expect(users('sandbox')).toEqual(['cli']);
    expect(users('cli')).toEqual([]);
  });
});
