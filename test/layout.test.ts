/**
 * The floors of CONTRIBUTING.md ("Layout"), held against the imports of src/: a folder may
 * import only folders on floors below its own, so no import runs back up and no files of
 * two folders import each other. A new floor or a folder moved is a change of both.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** The folders of src/, lowest floor first. */
const FLOORS: readonly (readonly string[])[] = [
  // The closed facts every floor may name: a payout row's states, a document's check digits.
  ['domain'],
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

const floorOf = (folder: string): number => FLOORS.findIndex((floor) => floor.includes(folder));

/** Files at the root of src/ that every folder may import: the one error family. */
const EVERYONE_MAY_IMPORT = ['errors.ts'];

/** A relative import, re-export or dynamic import: the specifier is the first group or the second. */
const IMPORT = /^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/gms;

/** Every import of every file under src/, from a file to a file, both named from src/. */
function importsBetweenFiles(): { file: string; imported: string }[] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  );
  return files.flatMap((file) =>
    [...readFileSync(join(SRC, file), 'utf8').matchAll(IMPORT)].map(([, from, dynamic]) => ({
      file,
      imported: relative(SRC, resolve(dirname(join(SRC, file)), from ?? dynamic ?? '')).replace(
        /\.js$/,
        '.ts',
      ),
    })),
  );
}

/** The folder of src/ a file is in; a file at the root of src/ stands for itself. */
const folderOf = (file: string): string => file.split('/')[0] ?? '';

/** Every import between folders, but of the files every folder may import. */
function importsBetweenFolders(
  imports: readonly { file: string; imported: string }[],
): { from: string; to: string; file: string }[] {
  return imports.flatMap(({ file, imported }) => {
    const [from, to] = [folderOf(file), folderOf(imported)];
    return to === from || EVERYONE_MAY_IMPORT.includes(to) ? [] : [{ from, to, file }];
  });
}

/**
 * The files that import one another through some path (Tarjan's strongly connected
 * components), each group of two or more files.
 */
function circlesOfFiles(imports: readonly { file: string; imported: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { file, imported } of imports) next.set(file, [...(next.get(file) ?? []), imported]);
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    lowest.set(file, index.size - 1);
    stack.push(file);
    for (const imported of next.get(file) ?? []) {
      if (!index.has(imported)) {
        visit(imported);
        lowest.set(file, Math.min(lowest.get(file) ?? 0, lowest.get(imported) ?? 0));
      } else if (stack.includes(imported)) {
        lowest.set(file, Math.min(lowest.get(file) ?? 0, index.get(imported) ?? 0));
      }
    }
    if (lowest.get(file) !== index.get(file)) return;
    const circle = stack.splice(stack.indexOf(file));
    if (circle.length > 1) circles.push(circle.sort());
  };
  for (const file of next.keys()) if (!index.has(file)) visit(file);
  return circles;
}

describe('which folder of src/ may import which', () => {
  const files = importsBetweenFiles();
  const imports = importsBetweenFolders(files);

  it('finds the imports it checks, each of a file that is there', () => {
    expect(imports.some(({ from, to }) => from === 'cli' && to === 'app')).toBe(true);
    expect(files.filter(({ imported }) => !existsSync(join(SRC, imported)))).toEqual([]);
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
      .map(({ from, to, file }) => `${file} imports ${to}/, not on a floor below ${from}/`);
    expect(upward).toEqual([]);
  });

  it('no files of two folders import each other, through any path', () => {
    const crossing = circlesOfFiles(files).filter(
      (circle) => new Set(circle.map(folderOf)).size > 1,
    );
    expect(crossing).toEqual([]);
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
