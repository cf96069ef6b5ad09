import { describe, expect, it } from 'vitest';
import { openPostgresJournal } from '../../../src/journal/postgres/open.js';
import { postgresMissing, usePostgres } from '../../support/postgres.js';
import { waitFor } from '../../support/wait.js';
import { batch, request } from '../conformance.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `postbacks told between hosts on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const postgres = usePostgres();

    it('the host following hears of a postback another host took, and again once the database has restarted', async () => {
      const url = await postgres.made('told');
      const taker = await openPostgresJournal({ kind: 'postgres', url });
      const follower = await openPostgresJournal({ kind: 'postgres', url });
      try {
        const id = await taker.recordBatch(batch, []);
        await taker.admitPayouts(
          id,
          ['p-1', 'p-2'].map((orderId, i) => ({ line: i + 2, request: request(orderId) })),
          { duplicateWindowMs: 0 },
        );
        for (const [i, claim] of (await taker.claimToSend('a', 2, 30_000)).entries()) {
          await taker.move(claim.orderId, claim.fence, 'pending', 'created', {
            transactionId: i + 1,
            nextPollAt: Date.now() + 60_000,
          });
        }
        const heard: (string | undefined)[] = [];
        const stop = await follower.onPollNow((orderId) => heard.push(orderId));
        expect(await taker.pollNow({ transactionId: 1 })).toBe(true);
        await waitFor('p-1 heard', () => heard.includes('p-1'));

        await postgres.cluster().restart();
        // Listening again, it says that some may have gone unheard: its host looks again.
        await waitFor('the follower listening again', () => heard.includes(undefined));
        // The taker's pool may lose a statement to a connection the restart ended.
        await waitFor('the taker writing again', () => taker.pollNow({ transactionId: 2 }));
        await waitFor('p-2 heard', () => heard.includes('p-2'));
        expect(heard.slice(0, 2)).toEqual(['p-1', undefined]);
        await stop();
      } finally {
        await taker.close();
        await follower.close();
      }
    });
  },
);
