// Payouts put straight into a journal in SQL, a batch of their own: a home's years of paid
// payouts, or a large batch waiting at the gateway, made in seconds rather than through
// the journal's interface (a test's or a benchmark's journal of a million payouts).

/**
 * Adds `count` payouts in `state` to the journal open as `db` (a better-sqlite3
 * connection), in a new batch, each of 100 cents, sent once at `now` and known to the
 * gateway; the pending ones' polls spread over the ten minutes after it. With `history`,
 * each paid one also has the four audit entries a run writes (queued, sending, pending,
 * paid) with its words. Returns the batch's id.
 */
export function addPayouts(db, { count, state, now = 1_000, history = false }) {
  return db.transaction(() => {
    const batchId = Number(
      db
        .prepare(
          `INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid,
             total_cents, problems)
           VALUES (@name, @name, @now, @batchState, @count, @count, 0, 0, '[]')`,
        )
        .run({
          name: `antigo-${state}-${Date.now()}-${Math.random()}.csv`,
          now,
          batchState: state === 'pending' ? 'open' : 'done',
          count,
        }).lastInsertRowid,
    );
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @count)
       INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, document,
         name, email, phone, payload_hash, state, attempts, last_sent_at, transaction_id,
         next_poll_at, updated_at, admitted_at)
       SELECT 'antigo-' || CAST(@batchId AS INTEGER) || '-' || i, @batchId, i + 1, 100, 2,
         printf('%011d', i), 'Pessoa ' || i, 'p' || i || '@example.com', '+5511987654321',
         randomblob(32), @state, 1, @now, @batchId * 10000000 + i,
         CASE @state WHEN 'pending' THEN @now + i * 600000 / @count END, @now, @now
       FROM n`,
    ).run({ count, batchId, state, now });
    if (history) {
      db.prepare(
        `INSERT INTO audit (payout_id, at, from_state, to_state, reason)
         SELECT p.id, @now, m.from_state, m.to_state, CASE m.step
           WHEN 0 THEN json_object('code', 'auditJournaled', 'batchId', p.batch_id, 'line', p.line)
           WHEN 1 THEN json_object('code', 'auditClaimed', 'owner', 'host:4242:a1b2c3', 'attempt', 1)
           WHEN 2 THEN 'created as transaction ' || p.transaction_id || ' (status 0)'
           ELSE 'polled: status paid' END
         FROM payouts p, (SELECT 0 AS step, NULL AS from_state, 'queued' AS to_state
           UNION ALL SELECT 1, 'queued', 'sending' UNION ALL SELECT 2, 'sending', 'pending'
           UNION ALL SELECT 3, 'pending', 'paid') m
         WHERE p.batch_id = @batchId ORDER BY p.id, m.step`,
      ).run({ batchId, now });
    }
    return batchId;
  })();
}

/**
 * `addPayouts` on a PostgreSQL journal, through `client` (a connected node-postgres
 * client): `count` paid payouts in a new finished batch received at `now`, each with the
 * four audit entries a run writes. Returns the batch's id.
 */
export async function addPaidPayoutsPostgres(client, { count, now = 1_000 }) {
  await client.query('BEGIN');
  try {
    const {
      rows: [{ id: batchId }],
    } = await client.query(
      `INSERT INTO batches (file_name, sha256, received_at, state, rows, valid, invalid,
         total_cents, problems)
       VALUES ($1, $1, $2, 'done', $3, $3, 0, 0, '[]') RETURNING id`,
      [`antigo-paid-${Date.now()}-${Math.random()}.csv`, now, count],
    );
    await client.query(
      `INSERT INTO payouts (order_id, batch_id, line, value_cents, pix_key_type, pix_key,
         document, cpf_cnpj, name, email, phone, payload_hash, state, attempts, last_sent_at,
         transaction_id, updated_at, admitted_at)
       SELECT 'antigo-' || $1::bigint || '-' || i, $1, i + 1, 100, 2, 'p' || i || '@example.com',
         lpad(i::text, 11, '0'), lpad(i::text, 11, '0'), 'Pessoa ' || i, 'p' || i || '@example.com',
         '+5511987654321', sha256(i::text::bytea), 'paid', 1, $2, $1 * 10000000 + i, $2, $2
       FROM generate_series(1, $3::integer) i`,
      [batchId, now, count],
    );
    await client.query(
      `INSERT INTO audit (payout_id, at, from_state, to_state, reason)
       SELECT p.id, $2, m.from_state, m.to_state, CASE m.step
         WHEN 0 THEN json_build_object('code', 'auditJournaled', 'batchId', p.batch_id, 'line', p.line)::text
         WHEN 1 THEN json_build_object('code', 'auditClaimed', 'owner', 'host:4242:a1b2c3', 'attempt', 1)::text
         WHEN 2 THEN 'created as transaction ' || p.transaction_id || ' (status 0)'
         ELSE 'polled: status paid' END
       FROM payouts p, (VALUES (0, NULL, 'queued'), (1, 'queued', 'sending'),
         (2, 'sending', 'pending'), (3, 'pending', 'paid')) m (step, from_state, to_state)
       WHERE p.batch_id = $1 ORDER BY p.id, m.step`,
      [batchId, now],
    );
    await client.query('COMMIT');
    return Number(batchId);
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
