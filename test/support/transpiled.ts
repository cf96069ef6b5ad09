/**
 * src/ as JavaScript, transpiled now, for a child `node` that must load our modules itself
 * (a heap measured with --expose-gc, a process left to end by itself): never dist/, which
 * may be an older build than the code under test. File by file, with no type check
 * (`npm run lint` does that), in a temp folder that sees our node_modules and config.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Registers hooks transpiling src/ once before the file's tests and removing it after;
 * returns the file URL of a module of it (`journal/sqlite.js`).
 */
export function useTranspiledSrc(): (module: string) => string {
  let folder: string | undefined;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'payouts-src-'));
    const src = join(ROOT, 'src');
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const { outputText } = ts.transpileModule(readFileSync(join(src, file), 'utf8'), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
        },
      });
      const out = join(folder, 'src', file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, outputText);
    }
    writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n');
    for (const shared of ['node_modules', 'config']) {
      symlinkSync(join(ROOT, shared), join(folder, shared));
    }
  });
  afterAll(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
    folder = undefined;
  });
  return (module) => {
    if (!folder) throw new Error('useTranspiledSrc: no transpiled src/ outside the tests');
    return pathToFileURL(join(folder, 'src', module)).href;
  };
}
