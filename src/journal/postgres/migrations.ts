/**
 * The PostgreSQL journal's schema, as numbered migrations: append-only, never edited once
 * shipped, applied under one advisory lock (open.ts). Its first version holds what the
 * SQLite journal keeps at its version 24 (../migrations.ts), in PostgreSQL's types: times
 * are bigint milliseconds since the epoch (UTC), money integer cents.
 */

export const POSTGRES_MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE schema_version (
        id integer PRIMARY KEY CHECK (id = 1),
        version integer NOT NULL
      );
      INSERT INTO schema_version (id, version) VALUES (1, 0);

      CREATE TABLE batches (
        id bigserial PRIMARY KEY,
        file_name text NOT NULL,
        sha256 text NOT NULL,
        received_at bigint NOT NULL,
        state text NOT NULL,
        rows integer NOT NULL,
        valid integer NOT NULL,
        invalid integer NOT NULL,
        total_cents bigint NOT NULL,
        problems text NOT NULL,
        result_name text UNIQUE,
        awaiting_name text,
        held_because text,
        name_key text,
        name_number integer,
        corrects bigint REFERENCES batches (id),
        order_id_home text
      );
      CREATE INDEX batches_by_sha256 ON batches (sha256);
      CREATE INDEX batches_by_name_key ON batches (name_key, id);
      CREATE INDEX batches_by_state ON batches (state, id);

      -- Every claim takes the next epoch: a row's fence only grows, on every host.
      CREATE SEQUENCE claim_epochs;

      -- One row per orderId, ever: the journal's promise not to pay twice. The request is
      -- kept as its fields, given back in the reader's key order.
      CREATE TABLE payouts (
        id bigserial PRIMARY KEY,
        order_id text NOT NULL UNIQUE,
        batch_id bigint NOT NULL REFERENCES batches (id),
        line integer NOT NULL,
        value_cents bigint NOT NULL,
        pix_key_type integer NOT NULL,
        pix_key text NOT NULL,
        document text NOT NULL,
        cpf_cnpj text NOT NULL,
        name text NOT NULL,
        email text NOT NULL,
        phone text NOT NULL,
        payload_hash bytea NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        not_found integer NOT NULL DEFAULT 0,
        last_sent_at bigint,
        transaction_id bigint,
        gateway_status text,
        message text,
        said text,
        fee text,
        net text,
        gateway_created_at text,
        end_to_end_id text,
        processed_at text,
        lease_owner text,
        lease_until bigint,
        fence bigint NOT NULL DEFAULT 0,
        updated_at bigint NOT NULL,
        polls integer NOT NULL DEFAULT 0,
        poll_failed boolean NOT NULL DEFAULT false,
        next_poll_at bigint,
        admitted_at bigint,
        hold_reason text,
        covered_by text,
        superseded_by bigint REFERENCES batches (id),
        released_at bigint,
        retry_of text,
        attempt_number integer,
        reference text
      );
      CREATE INDEX payouts_by_state ON payouts (state, batch_id, line);
      CREATE INDEX payouts_by_batch ON payouts (batch_id, line);
      CREATE INDEX payouts_by_next_poll ON payouts (next_poll_at) WHERE state = 'pending';
      CREATE INDEX payouts_by_cover ON payouts (document, value_cents, batch_id, admitted_at);
      CREATE INDEX payouts_by_covered_by ON payouts (covered_by) WHERE covered_by IS NOT NULL;
      CREATE INDEX payouts_by_superseded_by ON payouts (superseded_by)
        WHERE superseded_by IS NOT NULL;
      CREATE INDEX payouts_by_retry_of ON payouts (retry_of) WHERE retry_of IS NOT NULL;
      CREATE INDEX payouts_by_reference ON payouts (document, reference, batch_id)
        WHERE reference IS NOT NULL;

      -- Lines of a file that are not payouts: invalid rows, skipped lines, held ones.
      CREATE TABLE batch_lines (
        batch_id bigint NOT NULL REFERENCES batches (id),
        line integer NOT NULL,
        kind text NOT NULL,
        order_id text,
        column_heading text,
        message text NOT NULL,
        name text,
        value_cents bigint,
        value_written text,
        said text,
        cpf_cnpj text,
        pix_key_type text,
        pix_key text,
        PRIMARY KEY (batch_id, line)
      );

      -- Every move of every payout, with its reason; never updated or deleted.
      CREATE TABLE audit (
        id bigserial PRIMARY KEY,
        payout_id bigint NOT NULL REFERENCES payouts (id),
        at bigint NOT NULL,
        from_state text,
        to_state text NOT NULL,
        reason text NOT NULL
      );
      CREATE INDEX audit_by_payout ON audit (payout_id, id);

      CREATE TABLE batch_events (
        id bigserial PRIMARY KEY,
        batch_id bigint NOT NULL REFERENCES batches (id),
        at bigint NOT NULL,
        event text NOT NULL,
        by text NOT NULL,
        detail text NOT NULL
      );
      CREATE INDEX batch_events_by_batch ON batch_events (batch_id, id);

      CREATE TABLE locks (
        name text PRIMARY KEY,
        holder text NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        command text,
        since bigint NOT NULL,
        heartbeat_at bigint NOT NULL
      );

      CREATE TABLE gateway (
        id integer PRIMARY KEY CHECK (id = 1),
        kind text NOT NULL CHECK (kind IN ('sandbox', 'configured'))
      );

      CREATE TABLE identity (
        id integer PRIMARY KEY CHECK (id = 1),
        journal_id text NOT NULL,
        created_at bigint NOT NULL,
        recovery_since bigint,
        recovery_reason text
      );
    `,
  },
  {
    version: 2,
    sql: `
      -- SQLite's request_written (its migration 17): the request's own text, for a row its
      -- columns cannot give back to the byte; a journal copied from SQLite keeps it.
      ALTER TABLE payouts ADD COLUMN request_written text;
    `,
  },
  {
    version: 3,
    sql: `
      -- Each host's last sight (a lock taken, waited for or renewed), for payouts doctor:
      -- the locks table keeps only each lock's holder, not the hosts waiting beside it.
      CREATE TABLE hosts (
        name text PRIMARY KEY,
        seen_at bigint NOT NULL
      );
    `,
  },
  {
    version: 4,
    sql: `
      -- What one host of several takes for itself: an inbox file (by its bytes) while it
      -- is taken and read, a batch while it is finished. A claim lives as long as its
      -- holder's lock (locks.holder) keeps its heartbeat.
      CREATE TABLE work_claims (
        key text PRIMARY KEY,
        holder text NOT NULL,
        host text NOT NULL,
        file_name text,
        file_size bigint,
        sha256 text,
        batch_id bigint REFERENCES batches (id),
        taken_at bigint NOT NULL
      );
      CREATE INDEX locks_by_holder ON locks (holder);
    `,
  },
  {
    version: 5,
    sql: `
      -- How far each host's clock read from the database's when last measured (doctor).
      ALTER TABLE hosts ADD COLUMN clock_offset_ms bigint;
    `,
  },
  {
    version: 6,
    sql: `
      -- The gateway's limits kept by the hosts together (limits.ts): the pause a 429 asked
      -- one host for, on the database's clock (its row made by the first), and each host
      -- sending since when, last seen when.
      CREATE TABLE gateway_pause (
        id integer PRIMARY KEY CHECK (id = 1),
        paused_until bigint NOT NULL
      );
      CREATE TABLE senders (
        name text PRIMARY KEY,
        since bigint NOT NULL,
        seen_at bigint NOT NULL
      );
    `,
  },
  {
    version: 7,
    sql: `
      -- The round trip of each host's last clock reading: one too slow to tell which side
      -- of maxClockSkew the clock is on keeps it, its offset null (doctor says so).
      ALTER TABLE hosts ADD COLUMN clock_round_trip_ms bigint;
    `,
  },
  {
    version: 8,
    sql: `
      -- dailyLimit sums the day's approvals: a range of their times, not every batch's events.
      CREATE INDEX batch_events_approved_by_time ON batch_events (at) WHERE event = 'approved';
    `,
  },
];
