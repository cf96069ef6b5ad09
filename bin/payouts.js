#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { processIo } from '../dist/runtime/io.js';
import { main } from '../dist/cli/main.js';

// A reader that stops early (`payouts status | head`) closes the pipe. The rest of the
// output then has no reader: it is dropped, and the command still finishes its work (a
// run, its payouts) and exits with its own code, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

const code = await main(process.argv.slice(2), processIo());
// Everything written reaches its reader first (pipes are asynchronous on some systems).
for (const stream of [process.stdout, process.stderr]) {
  await new Promise((resolve) => stream.write('', resolve));
}
// Then exit at once with the run's code: nothing a dependency leaves behind (an idle
// socket, a native destructor at the runtime's teardown) may delay or change it. The
// journal is closed before main resolves.
process.exit(code);
