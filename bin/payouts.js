#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { main } from '../dist/cli/main.js';

const code = await main(process.argv.slice(2));
// Everything written reaches its reader first (pipes are asynchronous on some systems).
for (const stream of [process.stdout, process.stderr]) {
  await new Promise((resolve) => stream.write('', resolve));
}
// Then exit at once, not through the runtime's teardown: on Node 24, better-sqlite3 12
// can abort there (its objects' destructors run after the environment is gone), which
// would turn a run's exit code into 134. The journal is closed before main resolves.
process.exit(code);
