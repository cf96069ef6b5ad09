/**
 * The journal's schema, as numbered migrations: append-only, never edited once shipped.
 * Times are integer milliseconds since the epoch (UTC); money is integer cents.
 */

export const MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE batches (
        id INTEGER PRIMARY KEY,
        file_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        state TEXT NOT NULL,
        rows INTEGER NOT NULL,
        valid INTEGER NOT NULL,
        invalid INTEGER NOT NULL,
        total_cents INTEGER NOT NULL,
        problems TEXT NOT NULL
      );
      CREATE INDEX batches_by_sha256 ON batches (sha256);

      -- One row per orderId, ever: the journal's promise not to pay twice.
      CREATE TABLE payouts (
        order_id TEXT PRIMARY KEY,
        batch_id INTEGER NOT NULL REFERENCES batches (id),
        line INTEGER NOT NULL,
        request TEXT NOT NULL,
        payload_hash TEXT NOT NULL,
        value_cents INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        not_found INTEGER NOT NULL DEFAULT 0,
        last_sent_at INTEGER,
        transaction_id INTEGER,
        gateway_status TEXT,
        message TEXT,
        fee TEXT,
        net TEXT,
        gateway_created_at TEXT,
        end_to_end_id TEXT,
        processed_at TEXT,
        lease_owner TEXT,
        lease_until INTEGER,
        fence INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX payouts_by_state ON payouts (state, batch_id, line);
      CREATE INDEX payouts_by_batch ON payouts (batch_id, line);

      -- Lines of a file that are not payouts: invalid rows and skipped lines.
      CREATE TABLE batch_lines (
        batch_id INTEGER NOT NULL REFERENCES batches (id),
        line INTEGER NOT NULL,
        kind TEXT NOT NULL,
        order_id TEXT,
        column_heading TEXT,
        message TEXT NOT NULL,
        PRIMARY KEY (batch_id, line)
      ) WITHOUT ROWID;

      -- Every move of every payout, with its reason; never updated or deleted.
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        order_id TEXT NOT NULL,
        at INTEGER NOT NULL,
        from_state TEXT,
        to_state TEXT NOT NULL,
        reason TEXT NOT NULL
      );
      CREATE INDEX audit_by_order ON audit (order_id, id);
    `,
  },
  {
    version: 2,
    sql: `
      -- Following: how often a pending payout was polled, and when it is due again
      -- (NULL: at once); whether its message says why its last poll failed.
      ALTER TABLE payouts ADD COLUMN polls INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payouts ADD COLUMN poll_failed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payouts ADD COLUMN next_poll_at INTEGER;
      CREATE INDEX payouts_by_next_poll ON payouts (state, next_poll_at);
    `,
  },
  {
    version: 3,
    sql: `
      -- Who is working on this home folder (a run, a daemon), so a second one waits or
      -- steps back. Advisory: row claims keep each payout to one sender regardless.
      CREATE TABLE locks (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        since INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    sql: `
      -- Each batch's result file name, chosen once: a later file of the same name (next
      -- month's payroll.csv) gets its own result, never the earlier one's.
      ALTER TABLE batches ADD COLUMN result_name TEXT;
      CREATE UNIQUE INDEX batches_by_result_name ON batches (result_name);
    `,
  },
  {
    version: 5,
    sql: `
      -- The name a batch's file waits under in awaiting-approval/ (it may differ from the
      -- name it arrived with), so people are told the name to approve.
      ALTER TABLE batches ADD COLUMN awaiting_name TEXT;
    `,
  },
  {
    version: 6,
    sql: `
      -- Why an underfunded batch is held: the balance fell short, or could not be read.
      -- Each calls for its own action (top up, or look at the gateway), so it is kept.
      ALTER TABLE batches ADD COLUMN held_because TEXT;
    `,
  },
  {
    version: 7,
    sql: `
      -- Which gateway this journal's orderIds go to, fixed by the first run that talks to
      -- one: an orderId "paid" in the embedded sandbox was never paid for real, so the two
      -- must never share a journal.
      CREATE TABLE gateway (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        kind TEXT NOT NULL CHECK (kind IN ('sandbox', 'configured'))
      );
    `,
  },
  {
    version: 8,
    sql: `
      -- Which journal this is (a random id, kept in journal.marker beside it too), and
      -- when a person chose to recover it after a loss: from then on every payout is
      -- looked up at the gateway before its first send from this journal.
      CREATE TABLE identity (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        journal_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        recovery_since INTEGER,
        recovery_reason TEXT
      );
    `,
  },
  {
    version: 9,
    sql: `
      -- Who is paid, and once: a batch's name as it names a payroll (copy marks dropped)
      -- and its number among the batches of that name, for derived orderIds and the
      -- same-name rule. Batches journaled before this have no name key: they take part in
      -- the cover rule through their payouts, not in the same-name rule.
      ALTER TABLE batches ADD COLUMN name_key TEXT;
      ALTER TABLE batches ADD COLUMN name_number INTEGER;
      CREATE INDEX batches_by_name_key ON batches (name_key, id);

      -- The cover rule: a payout's normalised document and when it was journaled, so a
      -- row can be compared with every payout of the same document and amount in a window.
      ALTER TABLE payouts ADD COLUMN document TEXT;
      ALTER TABLE payouts ADD COLUMN admitted_at INTEGER;
      UPDATE payouts SET document = upper(json_extract(request, '$.cpfCnpj')),
        admitted_at = (SELECT received_at FROM batches WHERE batches.id = payouts.batch_id);
      CREATE INDEX payouts_by_cover ON payouts (document, value_cents, admitted_at);

      -- Why a held row is held (a person's release frees only its own reason), and the
      -- payout it may repeat (one payout covers at most one row).
      ALTER TABLE payouts ADD COLUMN hold_reason TEXT;
      ALTER TABLE payouts ADD COLUMN covered_by TEXT;
      CREATE INDEX payouts_by_covered_by ON payouts (covered_by) WHERE covered_by IS NOT NULL;

      -- Corrected copies: the batch a copy corrects, and the copy that closed a row of it
      -- (turning the copy down gives the row back).
      ALTER TABLE batches ADD COLUMN corrects INTEGER REFERENCES batches (id);
      ALTER TABLE payouts ADD COLUMN superseded_by INTEGER REFERENCES batches (id);
      CREATE INDEX payouts_by_superseded_by ON payouts (superseded_by)
        WHERE superseded_by IS NOT NULL;
    `,
  },
  {
    version: 10,
    sql: `
      -- What people decided about a batch, with who and when: an approval, a refusal, a
      -- release of held rows, a link to the batch it corrects. Never updated or deleted.
      CREATE TABLE batch_events (
        id INTEGER PRIMARY KEY,
        batch_id INTEGER NOT NULL REFERENCES batches (id),
        at INTEGER NOT NULL,
        event TEXT NOT NULL,
        by TEXT NOT NULL,
        detail TEXT NOT NULL
      );
      CREATE INDEX batch_events_by_batch ON batch_events (batch_id, id);
    `,
  },
  {
    version: 11,
    sql: `
      -- When a person released a row held as a possible duplicate or for its file's name
      -- as a new payment: the cover rule, checked again as a row is claimed, leaves it be.
      ALTER TABLE payouts ADD COLUMN released_at INTEGER;
    `,
  },
  {
    version: 12,
    sql: `
      -- Retry on purpose: a payout sent again by payouts retry is a new row (its orderId
      -- with an attempt suffix, -r2, -r3) beside the one that failed, on the same line of
      -- the same batch; it names the payout it sends again and its attempt number.
      ALTER TABLE payouts ADD COLUMN retry_of TEXT;
      ALTER TABLE payouts ADD COLUMN attempt_number INTEGER;
      CREATE INDEX payouts_by_retry_of ON payouts (retry_of) WHERE retry_of IS NOT NULL;
    `,
  },
  {
    version: 13,
    sql: `
      -- A corrected copy asks, for each of its rows, what the batch it corrects paid to
      -- that document: without this the batch's rows were read whole for every row of the
      -- copy (docs/benchmarks.md, decision).
      CREATE INDEX payouts_by_batch_document ON payouts (batch_id, document, line);
    `,
  },
  {
    version: 14,
    sql: `
      -- A line that is not a payout (invalid, held, superseded) keeps its row's name and
      -- amount, so its result line shows them: the amount in cents when it could be read,
      -- else as written. Lines journaled before this show them empty.
      ALTER TABLE batch_lines ADD COLUMN name TEXT;
      ALTER TABLE batch_lines ADD COLUMN value_cents INTEGER;
      ALTER TABLE batch_lines ADD COLUMN value_written TEXT;
    `,
  },
  {
    version: 15,
    sql: `
      -- An invalid or skipped line's message as a value (its code and what it needs, in
      -- JSON), so its result line is said in the reader's language; message keeps the
      -- English. NULL for lines journaled before, and once a line's kind changes.
      ALTER TABLE batch_lines ADD COLUMN said TEXT;
    `,
  },
  {
    version: 16,
    sql: `
      -- Why a payout is held by the rules on who is paid, as a value (JSON, as
      -- batch_lines.said), so its result line and the summaries say it in the reader's
      -- language; message keeps the English. NULL for payouts held before, for other
      -- messages (a gateway's answer), and once the message is cleared or changed.
      ALTER TABLE payouts ADD COLUMN said TEXT;
    `,
  },
  {
    version: 17,
    sql: `
      -- The payouts table rebuilt compact (a row was mostly the orderId repeated in every
      -- index and the request kept whole as JSON; docs/benchmarks.md, admit):
      -- - keyed by an integer, so each index holds a few bytes, not the orderId; the
      --   orderId stays unique by its own index; rows stored in file order;
      -- - the request kept as columns: pix_key_written and cpf_cnpj_written only when
      --   they differ from the field they usually repeat; request_written only for a row
      --   these columns cannot give back to the byte (none this program wrote). The
      --   virtual columns (no storage) give pix_key, cpf_cnpj and request as before;
      -- - payload_hash as the first 8 bytes of the SHA-256, not 64 hex digits: it only
      --   compares an orderId's payload with its own earlier one;
      -- - no (batch_id, document, line) index: (document, ...) finds a document's few
      --   payouts, and the batch among them; the poll index holds pending rows only.
      CREATE TABLE payouts_compact (
        id INTEGER PRIMARY KEY,
        order_id TEXT NOT NULL UNIQUE,
        batch_id INTEGER NOT NULL REFERENCES batches (id),
        line INTEGER NOT NULL,
        value_cents INTEGER NOT NULL,
        pix_key_type INTEGER NOT NULL,
        pix_key_written TEXT,
        document TEXT,
        cpf_cnpj_written TEXT,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        phone TEXT NOT NULL,
        request_written TEXT,
        payload_hash BLOB NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        not_found INTEGER NOT NULL DEFAULT 0,
        last_sent_at INTEGER,
        transaction_id INTEGER,
        gateway_status TEXT,
        message TEXT,
        said TEXT,
        fee TEXT,
        net TEXT,
        gateway_created_at TEXT,
        end_to_end_id TEXT,
        processed_at TEXT,
        lease_owner TEXT,
        lease_until INTEGER,
        fence INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL,
        polls INTEGER NOT NULL DEFAULT 0,
        poll_failed INTEGER NOT NULL DEFAULT 0,
        next_poll_at INTEGER,
        admitted_at INTEGER,
        hold_reason TEXT,
        covered_by TEXT,
        superseded_by INTEGER REFERENCES batches (id),
        released_at INTEGER,
        retry_of TEXT,
        attempt_number INTEGER,
        cpf_cnpj TEXT AS (COALESCE(cpf_cnpj_written, document)) VIRTUAL,
        pix_key TEXT AS (COALESCE(pix_key_written,
          CASE pix_key_type WHEN 2 THEN email WHEN 3 THEN phone ELSE cpf_cnpj END)) VIRTUAL,
        request TEXT AS (COALESCE(request_written, json_object('value', value_cents,
          'pixKeyType', pix_key_type, 'pixKey', pix_key, 'cpfCnpj', cpf_cnpj,
          'person', json_object('name', name, 'email', email, 'phone', phone),
          'orderId', order_id))) VIRTUAL
      );
      INSERT INTO payouts_compact (order_id, batch_id, line, value_cents, pix_key_type,
        pix_key_written, document, cpf_cnpj_written, name, email, phone, payload_hash, state,
        attempts, not_found, last_sent_at, transaction_id, gateway_status, message, said, fee,
        net, gateway_created_at, end_to_end_id, processed_at, lease_owner, lease_until, fence,
        updated_at, polls, poll_failed, next_poll_at, admitted_at, hold_reason, covered_by,
        superseded_by, released_at, retry_of, attempt_number)
      SELECT order_id, batch_id, line, value_cents,
        COALESCE(json_extract(request, '$.pixKeyType'), 4),
        NULLIF(json_extract(request, '$.pixKey'), CASE json_extract(request, '$.pixKeyType')
          WHEN 2 THEN json_extract(request, '$.person.email')
          WHEN 3 THEN json_extract(request, '$.person.phone')
          ELSE COALESCE(json_extract(request, '$.cpfCnpj'), document_key) END),
        document_key, NULLIF(json_extract(request, '$.cpfCnpj'), document_key),
        COALESCE(json_extract(request, '$.person.name'), ''),
        COALESCE(json_extract(request, '$.person.email'), ''),
        COALESCE(json_extract(request, '$.person.phone'), ''),
        COALESCE(unhex(substr(payload_hash, 1, 16)), CAST(payload_hash AS BLOB)),
        state, attempts, not_found, last_sent_at, transaction_id, gateway_status, message,
        said, fee, net, gateway_created_at, end_to_end_id, processed_at, lease_owner,
        lease_until, fence, updated_at, polls, poll_failed, next_poll_at, admitted_at,
        hold_reason, covered_by, superseded_by, released_at, retry_of, attempt_number
      -- Rows journaled before version 9 had their document filled as upper(cpfCnpj), its
      -- punctuation kept, where the cover rule looks for the digits (as documentKey).
      FROM (SELECT *, upper(replace(replace(replace(replace(document, '.', ''), '-', ''),
        '/', ''), ' ', '')) AS document_key FROM payouts)
      ORDER BY batch_id, line, order_id;
      -- A row whose columns do not give back its request's very text keeps the text.
      UPDATE payouts_compact SET request_written = old.request
      FROM payouts old
      WHERE old.order_id = payouts_compact.order_id AND old.request <> payouts_compact.request;
      DROP TABLE payouts;
      ALTER TABLE payouts_compact RENAME TO payouts;
      CREATE INDEX payouts_by_state ON payouts (state, batch_id, line);
      CREATE INDEX payouts_by_batch ON payouts (batch_id, line);
      CREATE INDEX payouts_by_next_poll ON payouts (next_poll_at) WHERE state = 'pending';
      CREATE INDEX payouts_by_cover ON payouts (document, value_cents, admitted_at);
      CREATE INDEX payouts_by_covered_by ON payouts (covered_by) WHERE covered_by IS NOT NULL;
      CREATE INDEX payouts_by_superseded_by ON payouts (superseded_by)
        WHERE superseded_by IS NOT NULL;
      CREATE INDEX payouts_by_retry_of ON payouts (retry_of) WHERE retry_of IS NOT NULL;
    `,
  },
  {
    version: 18,
    sql: `
      -- The audit names its payout by the payouts row's id (migration 17), not by the
      -- orderId again: an entry and its index were mostly the orderId twice, and the index
      -- filled in the random order of orderIds (docs/benchmarks.md, admit). Entry ids are
      -- kept: the marker's high water counts them. Every entry this program wrote has its
      -- payout; one that had none would stop the migration here (NOT NULL), the journal left
      -- as it was.
      CREATE TABLE audit_compact (
        id INTEGER PRIMARY KEY,
        payout_id INTEGER NOT NULL,
        at INTEGER NOT NULL,
        from_state TEXT,
        to_state TEXT NOT NULL,
        reason TEXT NOT NULL
      );
      INSERT INTO audit_compact (id, payout_id, at, from_state, to_state, reason)
      SELECT a.id, p.id, a.at, a.from_state, a.to_state, a.reason
      FROM audit a LEFT JOIN payouts p ON p.order_id = a.order_id ORDER BY a.id;
      DROP TABLE audit;
      ALTER TABLE audit_compact RENAME TO audit;
      CREATE INDEX audit_by_payout ON audit (payout_id, id);
    `,
  },
  {
    version: 19,
    sql: `
      -- The cover rule weighs a row against other files' payouts of its document and
      -- amount: with the batch before the time, a file's own rows are a range skipped, not
      -- read one by one. A claim of a file paying one payee the same amount 30,000 times
      -- read every earlier row of it for each row.
      DROP INDEX payouts_by_cover;
      CREATE INDEX payouts_by_cover ON payouts (document, value_cents, batch_id, admitted_at);
    `,
  },
  {
    version: 20,
    sql: `
      -- Every pass of a daemon names the batches with rows not final, by their state: a
      -- range of this index, not a read of every batch ever journaled.
      CREATE INDEX batches_by_state ON batches (state, id);
    `,
  },
  {
    version: 21,
    sql: `
      -- An invalid line keeps its row's CPF/CNPJ, key type and Pix key as written, so its
      -- result line shows whom it was for. Lines journaled before this show them empty.
      ALTER TABLE batch_lines ADD COLUMN cpf_cnpj TEXT;
      ALTER TABLE batch_lines ADD COLUMN pix_key_type TEXT;
      ALTER TABLE batch_lines ADD COLUMN pix_key TEXT;
    `,
  },
  {
    version: 22,
    sql: `
      -- Which command holds the home folder: a cron run beside the daemon names it, and
      -- after an hour of it says the setup needs mending. NULL: a holder of an older version.
      ALTER TABLE locks ADD COLUMN command TEXT;
    `,
  },
  {
    version: 23,
    sql: `
      -- The home's short identity that a batch's derived orderIds carry (homeTag), so two
      -- homes on one gateway account never derive the same one. Null for batches
      -- journaled before: resumed, they derive the orderIds they have.
      ALTER TABLE batches ADD COLUMN order_id_home TEXT;
    `,
  },
  {
    version: 24,
    sql: `
      -- A payment's reference (an invoice, an order, a competência), as compared: the same
      -- document and reference again is held whatever its age, so the lookup has no time
      -- bound and needs an index of its own. NULL for rows journaled before, and for rows
      -- of files without the column: those are weighed by duplicateWindow.
      ALTER TABLE payouts ADD COLUMN reference TEXT;
      CREATE INDEX payouts_by_reference ON payouts (document, reference, batch_id)
        WHERE reference IS NOT NULL;
      -- A row with a reference is weighed by the window only against payouts without one:
      -- a supplier paid the same amount every week for years is not read whole each time.
      CREATE INDEX payouts_unreferenced_by_cover ON payouts (document, value_cents, batch_id)
        WHERE reference IS NULL;
    `,
  },
  {
    version: 25,
    sql: `
      -- A daemon counts the rows of its unfinished states every few seconds, and of every
      -- state for its health line: with the amount in the state index, both read the index
      -- alone, the unfinished ones a range of it, never a payout's row.
      DROP INDEX payouts_by_state;
      CREATE INDEX payouts_by_state ON payouts (state, batch_id, line, value_cents);
    `,
  },
  {
    version: 26,
    sql: `
      -- Following reads what is due soonest first, a few at a time: a range of the poll
      -- times of pending payouts (a time not set is due at once), not a sort of them all.
      DROP INDEX payouts_by_next_poll;
      CREATE INDEX payouts_by_poll_due ON payouts (COALESCE(next_poll_at, 0))
        WHERE state = 'pending' AND transaction_id IS NOT NULL;
    `,
  },
  {
    version: 27,
    sql: `
      -- Where journal copy moved this journal (a PostgreSQL address, its password masked)
      -- and when: marked before the copy commits, so a host still on this file refuses to
      -- work with it, and no row is sent from both journals.
      CREATE TABLE moved (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        address TEXT NOT NULL,
        at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 28,
    sql: `
      -- dailyLimit sums the day's approvals: a range of their times, not every batch's events.
      CREATE INDEX batch_events_approved_by_time ON batch_events (at) WHERE event = 'approved';
    `,
  },
];
