/**
 * Work one host takes for itself on a journal several hosts share: an inbox file while it
 * is taken and read into a batch, a batch while its result is written and its file
 * archived. A claim has no lease of its own: it lives while its holder's lock (the host's
 * home lock) keeps its heartbeat, so a host that dies frees its claims when its lock goes
 * stale, on the journal's clock as the lock itself.
 */
import type { Journal } from '../journal.js';
import type { WorkClaim } from '../types.js';
import { inTransaction, type Runner } from './connection.js';
import { AT, CLUSTER_NOW, statement } from './sql.js';
import type pg from 'pg';

type Claims = Pick<Journal, 'takeClaim' | 'releaseClaim'>;

/** One row per claim: a file by its bytes (two names of one content are one file's work). */
function keyOf(claim: WorkClaim): string {
  return claim.kind === 'file' ? `file:${claim.sha256}:${claim.size}` : `batch:${claim.batchId}`;
}

const statements = {
  // Two hosts claiming one free key at once: the key is locked while it is decided.
  claimKey: statement<{ key: string }>(
    'claim-key',
    `SELECT pg_advisory_xact_lock(31, hashtext('claim:' || @key))`,
  ),
  // Judged as the lock is, by the database's clock: a heartbeat is written by it.
  claim: statement<{ key: string; staleMs: number }>(
    'claim',
    `SELECT c.holder, c.host,
       l.heartbeat_at IS NOT NULL AND l.heartbeat_at > ${CLUSTER_NOW} - @staleMs AS live
     FROM work_claims c LEFT JOIN locks l ON l.holder = c.holder
     WHERE c.key = @key FOR UPDATE OF c`,
  ),
  setClaim: statement<{
    key: string;
    holder: string;
    host: string;
    fileName: string | null;
    fileSize: number | null;
    sha256: string | null;
    batchId: number | null;
    now: number | null;
  }>(
    'set-claim',
    `INSERT INTO work_claims (key, holder, host, file_name, file_size, sha256, batch_id, taken_at)
     VALUES (@key, @holder, @host, @fileName, @fileSize, @sha256, @batchId, ${AT})
     ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, host = EXCLUDED.host,
       file_name = EXCLUDED.file_name, taken_at = EXCLUDED.taken_at`,
  ),
  releaseClaim: statement<{ key: string; holder: string }>(
    'release-claim',
    `DELETE FROM work_claims WHERE key = @key AND holder = @holder`,
  ),
};

export function createClaims(pool: pg.Pool, pooled: Runner, clock: () => number | null): Claims {
  return {
    takeClaim: (claim, me, staleMs) =>
      inTransaction(pool, async (tx) => {
        const key = keyOf(claim);
        await tx.rows(statements.claimKey, { key });
        const [row] = await tx.rows<
          { holder: string; host: string; live: boolean },
          { key: string; staleMs: number }
        >(statements.claim, { key, staleMs });
        if (row && row.holder !== me.holder && row.live) {
          return { taken: false as const, host: row.host };
        }
        await tx.count(statements.setClaim, {
          key,
          ...me,
          fileName: claim.kind === 'file' ? claim.name : null,
          fileSize: claim.kind === 'file' ? claim.size : null,
          sha256: claim.kind === 'file' ? claim.sha256 : null,
          batchId: claim.kind === 'batch' ? claim.batchId : null,
          now: clock(),
        });
        return { taken: true as const };
      }),
    releaseClaim: async (claim, holder) => {
      await pooled.count(statements.releaseClaim, { key: keyOf(claim), holder });
    },
  };
}
