// Peak RSS of `payouts validate` on files of one size class but different content: memory
// must follow neither the row count nor what the lines hold (issue 15: a million blank
// lines peaked at 324 MB). Each file is validated in a child process of its own, which
// reports its own maximum RSS. Prints one JSON line per file.
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));
const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount\n';
const TIME = '/usr/bin/time';
const LINES = Number(process.env.BENCH_MEMORY_LINES ?? 1_000_000);

async function generate(path, lineAt) {
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(HEADER);
  for (let i = 0; i < LINES; i++) await write(lineAt(i));
  out.end();
  await once(out, 'finish');
}

const FILES = {
  'blank lines': () => '\n',
  'delimiters only': () => ',,,,,,,\n',
  'payout rows': (i) =>
    `o-${i},Pessoa ${i},p${i}@example.com,11987654321,52998224725,EMAIL,p${i}@example.com,"1,00"\n`,
  'short rows': (i) => `o-${i}\n`,
};

/**
 * `payouts validate FILE` in a child of its own, its peak RSS read by /usr/bin/time (GNU
 * time's %M, in KiB): process.resourceUsage() gave nonsense on this machine.
 */
function validate(file) {
  const started = Date.now();
  const child = spawnSync(TIME, ['-f', 'MAXRSS %M', process.execPath, BIN, 'validate', file], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const maxRss = Number(/MAXRSS (\d+)/.exec(child.stderr)?.[1] ?? Number.NaN);
  return {
    exit: child.status,
    seconds: (Date.now() - started) / 1000,
    peakRssMb: Math.round(maxRss / 1024),
  };
}

if (!existsSync(TIME)) {
  console.log(JSON.stringify({ bench: 'validate-memory', skipped: `${TIME} is not installed` }));
  process.exit(0);
}
const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-memory-'));
try {
  const tiny = join(folder, 'tiny.csv');
  await generate(tiny, () => '');
  console.log(
    JSON.stringify({ bench: 'validate-memory', file: 'header only (baseline)', ...validate(tiny) }),
  );
  for (const [name, lineAt] of Object.entries(FILES)) {
    const path = join(folder, `${name.replace(/ /g, '-')}.csv`);
    await generate(path, lineAt);
    const bytes = statSync(path).size;
    console.log(
      JSON.stringify({
        bench: 'validate-memory',
        file: name,
        lines: LINES,
        bytes,
        ...validate(path),
      }),
    );
    rmSync(path);
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
