// Identical rows (issue 34): `payouts run` (requireApproval on, so nothing is sent) as a
// child under GNU time on a file of one payee's identical rows (same name, document, Pix
// key and amount) and on one of a payee a row, at BENCH_IDENTICAL_ROWS rows and four times
// as many (10,000 and 40,000 by default), in turn. Prints one JSON line: µs a row and peak
// RSS of each, and each kind's growth, µs a row at the large size over the small: about 1
// when intake is linear, about 4 when each row reads the rows before it (200,000
// identical rows once took 2,159 s against 46 s with a payee each).
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withCheckDigits } from '../../dist/domain/check-digits.js';

const SMALL = Number(process.env.BENCH_IDENTICAL_ROWS ?? 10_000);
const SIZES = [SMALL, SMALL * 4];
const TIME = '/usr/bin/time';
const BIN = fileURLToPath(new URL('../../bin/payouts.js', import.meta.url));

/** `rows` rows of one payee and amount (`identical`), or of a payee and amount each. */
async function writeFile(path, rows, identical) {
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('Favorecido;CPF/CNPJ;E-mail;Celular;Tipo de Chave;Chave PIX;Valor (R$)\r\n');
  for (let i = 0; i < rows; i++) {
    const k = identical ? 0 : i;
    const cpf = withCheckDigits(String(100_000_000 + k * 7).slice(0, 9));
    const cents = 10_000 + ((k * 7919) % 900_000);
    const reais = `${Math.trunc(cents / 100)},${String(cents % 100).padStart(2, '0')}`;
    await write(
      `Ana Souza ${k};${cpf};pessoa${k}@example.com;(11) 98000-${String(k % 10_000).padStart(4, '0')};CPF;${cpf};R$ ${reais}\r\n`,
    );
  }
  out.end();
  await once(out, 'finish');
}

/** `payouts run --json` on a fresh home whose inbox holds the file: seconds and peak MB. */
async function run(folder, rows, identical) {
  const home = join(folder, 'home');
  mkdirSync(join(home, 'inbox'), { recursive: true });
  await writeFile(join(home, 'inbox', 'folha.csv'), rows, identical);
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUTS_'))),
    PAYOUTS_HOME: home,
    // Never called: approval on and the balance not checked, nothing goes to the gateway.
    PAYOUTS_BASE_URL: 'http://127.0.0.1:9',
    PAYOUTS_TOKEN: 'bench-token',
    PAYOUTS_LOG_LEVEL: 'silent',
    PAYOUTS_INBOX_SETTLE: '1ms',
    PAYOUTS_FOLLOW_TIMEOUT: '0',
    PAYOUTS_REQUIRE_APPROVAL: 'true',
    PAYOUTS_BALANCE_CHECK: 'off',
    PAYOUTS_MAX_PAYOUT_CENTS: String(1e12),
    PAYOUTS_MAX_FILE_CENTS: String(Number.MAX_SAFE_INTEGER),
  };
  const child = spawnSync(TIME, ['-f', 'TIMED %e %M', process.execPath, BIN, 'run', '--json'], {
    encoding: 'utf8',
    env,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60 * 60_000,
  });
  rmSync(home, { recursive: true, force: true });
  const found = /TIMED ([\d.]+) (\d+)/.exec(child.stderr ?? '');
  const rowsOf = found && JSON.parse(child.stdout).files[0]?.rows;
  // Exit 2: the file waits for a person; of identical rows, the first queued, the rest held.
  const held = identical ? rows - 1 : undefined;
  if (child.status !== 2 || rowsOf?.queued !== rows - (held ?? 0) || rowsOf?.held !== held)
    throw new Error(`run of ${rows} rows: ${child.status ?? child.signal} ${child.stdout}`);
  return { seconds: Number(found[1]), peakRssMb: Math.round(Number(found[2]) / 1024) };
}

if (!existsSync(TIME)) {
  console.log(JSON.stringify({ bench: 'identical', skipped: `${TIME} is not installed` }));
} else {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-identical-'));
  try {
    const result = { identical: {}, distinct: {} };
    for (const rows of SIZES) {
      for (const kind of ['identical', 'distinct']) {
        const { seconds, peakRssMb } = await run(folder, rows, kind === 'identical');
        result[kind][rows] = { usPerRow: Math.round((seconds * 1e6) / rows), peakRssMb };
      }
    }
    const growth = (kind) =>
      Number((result[kind][SIZES[1]].usPerRow / result[kind][SIZES[0]].usPerRow).toFixed(2));
    console.log(
      JSON.stringify({
        bench: 'identical',
        rows: SIZES,
        ...result,
        growth: { identical: growth('identical'), distinct: growth('distinct') },
      }),
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
