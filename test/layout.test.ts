/**
 * The map of CONTRIBUTING.md ("Layout"), held against the imports of src/: which folder
 * may import which. A new edge is a change of the map: write it there and here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** The folders each folder of src/ may import, besides its own. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  // The entry: parses arguments, opens what the app is given, prints.
  cli: [
    'app',
    'config',
    'csv',
    'engine',
    'gateway',
    'inbox',
    'journal',
    'messages',
    'results',
    'runtime',
    'sandbox',
  ],
  // The one place the parts are wired together: a pass, the daemon, the engine's wiring.
  app: [
    'config',
    'csv',
    'engine',
    'gateway',
    'inbox',
    'journal',
    'messages',
    'postback',
    'results',
    'runtime',
  ],
  engine: ['csv', 'gateway', 'journal', 'messages', 'runtime'],
  inbox: ['config', 'csv', 'journal', 'messages', 'runtime'],
  results: ['csv', 'gateway', 'journal', 'messages'],
  journal: ['csv', 'gateway', 'messages', 'runtime'],
  config: ['csv', 'engine', 'messages', 'results', 'runtime'],
  csv: ['config', 'gateway', 'messages', 'results', 'runtime'],
  messages: ['csv', 'inbox', 'journal'],
  runtime: ['csv'],
  // The contract the sandbox answers by, and nothing of the money path.
  sandbox: ['gateway'],
  // The client reads the clock it is given (runtime/clock.ts).
  gateway: ['runtime'],
  postback: [],
};

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

  it('every folder is on the map', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('every import between folders is one the map allows', () => {
    const refused = imports
      .filter(({ from, to }) => !MAY_IMPORT[from]?.includes(to))
      .map(({ from, to, file }) => `${file} imports ${to}/ (${from}/ may not)`);
    expect(refused).toEqual([]);
  });

  it('only the commands wire the app, and nothing imports the commands', () => {
    const users = (folder: string) =>
      Object.entries(MAY_IMPORT)
        .filter(([, may]) => may.includes(folder))
        .map(([from]) => from);
    expect(users('app')).toEqual(['cli']);
    expect(users('cli')).toEqual([]);
    expect(users('sandbox')).toEqual(['cli']);
  });
});
