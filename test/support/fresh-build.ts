/**
 * Before any test, dist/ is the build of src/ as it is now: the children of bin/ run the
 * build. `npm test` builds first; a quicker loop (`npx vitest run --project unit`) gets a
 * build here when a source is newer than its own, so no child runs yesterday's code.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function stale(): boolean {
  const src = join(ROOT, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .some((file) => {
      const built = statSync(join(ROOT, 'dist', file.replace(/\.ts$/, '.js')), {
        throwIfNoEntry: false,
      });
      return !built || built.mtimeMs < statSync(join(src, file)).mtimeMs;
    });
}

export default function setup(): void {
  if (!stale()) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
