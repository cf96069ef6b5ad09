import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inTransaction, poolFor } from '../../../src/journal/postgres/connection.js';
import { statement } from '../../../src/journal/postgres/sql.js';
import { postgresMissing, usePostgres } from '../../support/postgres.js';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `the PostgreSQL journal's connections${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();

    it('a transaction whose connection the server ends between its statements fails that call, and the process goes on', async () => {
      const url = await postgres.made('lost');
      const pool = poolFor(url, 1);
      pool.on('error', () => undefined);
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        const attempt = inTransaction(pool, async (tx) => {
          const [backend] = await tx.rows<{ pid: number }, object>(
            statement('backend', 'SELECT pg_backend_pid() AS pid'),
            {},
          );
          const ended = new Promise((resolve) => tx.client.once('end', resolve));
          // The server ends it (a restart, an administrator) while no statement runs on it.
          await other.query('SELECT pg_terminate_backend($1)', [backend?.pid]);
          await ended;
          await tx.rows(statement('after', 'SELECT 1'), {});
        });
        await expect(attempt).rejects.toThrow(/terminat|not queryable/i);
        // The pool replaces the lost connection.
        expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await other.end();
        await pool.end();
      }
    });
  },
);
