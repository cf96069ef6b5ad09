import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Two projects, both run by `npm test`: `unit` (everything but test/e2e, commands run in
// the test's process) and `e2e` (whole journeys, daemons and crashes as child processes):
// `npx vitest run --project unit` for a quick loop.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ['test/support/leaks.ts'],
    // dist/ as src/ is now, for what runs the build (the children of bin/).
    globalSetup: ['test/support/fresh-build.ts'],
    // What Node loads itself in a test's process (the journal's sending thread, which
    // inherits this) runs the TypeScript source under test, not a build of it.
    execArgv: ['--import', fileURLToPath(new URL('test/support/run-source.mjs', import.meta.url))],
    // Most of a test's time is spent waiting (a sandbox settling, a child starting, a
    // lease running out), not computing: four files at once on two cores, where the
    // default (one fewer than the cores) ran them one at a time.
    maxWorkers: 4,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**'] },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
