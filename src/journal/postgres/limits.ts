/**
 * The gateway's limits kept by the hosts of one PostgreSQL journal: one round trip a look
 * (this host seen sending, the pause and the other senders read in the same statement),
 * one a pause. Times are the database's clock, as leases are.
 */
import type { JournalLimits } from '../journal.js';
import type { Runner } from './connection.js';
import { CLUSTER_NOW, statement } from './sql.js';

const statements = {
  // A host seen again within the window keeps its `since`; after a gap it sends anew. The
  // others are read from the snapshot before this host's own write, hence by name.
  look: statement<{ host: string; withinMs: number }>(
    'look-at-gateway',
    `WITH me AS (
       INSERT INTO senders AS s (name, since, seen_at) VALUES (@host, ${CLUSTER_NOW}, ${CLUSTER_NOW})
       ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at,
         since = CASE WHEN s.seen_at >= excluded.seen_at - @withinMs THEN s.since
                      ELSE excluded.since END
       RETURNING since = seen_at AS joined)
     SELECT COALESCE((SELECT GREATEST(paused_until - ${CLUSTER_NOW}, 0) FROM gateway_pause
                      WHERE id = 1), 0) AS paused_for_ms,
       (SELECT joined FROM me) AS joined,
       ARRAY(SELECT name FROM senders WHERE name <> @host
             AND seen_at >= ${CLUSTER_NOW} - @withinMs ORDER BY name) AS others`,
  ),
  pause: statement<{ ms: number }>(
    'pause-gateway',
    `INSERT INTO gateway_pause AS p (id, paused_until) VALUES (1, ${CLUSTER_NOW} + @ms)
     ON CONFLICT (id) DO UPDATE SET paused_until = GREATEST(p.paused_until, excluded.paused_until)`,
  ),
};

export function createLimits(pooled: Runner): JournalLimits {
  return {
    lookAtGateway: async (host, withinMs) => {
      const [row] = await pooled.rows<
        { paused_for_ms: number; joined: boolean; others: string[] },
        { host: string; withinMs: number }
      >(statements.look, { host, withinMs });
      return {
        pausedForMs: row?.paused_for_ms ?? 0,
        others: row?.others ?? [],
        joined: row?.joined ?? true,
      };
    },
    pauseGateway: async (ms) => {
      await pooled.count(statements.pause, { ms });
    },
  };
}
