/**
 * Module hooks that run our TypeScript source as it is, for what Node loads itself under
 * the tests: the journal's sending thread (a worker thread inherits its process's
 * `--import` of run-source.mjs). Each file of src/ is transpiled as it loads, with no type
 * check (`npm run lint` does that), and kept by the hash of its text and of these hooks:
 * a thread starts many times a run, and loading the compiler would cost each a second.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

const SRC = new URL('../../src/', import.meta.url).href;
const KEPT = join(tmpdir(), `payouts-source-${process.getuid?.() ?? 0}`);
const HOOKS = readFileSync(new URL(import.meta.url), 'utf8');
// What is kept there is run: only from a folder no one else may write to.
mkdirSync(KEPT, { recursive: true, mode: 0o700 });
const { uid, mode } = statSync(KEPT);
const KEEPING = uid === process.getuid?.() && (mode & 0o022) === 0;

/** src/ imports its siblings by their built names (`./x.js`): beside it is `./x.ts`. */
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const source = sourceOf(specifier, context.parentURL);
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || source === undefined) throw error;
    return nextResolve(source, context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith(SRC) || !url.endsWith('.ts')) return nextLoad(url, context);
  const text = readFileSync(new URL(url), 'utf8');
  const kept = join(KEPT, `${createHash('sha256').update(HOOKS).update(text).digest('hex')}.js`);
  let source;
  try {
    if (!KEEPING) throw new Error(`${KEPT} is not ours alone`);
    source = readFileSync(kept, 'utf8');
  } catch {
    source = await transpiled(text, url);
    if (KEEPING) {
      // Whole or not at all, for another thread reading it meanwhile.
      const partial = `${kept}.${process.pid}.${threadId}`;
      writeFileSync(partial, source);
      renameSync(partial, kept);
    }
  }
  return { format: 'module', source, shortCircuit: true };
}

async function transpiled(text, url) {
  const { default: ts } = await import('typescript');
  return ts.transpileModule(text, {
    fileName: url,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
}

/** The `.ts` of a `.js` of src/ asked for, or undefined for anything else. */
function sourceOf(specifier, parentURL) {
  if (!URL.canParse(specifier, parentURL)) return undefined;
  const url = new URL(specifier, parentURL).href;
  return url.startsWith(SRC) && url.endsWith('.js') ? url.replace(/\.js$/, '.ts') : undefined;
}
