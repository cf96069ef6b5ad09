// Runs every benchmark under test/bench/ in its own process, one after another,
// so one's memory never counts against another's. Each prints JSON lines.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv[2];
// Minutes long at the default timers: `npm run bench:takeover` runs it alone.
const APART = ['run.mjs', 'takeover.mjs'];
const benches = readdirSync(folder)
  .filter((name) => name.endsWith('.mjs') && !APART.includes(name))
  .filter((name) => only === undefined || name.includes(only))
  .sort();
let failed = 0;
for (const name of benches) {
  const result = spawnSync(process.execPath, [fileURLToPath(new URL(name, import.meta.url))], {
    stdio: 'inherit',
    timeout: 30 * 60_000,
  });
  if (result.status !== 0) {
    failed++;
    console.error(`${name}: failed (${result.status ?? result.signal})`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
