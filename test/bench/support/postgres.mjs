// The tests' throwaway PostgreSQL cluster (test/support/postgres.ts, transpiled here so the
// benchmarks start it exactly as the tests do: loopback only, as `postgres` when we are
// root), a fresh database on it by name, and the CPU time its server processes used.
import { spawnSync } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The module test/support/postgres.ts, loaded once. */
let support;

/**
 * test/support/postgres.ts's startCluster: `{ cluster }`, or `{ missing }` (why) without
 * PostgreSQL.
 */
export async function startCluster() {
  support ??= await loadSupport();
  const missing = support.postgresMissing();
  if (missing) return { missing };
  return { cluster: await support.startCluster() };
}

/** test/support/postgres.ts's freshDatabase: a new, empty database of `cluster`, its URL. */
export async function freshDatabase(cluster, name) {
  support ??= await loadSupport();
  return support.freshDatabase(cluster, name);
}

async function loadSupport() {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-pg-'));
  try {
    const source = readFileSync(join(ROOT, 'test/support/postgres.ts'), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    // Beside a link to our node_modules, so its imports (pg, vitest) resolve.
    symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
    writeFileSync(join(folder, 'postgres.mjs'), outputText);
    return await import(pathToFileURL(join(folder, 'postgres.mjs')).href);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** utime + stime of a process, in µs, and with `waited` those of its ended children too. */
export function cpuMicrosOf(pid, waited = false) {
  // After the command's name (which may hold spaces) come the fields from the third on.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const children = waited ? Number(fields[13]) + Number(fields[14]) : 0;
  return (ticks + children) * 10_000;
}

/**
 * CPU time the cluster's server has used, in µs: the postmaster, its live processes
 * (a backend per connection, the writers) and those that ended (counted in the postmaster's
 * waited-for children's times).
 */
export function serverCpuMicros(postmaster) {
  let total = cpuMicrosOf(postmaster, true);
  for (const pid of serverChildren(postmaster)) {
    try {
      total += cpuMicrosOf(pid);
    } catch {
      // The process ended while we looked: the postmaster's waited times count it.
    }
  }
  return total;
}

/** The live processes of the cluster's server other than its postmaster. */
export function serverChildren(postmaster) {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === postmaster) children.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return children;
}

/**
 * How long each of `pids` has been on a core and waited, runnable, for one (Linux:
 * /proc/PID/schedstat), in µs, by pid; a process that ended meanwhile is left out.
 */
export function schedMicrosOf(pids) {
  const times = new Map();
  for (const pid of pids) {
    try {
      const [onCpu, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ');
      times.set(pid, { onCpu: Number(onCpu) / 1000, waiting: Number(waiting) / 1000 });
    } catch {
      // Ended while we looked.
    }
  }
  return times;
}

/** The middle of a run's figures (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The machine's load average (1, 5 and 15 minutes), printed beside a run's ratios. */
export const loadAverage = () =>
  readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** One engine.mjs scenario in a child process of its own: its JSON line, also printed. */
export function measureEngine(scenario) {
  const engine = fileURLToPath(new URL('../engine.mjs', import.meta.url));
  const child = spawnSync(process.execPath, [engine, 'measure', JSON.stringify(scenario)], {
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(child.stderr);
  process.stdout.write(child.stdout);
  return JSON.parse(child.stdout);
}
