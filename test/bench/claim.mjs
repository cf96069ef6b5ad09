// The journal's CPU a row at claim time (claimToSend with the cover rule, as `payouts run`
// claims: 64 rows a claim, each committed with synchronous=FULL), without a gateway: for a
// file of a payee each (the baseline of the same run), and for files whose every row has
// one document and amount (one payee paid the same amount again and again), where the
// cover rule's work a row must not grow with the file; and for the payee-each file with each
// claim's commit also writing the answers to the claim before (pending, with a transaction),
// as the engine writes them: a payout's whole journal work when sending. Prints one JSON
// line per case.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJournalForWork } from '../../dist/journal/open-for-work.js';
import { sqliteJournalAt } from '../../dist/journal/open.js';

const CLAIM = 64;
const RULES = { duplicateWindowMs: 20 * 86_400_000, hintFlags: '' };

/** The moves the engine writes for creates answered `pending`, as decideSend makes them. */
function answersTo(claims) {
  return claims.map((claim, i) => ({
    orderId: claim.orderId,
    fence: claim.fence,
    to: 'pending',
    reason: `created as transaction ${i} (status PENDING)`,
    details: {
      transactionId: i,
      gatewayStatus: 'PENDING',
      fee: '0.00',
      net: '1.00',
      gatewayCreatedAt: '2026-11-25T10:00:00.000Z',
      message: null,
      nextPollAt: Date.now() + 2_000,
    },
  }));
}

async function claimCpu(rows, onePayee, withAnswers = false) {
  const folder = mkdtempSync(join(tmpdir(), 'payouts-bench-claim-'));
  const journal = await openJournalForWork(sqliteJournalAt(join(folder, 'journal.db')), {
    home: folder,
    historyFolders: [],
    now: Date.now,
  });
  try {
    const batchId = await journal.recordBatch(
      {
        fileName: 'bench.csv',
        sha256: 'x',
        state: 'open',
        rows,
        valid: rows,
        invalid: 0,
        totalCents: rows * 100,
        problems: [],
      },
      [],
    );
    const payouts = Array.from({ length: rows }, (_, i) => {
      const cpfCnpj = onePayee ? '52998224725' : String(10_000_000_000 + i);
      return {
        line: i + 2,
        request: {
          value: 100,
          pixKeyType: 2,
          pixKey: `p${i}@example.com`,
          cpfCnpj,
          person: { name: `Pessoa ${i}`, email: `p${i}@example.com`, phone: '+5511987654321' },
          orderId: `b-${i}`,
        },
      };
    });
    for (let at = 0; at < rows; at += 1000)
      await journal.admitPayouts(batchId, payouts.slice(at, at + 1000), {
        duplicateWindowMs: 0,
      });
    const before = process.cpuUsage();
    let claimed = 0;
    let answers = [];
    for (let claim = 0; claim <= rows / CLAIM + 1; claim++) {
      const claims = await journal.claimToSend('bench', CLAIM, 120_000, RULES, answers);
      answers = withAnswers ? answersTo(claims) : [];
      if (claims.length === 0) break;
      claimed += claims.length;
    }
    const cpu = process.cpuUsage(before);
    if (claimed !== rows) throw new Error(`claimed ${claimed} of ${rows}`);
    return (cpu.user + cpu.system) / rows;
  } finally {
    await journal.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

const baseline = await claimCpu(20_000, false);
console.log(
  JSON.stringify({
    bench: 'claim',
    file: 'a payee each',
    rows: 20_000,
    cpuUsPerRow: Number(baseline.toFixed(1)),
  }),
);
const answered = await claimCpu(20_000, false, true);
console.log(
  JSON.stringify({
    bench: 'claim',
    file: 'a payee each, each claim writing the answers to the one before',
    rows: 20_000,
    cpuUsPerRow: Number(answered.toFixed(1)),
    vsPayeeEach: Number((answered / baseline).toFixed(2)),
  }),
);
for (const rows of [2_000, 20_000]) {
  const perRow = await claimCpu(rows, true);
  console.log(
    JSON.stringify({
      bench: 'claim',
      file: 'one payee, one amount',
      rows,
      cpuUsPerRow: Number(perRow.toFixed(1)),
      vsPayeeEach: Number((perRow / baseline).toFixed(2)),
    }),
  );
}
