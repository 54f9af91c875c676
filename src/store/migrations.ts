/**
 * Schema migrations, applied in order; index + 1 is the schema version. Never edit a
 * migration that has shipped: add a new one. The row states and their edges are declared in
 * row-states.ts (the CHECK below lists the same states; a test holds them equal).
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE batches (
    id               TEXT PRIMARY KEY,
    seq              INTEGER NOT NULL UNIQUE,
    name             TEXT NOT NULL,
    source_name      TEXT NOT NULL,
    job_file         TEXT NOT NULL,
    content_hash     TEXT NOT NULL,
    origin           TEXT NOT NULL CHECK (origin IN ('inbox', 'submit', 'retry')),
    state            TEXT NOT NULL CHECK (state IN ('claimed', 'open', 'done', 'failed', 'duplicate')),
    wait_reason      TEXT,
    wait_detail      TEXT,
    duplicate_of     TEXT,
    retry_of         TEXT,
    header_json      TEXT,
    file_error       TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    sandbox          INTEGER NOT NULL,
    balance_before   REAL,
    balance_after    REAL,
    result_file      TEXT,
    owner            TEXT,
    lease_until      INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER
  );
  CREATE INDEX batches_hash ON batches (content_hash);
  CREATE INDEX batches_state ON batches (state);

  CREATE TABLE rows (
    batch_id        TEXT NOT NULL REFERENCES batches (id),
    idx             INTEGER NOT NULL,
    line            INTEGER NOT NULL,
    cells_json      TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'processing', 'verifying',
                      'completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')),
    trxid           TEXT,
    request_json    TEXT,
    product_id      TEXT,
    slug            TEXT,
    pack_name       TEXT,
    quantity        INTEGER,
    unit_price_usd  REAL,
    expected_usd    REAL,
    max_price_usd   REAL,
    order_id        TEXT,
    amount_usd      REAL,
    codes_json      TEXT,
    refunded        INTEGER,
    error           TEXT,
    reject_code     TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    uncertain       INTEGER NOT NULL DEFAULT 0,
    first_sent_at   INTEGER,
    last_sent_at    INTEGER,
    next_try_at     INTEGER NOT NULL DEFAULT 0,
    next_poll_at    INTEGER NOT NULL DEFAULT 0,
    polls           INTEGER NOT NULL DEFAULT 0,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (batch_id, idx)
  );
  CREATE UNIQUE INDEX rows_trxid ON rows (trxid) WHERE trxid IS NOT NULL;
  CREATE UNIQUE INDEX rows_order_id ON rows (order_id) WHERE order_id IS NOT NULL;
  CREATE INDEX rows_state ON rows (state, batch_id);

  -- Start times of recent API calls, shared by every topup process on this home.
  CREATE TABLE api_calls (t INTEGER NOT NULL);
  CREATE INDEX api_calls_t ON api_calls (t);

  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  // When each call's answer arrived (NULL while in flight): a call counts in a window until then.
  `
  ALTER TABLE api_calls ADD COLUMN done INTEGER;
  `,
  // Since when a row has had no definite answer (the first send whose answer was lost, or the
  // first poll that did not find its order), NULL when nothing is in doubt; and how many sends
  // since then got no definite answer (time alone is not enough: resends may have been held back).
  `
  ALTER TABLE rows ADD COLUMN doubt_since INTEGER;
  ALTER TABLE rows ADD COLUMN doubt_tries INTEGER NOT NULL DEFAULT 0;
  `,
  // The row state machine made explicit (store/row-states.ts): facts that were flags beside a state
  // become states (sending + uncertain → resending; verifying without a refusal → searching;
  // processing in doubt → unseen), and `uncertain` goes. SQLite cannot change a CHECK, so the table
  // is rebuilt. New columns: the last answer about a row (redacted, capped: for operators, never
  // for decisions), a note that is not an error (a replayed trxid, codes missing), how often a
  // completed key order was re-read for its codes, when a row entered review, and an operator's
  // (or the recheck's) resolution of it. A finished batch whose results change again (a review
  // row resolved) writes a new result version.
  `
  CREATE TABLE rows_v4 (
    batch_id        TEXT NOT NULL REFERENCES batches (id),
    idx             INTEGER NOT NULL,
    line            INTEGER NOT NULL,
    cells_json      TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'resending', 'verifying', 'searching', 'processing',
                      'unseen', 'completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')),
    trxid           TEXT,
    request_json    TEXT,
    product_id      TEXT,
    slug            TEXT,
    pack_name       TEXT,
    quantity        INTEGER,
    unit_price_usd  REAL,
    expected_usd    REAL,
    max_price_usd   REAL,
    order_id        TEXT,
    amount_usd      REAL,
    codes_json      TEXT,
    refunded        INTEGER,
    error           TEXT,
    reject_code     TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    first_sent_at   INTEGER,
    last_sent_at    INTEGER,
    next_try_at     INTEGER NOT NULL DEFAULT 0,
    next_poll_at    INTEGER NOT NULL DEFAULT 0,
    polls           INTEGER NOT NULL DEFAULT 0,
    updated_at      INTEGER NOT NULL,
    doubt_since     INTEGER,
    doubt_tries     INTEGER NOT NULL DEFAULT 0,
    last_answer     TEXT,
    note            TEXT,
    code_reads      INTEGER NOT NULL DEFAULT 0,
    review_since    INTEGER,
    resolution      TEXT CHECK (resolution IN ('charged', 'not-charged', 'found')),
    resolved_by     TEXT,
    resolved_at     INTEGER,
    PRIMARY KEY (batch_id, idx)
  );
  INSERT INTO rows_v4 (batch_id, idx, line, cells_json, state, trxid, request_json, product_id, slug, pack_name, quantity,
      unit_price_usd, expected_usd, max_price_usd, order_id, amount_usd, codes_json, refunded, error, reject_code, attempts,
      first_sent_at, last_sent_at, next_try_at, next_poll_at, polls, updated_at, doubt_since, doubt_tries)
    SELECT batch_id, idx, line, cells_json,
      CASE WHEN state = 'sending' AND uncertain = 1 THEN 'resending'
           WHEN state = 'verifying' AND reject_code = 'TOPUP_NO_DEFINITE_ANSWER' THEN 'searching'
           WHEN state = 'processing' AND doubt_since IS NOT NULL THEN 'unseen'
           ELSE state END,
      trxid, request_json, product_id, slug, pack_name, quantity, unit_price_usd, expected_usd, max_price_usd, order_id,
      amount_usd, codes_json, refunded, error,
      CASE WHEN reject_code = 'TOPUP_NO_DEFINITE_ANSWER' THEN NULL ELSE reject_code END,
      attempts, first_sent_at, last_sent_at, next_try_at, next_poll_at, polls, updated_at, doubt_since, doubt_tries
    FROM rows;
  DROP TABLE rows;
  ALTER TABLE rows_v4 RENAME TO rows;
  CREATE UNIQUE INDEX rows_trxid ON rows (trxid) WHERE trxid IS NOT NULL;
  CREATE UNIQUE INDEX rows_order_id ON rows (order_id) WHERE order_id IS NOT NULL;
  CREATE INDEX rows_state ON rows (state, batch_id);
  CREATE INDEX rows_review ON rows (state, next_poll_at) WHERE state = 'review';
  ALTER TABLE batches ADD COLUMN result_version INTEGER NOT NULL DEFAULT 1;
  `,
  // The input file's dialect (JSON: delimiter, BOM, whether it was a workbook), so the result is
  // written the way the reseller's spreadsheet reads it. NULL (stored earlier): comma, no BOM.
  `
  ALTER TABLE batches ADD COLUMN dialect_json TEXT;
  `,
  // Edited re-drops (claim/repeats.ts): each valid row's purchase fingerprint (pack, player fields,
  // quantity), so a later file repeating it within TOPUP_REPEAT_WINDOW is found by an index.
  `
  ALTER TABLE rows ADD COLUMN fingerprint TEXT;
  CREATE INDEX rows_fingerprint ON rows (fingerprint) WHERE fingerprint IS NOT NULL;
  `,
  // The console (src/console): every reveal of codes and every action taken there, with who and
  // from where (store/audit.ts); and since when a batch has waited for its current reason, for
  // the console and the /metrics alert on batches that wait too long (NULL while not waiting).
  `
  CREATE TABLE audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    address  TEXT,
    action   TEXT NOT NULL,
    batch_id TEXT,
    line     INTEGER,
    detail   TEXT,
    outcome  TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed'))
  );
  CREATE INDEX audit_at ON audit (at);
  ALTER TABLE batches ADD COLUMN wait_since INTEGER;
  `,
  // Flat cost per order (issue 12): the questions the runner asks every step are answered from a
  // counter or an index, never a scan of the batch.
  //  - batch_counts: rows per (batch, state) and the sum of their expected_usd in micro-USD
  //    (integers: a sum kept up by adding and subtracting never drifts), kept by triggers on every
  //    INSERT, DELETE and change of state, whoever writes (RowStore's guarded UPDATEs; tests and
  //    repairs that write rows directly). The triggers never write rows.state. A migration that
  //    rebuilds the rows table must create these triggers again (DROP TABLE drops them).
  //  - rows_send / rows_poll: a batch's rows in one state in due order, so "what may be sent now",
  //    "which polls are due" and "when is the next one due" are seeks that stop at LIMIT. Partial:
  //    only rows that may be sent (pending, resending) or are followed (processing, unseen,
  //    verifying, searching) are in them, so an order that ends at once is never in rows_poll and
  //    leaves rows_send when it is sent. Queries name the same IN list (row-reads.ts) to use them.
  //  - rows_in_flight replaces rows_state (state, batch_id), whose two entries moved at every
  //    change of state: only the twin check looks rows up by state across batches, and only for
  //    rows in flight or in doubt. Fewer index pages per change = fewer bytes in the log per order.
  //  - rows_placed: placed orders by send time, for the poller's history-depth estimate.
  //  - batches_owner: each step reads the batches this process holds; the batches table grows
  //    with every file ever processed.
  `
  CREATE TABLE batch_counts (
    batch_id   TEXT NOT NULL,
    state      TEXT NOT NULL,
    n          INTEGER NOT NULL,
    usd_micros INTEGER NOT NULL,
    PRIMARY KEY (batch_id, state)
  ) WITHOUT ROWID;
  INSERT INTO batch_counts (batch_id, state, n, usd_micros)
    SELECT batch_id, state, count(*), sum(CAST(round(coalesce(expected_usd, 0) * 1000000) AS INTEGER)) FROM rows GROUP BY batch_id, state;
  CREATE TRIGGER rows_count_insert AFTER INSERT ON rows BEGIN
    INSERT INTO batch_counts (batch_id, state, n, usd_micros)
      VALUES (NEW.batch_id, NEW.state, 1, CAST(round(coalesce(NEW.expected_usd, 0) * 1000000) AS INTEGER))
      ON CONFLICT (batch_id, state) DO UPDATE SET n = n + 1, usd_micros = usd_micros + excluded.usd_micros;
  END;
  CREATE TRIGGER rows_count_delete AFTER DELETE ON rows BEGIN
    UPDATE batch_counts SET n = n - 1, usd_micros = usd_micros - CAST(round(coalesce(OLD.expected_usd, 0) * 1000000) AS INTEGER)
      WHERE batch_id = OLD.batch_id AND state = OLD.state;
  END;
  CREATE TRIGGER rows_count_update AFTER UPDATE OF state, batch_id, expected_usd ON rows
    WHEN OLD.state IS NOT NEW.state OR OLD.batch_id IS NOT NEW.batch_id OR OLD.expected_usd IS NOT NEW.expected_usd BEGIN
    UPDATE batch_counts SET n = n - 1, usd_micros = usd_micros - CAST(round(coalesce(OLD.expected_usd, 0) * 1000000) AS INTEGER)
      WHERE batch_id = OLD.batch_id AND state = OLD.state;
    INSERT INTO batch_counts (batch_id, state, n, usd_micros)
      VALUES (NEW.batch_id, NEW.state, 1, CAST(round(coalesce(NEW.expected_usd, 0) * 1000000) AS INTEGER))
      ON CONFLICT (batch_id, state) DO UPDATE SET n = n + 1, usd_micros = usd_micros + excluded.usd_micros;
  END;
  CREATE INDEX rows_send ON rows (batch_id, state, next_try_at, idx) WHERE state IN ('pending', 'resending');
  CREATE INDEX rows_poll ON rows (batch_id, state, next_poll_at) WHERE state IN ('processing', 'unseen', 'verifying', 'searching');
  CREATE INDEX rows_in_flight ON rows (slug, pack_name) WHERE state IN ('sending', 'resending', 'verifying', 'searching');
  DROP INDEX rows_state;
  CREATE INDEX rows_placed ON rows (first_sent_at) WHERE order_id IS NOT NULL;
  CREATE INDEX batches_owner ON batches (owner);
  `,
  // Invariant (store/invariants.ts): a row left `sending` by an owner that is gone is resent with
  // its trxid. A batch changes hands only by a new owner taking its lease (a dead process's, a
  // lapsed one, or one released by a graceful stop that could not wait for every answer); whoever
  // takes it, its `sending` rows are in doubt from that moment: the taken-over edge of
  // row-states.ts (sending → resending, owed a resend now), and rows already in doubt are due now.
  // A trigger, not a call each taker must remember: a lease taken anywhere (the runner, a command,
  // the console) applies it in the same transaction. `now` is not known here: a row's doubt starts
  // at its last send, which a `sending` row always has.
  `
  CREATE TRIGGER batches_taken_over AFTER UPDATE OF owner ON batches
    WHEN NEW.owner IS NOT NULL AND OLD.owner IS NOT NEW.owner BEGIN
    UPDATE rows SET state = 'resending', doubt_since = coalesce(doubt_since, last_sent_at), next_try_at = 0
      WHERE batch_id = NEW.id AND state = 'sending';
    UPDATE rows SET next_try_at = 0 WHERE batch_id = NEW.id AND state = 'resending' AND next_try_at > 0;
  END;
  `,
  // Invariant (store/invariants.ts): whether a row repeats an earlier purchase is decided in the
  // transaction that opens its batch (claim/repeats.ts), so two processes opening edited copies of
  // one file at once cannot both buy: the second opener sees the first's rows. repeat_check marks
  // the rows that decision is about (valid, no trxid of their own, in a batch not ordered again on
  // purpose); they are stored `pending` while the batch is `claimed` (never sendable), and the
  // opening moves those that repeat a purchase to `skipped` (edge `repeat`).
  `
  ALTER TABLE rows ADD COLUMN repeat_check INTEGER NOT NULL DEFAULT 0;
  `,
  // Several supplier accounts (docs/accounts.md). Every row is on exactly one account (rows.account:
  // one column, so a row can never be live on two); a home from before has one account, `default`,
  // and every row, call and pause of it keeps that name. Order ids are the account's own numbering
  // (two suppliers both have an ORD1000001): one order, one row, per account. The call log is per
  // account (each account's rate budget is its own). moves_json: the accounts that refused the row
  // with nothing created before it moved, each with the trxid it had there (results show them).
  //
  // Invariant (store/invariants.ts, one-account-at-a-time): a row changes account only where it is
  // proven that nothing was created on the one it leaves (it lands `pending`, left from `pending`:
  // never sent or turned away before any order; from `sending`: a first send refused with nothing
  // created; from `verifying`: history proved no order; row-states.ts edge `moved`), never with an
  // order, and always
  // with a new trxid (two accounts at one supplier share one trxid space), and never a row pinned to
  // its account by the file's account column (rows.pinned). The trigger refuses any other change
  // of account, whichever code path tries it; the trxid it leaves stays used (left_trxids).
  `
  ALTER TABLE rows ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
  ALTER TABLE rows ADD COLUMN moves_json TEXT;
  ALTER TABLE api_calls ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
  CREATE INDEX api_calls_account_t ON api_calls (account, t);
  DROP INDEX rows_order_id;
  CREATE UNIQUE INDEX rows_order_id ON rows (account, order_id) WHERE order_id IS NOT NULL;
  CREATE INDEX rows_order_lookup ON rows (order_id) WHERE order_id IS NOT NULL;
  CREATE INDEX rows_send_account ON rows (batch_id, account, state, next_try_at, idx) WHERE state IN ('pending', 'resending');
  ALTER TABLE rows ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
  -- A purchase is fingerprinted by its pack (slug and name), whichever account's pid the file used;
  -- fingerprint_alts (JSON) holds the pid-based fingerprints homes before this version stored, one
  -- per pid the pack has at an account, so a re-drop still repeats a purchase made before
  -- (claim/repeats.ts; an adversarial review: a home gaining accounts.toml bought a re-drop again).
  ALTER TABLE rows ADD COLUMN fingerprint_alts TEXT;
  CREATE TRIGGER rows_account_moves BEFORE UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND NOT (
      NEW.state = 'pending' AND OLD.state IN ('pending', 'sending', 'verifying') AND OLD.order_id IS NULL
      AND NEW.order_id IS NULL AND NEW.trxid IS NOT OLD.trxid AND NEW.trxid IS NOT NULL AND OLD.pinned = 0
    ) BEGIN
    SELECT RAISE(ABORT, 'a row changes account only when nothing was created on the account it leaves, and with a new trxid (and never a row pinned to its account)');
  END;
  -- A trxid a row left on an account stays used (found by the simulator: an edited re-drop took a
  -- moved row's old trxid, and the account it had left bought it again): kept here by the move,
  -- and neither a new row nor a move may take it. The message names rows.trxid, as the unique
  -- index's does, so the loader refuses such a row as it refuses any used trxid.
  CREATE TABLE left_trxids (trxid TEXT PRIMARY KEY, batch_id TEXT NOT NULL, idx INTEGER NOT NULL, account TEXT NOT NULL);
  CREATE TRIGGER rows_keep_left_trxid AFTER UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND OLD.trxid IS NOT NULL BEGIN
    INSERT INTO left_trxids (trxid, batch_id, idx, account) VALUES (OLD.trxid, OLD.batch_id, OLD.idx, OLD.account);
  END;
  -- Trxids are compared in any letter case, as the loader does inside a file and the history check
  -- does against the API (an adversarial review: a re-drop writing SHOP-1001 as shop-1001 was bought
  -- again): a new row, or a move, may not take a trxid a row has or left, in any case.
  CREATE INDEX rows_trxid_folded ON rows (lower(trxid)) WHERE trxid IS NOT NULL;
  CREATE INDEX left_trxids_folded ON left_trxids (lower(trxid));
  CREATE TRIGGER rows_trxid_not_left_insert BEFORE INSERT ON rows
    WHEN NEW.trxid IS NOT NULL AND (EXISTS (SELECT 1 FROM left_trxids WHERE lower(trxid) = lower(NEW.trxid))
      OR EXISTS (SELECT 1 FROM rows WHERE lower(trxid) = lower(NEW.trxid) AND trxid IS NOT NULL)) BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: rows.trxid (used before, in some letter case, or left on another account)');
  END;
  CREATE TRIGGER rows_trxid_not_left_update BEFORE UPDATE OF trxid ON rows
    WHEN NEW.trxid IS NOT NULL AND NEW.trxid IS NOT OLD.trxid AND (EXISTS (SELECT 1 FROM left_trxids WHERE lower(trxid) = lower(NEW.trxid))
      OR EXISTS (SELECT 1 FROM rows WHERE lower(trxid) = lower(NEW.trxid) AND trxid IS NOT NULL AND NOT (batch_id = OLD.batch_id AND idx = OLD.idx))) BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: rows.trxid (used before, in some letter case, or left on another account)');
  END;
  `,
  // The order API (docs/order-api.md). API orders are rows like any file's, in one batch per UTC day
  // (batches.api_day, unique: two processes accepting the first order of a day make one batch). A
  // row of an API order carries the hash of the body it was accepted with (rows.api_body_hash): the
  // same trxid with the same body is the same order, any other body a conflict; the trxid itself is
  // unique by the indexes and triggers above, whichever code path inserts.
  //
  // Invariants the store enforces here (store/invariants.ts):
  //  - an API order is inserted only into an `open` batch of its own day (rows_api_insert_open), and
  //    an API batch is never marked done while one of its rows is live (batches_api_done_settled):
  //    a row appended as the day's batch finished would be stored in a batch nobody sends from;
  //  - every change of an API order's public status is recorded in order_events, in the very
  //    transaction that changes the row (rows_api_event_*): the change feed and the webhooks read
  //    this one table, so no code path can change an order and forget to tell the shop. The public
  //    status is a function of the row's state (order_public_status below, as SQL); events are
  //    only ever appended, their ids are the feed's cursor (one writer at a time: ids commit in order).
  //  - API tokens are stored as SHA-256 hashes (api_tokens.hash); the token itself is shown once.
  `
  ALTER TABLE batches ADD COLUMN api_day TEXT;
  CREATE UNIQUE INDEX batches_api_day ON batches (api_day) WHERE api_day IS NOT NULL;
  ALTER TABLE rows ADD COLUMN api_body_hash TEXT;
  ALTER TABLE rows ADD COLUMN callback_url TEXT;
  ALTER TABLE rows ADD COLUMN created_at INTEGER;
  CREATE TRIGGER rows_api_insert_open BEFORE INSERT ON rows
    WHEN NEW.api_body_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM batches WHERE id = NEW.batch_id AND state = 'open' AND api_day IS NOT NULL) BEGIN
    SELECT RAISE(ABORT, 'an API order is stored only in the open API batch of its day');
  END;
  CREATE TRIGGER batches_api_done_settled BEFORE UPDATE OF state ON batches
    WHEN NEW.state = 'done' AND NEW.api_day IS NOT NULL AND EXISTS (SELECT 1 FROM rows WHERE batch_id = NEW.id
      AND state IN ('pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen')) BEGIN
    SELECT RAISE(ABORT, 'an API batch is done only when every order in it has ended');
  END;
  CREATE TABLE order_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    batch_id        TEXT NOT NULL,
    idx             INTEGER NOT NULL,
    trxid           TEXT NOT NULL,
    type            TEXT NOT NULL,
    status          TEXT NOT NULL,
    row_state       TEXT NOT NULL,
    at              INTEGER NOT NULL,
    delivery        TEXT NOT NULL DEFAULT 'pending' CHECK (delivery IN ('pending', 'delivered', 'failed', 'none')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    last_status     INTEGER,
    delivered_at    INTEGER,
    url             TEXT
  );
  CREATE INDEX order_events_row ON order_events (batch_id, idx, id);
  CREATE INDEX order_events_due ON order_events (next_attempt_at, id) WHERE delivery = 'pending';
  CREATE INDEX order_events_trxid ON order_events (lower(trxid), id);
  CREATE INDEX order_events_failed ON order_events (id) WHERE delivery = 'failed';
  CREATE TRIGGER rows_api_event_insert AFTER INSERT ON rows WHEN NEW.api_body_hash IS NOT NULL BEGIN
    INSERT INTO order_events (batch_id, idx, trxid, type, status, row_state, at)
      VALUES (NEW.batch_id, NEW.idx, NEW.trxid, 'order.accepted', 'accepted', NEW.state, NEW.updated_at);
  END;
  CREATE TRIGGER rows_api_event_update AFTER UPDATE OF state ON rows
    WHEN NEW.api_body_hash IS NOT NULL AND
      (CASE WHEN OLD.state = 'pending' THEN 'accepted'
            WHEN OLD.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN OLD.state IN ('processing', 'unseen') THEN 'processing'
            WHEN OLD.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE OLD.state END)
      IS NOT
      (CASE WHEN NEW.state = 'pending' THEN 'accepted'
            WHEN NEW.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END) BEGIN
    INSERT INTO order_events (batch_id, idx, trxid, type, status, row_state, at)
      SELECT NEW.batch_id, NEW.idx, NEW.trxid,
        CASE WHEN OLD.state = 'review' THEN 'order.resolved' ELSE 'order.' || s END, s, NEW.state, NEW.updated_at
      FROM (SELECT CASE WHEN NEW.state = 'pending' THEN 'accepted'
            WHEN NEW.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END AS s);
  END;
  CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    scopes       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
  );
  `,
  // Every identity declared once (issue 29, src/kernel/identity.ts).
  //
  // trxid: "the same trxid" was SQLite's lower(), which folds ASCII only, while the loader folded
  // with JavaScript: ÄB-7 and äb-7 were two purchases (an adversarial review: two charges). The
  // folded indexes and the triggers that keep a trxid to one row now use trxid_fold(), the one fold,
  // registered on every connection (store/db.ts). ASCII folds as lower() did, so no stored ASCII
  // trxid changes meaning. Two rows already stored whose trxids only the new fold calls the same
  // (bought twice before this version) are both kept: the indexes are not unique, so this migration
  // never fails on a home; the triggers refuse any new row or move onto either, and a look-up by
  // trxid prefers the exact spelling (row-reads.ts, order-reads.ts).
  //
  // account: an account is its endpoint and key, not its name. Every send records on its row the
  // origin it went to and a fingerprint of the key (sent_origin, sent_key_fp: never the key); the
  // store's intent to send (rows.ts markSending) refuses a row in doubt whose record names another
  // account identity, and the start refuses an accounts file that re-points an account holding
  // unsettled rows (store/account-identity.ts). account_identities: the identity each configured
  // name had at its last start, so a renamed account (same origin and key, new name) is found and
  // its rows follow it (account_renames: the permission the rows_account_moves trigger reads, and
  // the audit trail). A move to another account (proven nothing created) forgets the record: the
  // row is sent afresh there. A rename keeps the trxid, so it leaves none behind (left_trxids).
  `
  DROP INDEX rows_trxid_folded;
  DROP INDEX left_trxids_folded;
  DROP INDEX order_events_trxid;
  DROP TRIGGER rows_trxid_not_left_insert;
  DROP TRIGGER rows_trxid_not_left_update;
  CREATE INDEX rows_trxid_folded ON rows (trxid_fold(trxid)) WHERE trxid IS NOT NULL;
  CREATE INDEX left_trxids_folded ON left_trxids (trxid_fold(trxid));
  CREATE INDEX order_events_trxid ON order_events (trxid_fold(trxid), id);
  CREATE TRIGGER rows_trxid_not_left_insert BEFORE INSERT ON rows
    WHEN NEW.trxid IS NOT NULL AND (EXISTS (SELECT 1 FROM left_trxids WHERE trxid_fold(trxid) = trxid_fold(NEW.trxid))
      OR EXISTS (SELECT 1 FROM rows WHERE trxid_fold(trxid) = trxid_fold(NEW.trxid) AND trxid IS NOT NULL)) BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: rows.trxid (used before, in some letter case or spelling, or left on another account)');
  END;
  CREATE TRIGGER rows_trxid_not_left_update BEFORE UPDATE OF trxid ON rows
    WHEN NEW.trxid IS NOT NULL AND NEW.trxid IS NOT OLD.trxid AND (EXISTS (SELECT 1 FROM left_trxids WHERE trxid_fold(trxid) = trxid_fold(NEW.trxid))
      OR EXISTS (SELECT 1 FROM rows WHERE trxid_fold(trxid) = trxid_fold(NEW.trxid) AND trxid IS NOT NULL AND NOT (batch_id = OLD.batch_id AND idx = OLD.idx))) BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: rows.trxid (used before, in some letter case or spelling, or left on another account)');
  END;

  ALTER TABLE rows ADD COLUMN sent_origin TEXT;
  ALTER TABLE rows ADD COLUMN sent_key_fp TEXT;
  CREATE TABLE account_identities (name TEXT PRIMARY KEY, origin TEXT NOT NULL, key_fp TEXT NOT NULL, since INTEGER NOT NULL);
  CREATE TABLE account_renames (from_name TEXT NOT NULL, to_name TEXT NOT NULL, origin TEXT NOT NULL, key_fp TEXT NOT NULL, at INTEGER NOT NULL, rows INTEGER NOT NULL, PRIMARY KEY (from_name, to_name, at));
  DROP TRIGGER rows_account_moves;
  CREATE TRIGGER rows_account_moves BEFORE UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND NOT (
      NEW.state = 'pending' AND OLD.state IN ('pending', 'sending', 'verifying') AND OLD.order_id IS NULL
      AND NEW.order_id IS NULL AND NEW.trxid IS NOT OLD.trxid AND NEW.trxid IS NOT NULL AND OLD.pinned = 0
    ) AND NOT (
      NEW.trxid IS OLD.trxid AND NEW.order_id IS OLD.order_id AND NEW.state IS OLD.state
      AND EXISTS (SELECT 1 FROM account_renames WHERE from_name = OLD.account AND to_name = NEW.account)
    ) BEGIN
    SELECT RAISE(ABORT, 'a row changes account only when nothing was created on the account it leaves, and with a new trxid (and never a row pinned to its account), or by a recorded rename of its account');
  END;
  DROP TRIGGER rows_keep_left_trxid;
  CREATE TRIGGER rows_keep_left_trxid AFTER UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND OLD.trxid IS NOT NULL AND NEW.trxid IS NOT OLD.trxid BEGIN
    INSERT INTO left_trxids (trxid, batch_id, idx, account) VALUES (OLD.trxid, OLD.batch_id, OLD.idx, OLD.account);
  END;
  CREATE TRIGGER rows_move_forgets_sends AFTER UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND NEW.trxid IS NOT OLD.trxid AND NEW.sent_origin IS NOT NULL BEGIN
    UPDATE rows SET sent_origin = NULL, sent_key_fp = NULL WHERE batch_id = NEW.batch_id AND idx = NEW.idx;
  END;
  `,
  // 14. An API order cancelled before it was sent: the cancel clears the row's trxid, and the
  //     event trigger wrote that NULL into order_events.trxid (NOT NULL), so topup cancel and then
  //     every daemon start failed on the day's API batch (found by the adversarial review, adv9).
  //     The event keeps the trxid the shop knows the order by.
  `
  DROP TRIGGER rows_api_event_update;
  CREATE TRIGGER rows_api_event_update AFTER UPDATE OF state ON rows
    WHEN NEW.api_body_hash IS NOT NULL AND
      (CASE WHEN OLD.state = 'pending' THEN 'accepted'
            WHEN OLD.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN OLD.state IN ('processing', 'unseen') THEN 'processing'
            WHEN OLD.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE OLD.state END)
      IS NOT
      (CASE WHEN NEW.state = 'pending' THEN 'accepted'
            WHEN NEW.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END) BEGIN
    INSERT INTO order_events (batch_id, idx, trxid, type, status, row_state, at)
      SELECT NEW.batch_id, NEW.idx, coalesce(NEW.trxid, OLD.trxid),
        CASE WHEN OLD.state = 'review' THEN 'order.resolved' ELSE 'order.' || s END, s, NEW.state, NEW.updated_at
      FROM (SELECT CASE WHEN NEW.state = 'pending' THEN 'accepted'
            WHEN NEW.state IN ('sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END AS s);
  END;
  `,
  // 15. A batch the balance cannot cover may run the part it covers, on the operator's word
  //     (topup run-covered, the console): run_covered is that word. The lease holder's funds
  //     judgement then skips the rows the balance does not cover, in the transaction that funds the
  //     rest (account/funds.ts), and a retry buys them later (ops/retry.ts).
  `
  ALTER TABLE batches ADD COLUMN run_covered INTEGER NOT NULL DEFAULT 0;
  `,
  // 16. Player-name checks (claim/player-checks.ts, docs/player-checks.md). player_checks is the
  //     cache: the last answer that settled a player (found with its name, or not found) per
  //     (check, player fields), with its time. player_check_calls is every check sent, with its
  //     own trxid (the check space: kernel/identity.ts) and the price the reseller set, for the
  //     money summaries. rows.player_name is the name a row was stored with.
  `
  CREATE TABLE player_checks (
    kind TEXT NOT NULL, player TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('found', 'not-found')),
    name TEXT, checked_at INTEGER NOT NULL, trxid TEXT NOT NULL,
    PRIMARY KEY (kind, player));
  CREATE TABLE player_check_calls (
    trxid TEXT PRIMARY KEY CHECK (substr(trxid, 1, 5) = '-CHK-'),
    kind TEXT NOT NULL, player TEXT NOT NULL, account TEXT NOT NULL, batch_id TEXT,
    outcome TEXT NOT NULL, said TEXT, at INTEGER NOT NULL, price_usd REAL NOT NULL);
  CREATE INDEX player_check_calls_batch ON player_check_calls (batch_id) WHERE batch_id IS NOT NULL;
  ALTER TABLE rows ADD COLUMN player_name TEXT;
  `,
  // 17. The console's pictures (issue 33): what a reseller asks every morning (spend per day by game and
  // account, outcomes, failure classes, time to completion, margin) answered from roll-ups, never a
  // scan of millions of rows. Each ended row (a final state) counts once in daily_rows, on the UTC
  // day it ended (updated_at), by game (slug), account, outcome (its state; `cancelled` with the
  // supplier's refund is `refunded`) and answer class (reject_code of a failure); a completed row's
  // time from its first send to its end counts in daily_latency, in buckets of 1/8 of e (about
  // 13 %: bucket b holds times near 100 ms × e^(b/8)). Kept by triggers, in the very transaction that
  // ends, reopens, moves or deletes a row, whoever writes: subtract what the row counted before,
  // add what it counts now. So a roll-up is always the sum over the rows as they are (a test holds
  // them equal), money in whole cents (integers never drift). Money by the rules of store/cost.ts
  // (SPENT): completed, or cancelled without a refund, at amount_usd else expected_usd.
  //
  // rows.sale_usd: what the reseller charged their customer (a file's sale-price column, or an API
  // order's meta.salePriceUsd: intake/sale-price.ts), for revenue and margin of completed rows.
  // balance_readings: each account's balance as read (account/account.ts records each read, at most
  // one a minute unless it changed), for balance over time and top-ups. rate_minutes: per account
  // and wall-clock minute, calls admitted and how long order calls (POST /orders) waited for the
  // rate budget (account/rate-gate.ts, in the admission's own transaction). Both pruned after
  // 40 days (store/upkeep.ts).
  `
  ALTER TABLE rows ADD COLUMN sale_usd REAL;
  CREATE TABLE daily_rows (
    day             TEXT NOT NULL,
    game            TEXT NOT NULL,
    account         TEXT NOT NULL,
    outcome         TEXT NOT NULL,
    class           TEXT NOT NULL,
    n               INTEGER NOT NULL,
    spent_cents     INTEGER NOT NULL,
    refunded_cents  INTEGER NOT NULL,
    sale_cents      INTEGER NOT NULL,
    sale_n          INTEGER NOT NULL,
    sale_cost_cents INTEGER NOT NULL,
    PRIMARY KEY (day, game, account, outcome, class)
  ) WITHOUT ROWID;
  CREATE TABLE daily_latency (
    day    TEXT NOT NULL,
    game   TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (day, game, bucket)
  ) WITHOUT ROWID;
  INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
    SELECT strftime('%Y-%m-%d', rows.updated_at / 1000, 'unixepoch'), coalesce(rows.slug, ''), rows.account, CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN 'refunded' ELSE rows.state END, CASE WHEN rows.state IN ('rejected', 'cancelled', 'review') THEN coalesce(rows.reject_code, '') ELSE '' END, count(*),
      sum(CASE WHEN rows.state = 'completed' OR (rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 0) THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sum(CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), 0, 0, 0
    FROM rows WHERE state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') GROUP BY 1, 2, 3, 4, 5;
  INSERT INTO daily_latency (day, game, bucket, n)
    SELECT strftime('%Y-%m-%d', rows.updated_at / 1000, 'unixepoch'), coalesce(rows.slug, ''), CAST(round(8 * ln(max(rows.updated_at - rows.first_sent_at, 100) / 100.0)) AS INTEGER), count(*)
    FROM rows WHERE state = 'completed' AND first_sent_at IS NOT NULL GROUP BY 1, 2, 3;
  CREATE TRIGGER rows_daily_insert AFTER INSERT ON rows WHEN NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'cancelled', 'review') THEN coalesce(NEW.reject_code, '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER rows_daily_delete AFTER DELETE ON rows WHEN OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'cancelled', 'review') THEN coalesce(OLD.reject_code, '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
  END;
  CREATE TRIGGER rows_daily_update AFTER UPDATE OF state, updated_at, amount_usd, expected_usd, refunded, reject_code, slug, account, sale_usd, first_sent_at ON rows
    WHEN (OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') OR NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')) AND (OLD.state IS NOT NEW.state OR OLD.updated_at IS NOT NEW.updated_at OR OLD.amount_usd IS NOT NEW.amount_usd OR OLD.expected_usd IS NOT NEW.expected_usd OR OLD.refunded IS NOT NEW.refunded OR OLD.reject_code IS NOT NEW.reject_code OR OLD.slug IS NOT NEW.slug OR OLD.account IS NOT NEW.account OR OLD.sale_usd IS NOT NEW.sale_usd OR OLD.first_sent_at IS NOT NEW.first_sent_at) BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'cancelled', 'review') THEN coalesce(OLD.reject_code, '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'cancelled', 'review') THEN coalesce(NEW.reject_code, '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
  CREATE TABLE balance_readings (
    account TEXT NOT NULL,
    at      INTEGER NOT NULL,
    usd     REAL NOT NULL,
    -- How much it rose since the account's reading before (a top-up, a refund); NULL when it did not.
    rise    REAL,
    PRIMARY KEY (account, at)
  ) WITHOUT ROWID;
  CREATE TABLE rate_minutes (
    account       TEXT NOT NULL,
    minute        INTEGER NOT NULL,
    calls         INTEGER NOT NULL,
    orders        INTEGER NOT NULL,
    order_wait_ms INTEGER NOT NULL,
    order_wait_max_ms INTEGER NOT NULL,
    PRIMARY KEY (account, minute)
  ) WITHOUT ROWID;
  `,
  // 18. The order API's player checks (POST /api/v1/players/check, orders/player-check-desk.ts): a
  //     repeat of a check within its short window is answered from the last call for that player,
  //     looked up by (kind, player, at), not by a scan of every check ever sent.
  `
  CREATE INDEX player_check_calls_player ON player_check_calls (kind, player, at);
  `,
  // 19. The failure picture by the supplier's own code (issue 30, from the console trial): a row the
  //     supplier cancelled keeps the supplier's error on the order (INVALID PLAYER …) in rows.error,
  //     not in reject_code, so its class in daily_rows was '' and the picture said only "cancelled
  //     by the supplier". Its class is now its reject_code, else its error (trimmed, at most 80
  //     characters): the triggers of migration 17 again with that class (and error among the
  //     columns that move a row's count), and daily_rows rebuilt from the rows under the new rule.
  `
  DROP TRIGGER rows_daily_insert;
  DROP TRIGGER rows_daily_delete;
  DROP TRIGGER rows_daily_update;
  CREATE TRIGGER rows_daily_insert AFTER INSERT ON rows WHEN NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'review') THEN coalesce(NEW.reject_code, '') WHEN NEW.state = 'cancelled' THEN coalesce(NEW.reject_code, nullif(substr(trim(NEW.error), 1, 80), ''), '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER rows_daily_delete AFTER DELETE ON rows WHEN OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'review') THEN coalesce(OLD.reject_code, '') WHEN OLD.state = 'cancelled' THEN coalesce(OLD.reject_code, nullif(substr(trim(OLD.error), 1, 80), ''), '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
  END;
  CREATE TRIGGER rows_daily_update AFTER UPDATE OF state, updated_at, amount_usd, expected_usd, refunded, reject_code, error, slug, account, sale_usd, first_sent_at ON rows
    WHEN (OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') OR NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')) AND (OLD.state IS NOT NEW.state OR OLD.updated_at IS NOT NEW.updated_at OR OLD.amount_usd IS NOT NEW.amount_usd OR OLD.expected_usd IS NOT NEW.expected_usd OR OLD.refunded IS NOT NEW.refunded OR OLD.reject_code IS NOT NEW.reject_code OR OLD.error IS NOT NEW.error OR OLD.slug IS NOT NEW.slug OR OLD.account IS NOT NEW.account OR OLD.sale_usd IS NOT NEW.sale_usd OR OLD.first_sent_at IS NOT NEW.first_sent_at) BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'review') THEN coalesce(OLD.reject_code, '') WHEN OLD.state = 'cancelled' THEN coalesce(OLD.reject_code, nullif(substr(trim(OLD.error), 1, 80), ''), '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = strftime('%Y-%m-%d', OLD.updated_at / 1000, 'unixepoch') AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'review') THEN coalesce(NEW.reject_code, '') WHEN NEW.state = 'cancelled' THEN coalesce(NEW.reject_code, nullif(substr(trim(NEW.error), 1, 80), ''), '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT strftime('%Y-%m-%d', NEW.updated_at / 1000, 'unixepoch'), coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
  DELETE FROM daily_rows;
  INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
    SELECT day, game, account, outcome, class, count(*), sum(spent), sum(refunded), sum(sale), sum(sale_n), sum(sale_cost) FROM (
      SELECT strftime('%Y-%m-%d', rows.updated_at / 1000, 'unixepoch') AS day, coalesce(rows.slug, '') AS game, rows.account AS account,
        CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN 'refunded' ELSE rows.state END AS outcome,
        CASE WHEN rows.state IN ('rejected', 'review') THEN coalesce(rows.reject_code, '') WHEN rows.state = 'cancelled' THEN coalesce(rows.reject_code, nullif(substr(trim(rows.error), 1, 80), ''), '') ELSE '' END AS class,
        CASE WHEN rows.state = 'completed' OR (rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 0) THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS spent,
        CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS refunded,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN CAST(round(rows.sale_usd * 100) AS INTEGER) ELSE 0 END AS sale,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN 1 ELSE 0 END AS sale_n,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS sale_cost
      FROM rows WHERE rows.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
    ) GROUP BY day, game, account, outcome, class;
`,
  // 20. Accounts taken out of accounts.toml (store/account-identity.ts): account_identities keeps
  //     every account a process with keys ever ran with, and removed_at says since when it has not
  //     been in the file (NULL: it was at the last start). After a restore, a file claimed in the
  //     window is looked up at every account that may have bought its rows after the copy, those
  //     no longer configured included (store/backup.ts markClaimInRestoreWindow): an adversarial
  //     review took `second` out after a restore, dropped the day's file again, and both rows bought
  //     on `second` by a failover were bought again on `main`. Rows of earlier versions: NULL (as
  //     if configured at the last start; the next start sets it for those that are not).
  `
  ALTER TABLE account_identities ADD COLUMN removed_at INTEGER;
  `,
  // 21. TOPUP_PLAYER_CHECK_SKIP_DAYS for the order API (orders/desk.ts): whether one player got a
  //     completed top-up recently is asked per order, so it is looked up by the player's id among
  //     completed rows, not by a scan of every completed row. json_valid keeps a row whose request
  //     is not JSON (none should be) from failing the write that completes it.
  `
  CREATE INDEX rows_completed_player ON rows (json_extract(CASE WHEN json_valid(request_json) THEN request_json END, '$.userId'), updated_at)
    WHERE state = 'completed';
  `,
  // 22. TOPUP_TIME_ZONE (issue 30): the daily roll-ups (daily_rows, daily_latency) are keyed by the day
  //     in the store's roll-up zone, not the UTC day. The triggers know no IANA zones, so the zone is
  //     kept as its list of offset changes (rollup_offsets: from this instant on, local = UTC + offset;
  //     kernel/time-zone.ts computes it from Node's own zone data, exact for DST zones and for
  //     +05:30 / +05:45 ones) and the triggers of migration 19 look the offset up by updated_at.
  //     rollup_zone names the zone. Created as UTC, one offset of 0: the roll-up as it stands is
  //     already right for it, so nothing is rebuilt here. A daemon started with another zone
  //     (store/rollup-zone.ts) replaces the offsets and rebuilds both roll-ups from the rows in one
  //     transaction, so rows that ended before the change are counted on their day in the new zone,
  //     and a trigger never subtracts a row from a day other than the one it added it to.
  `
  CREATE TABLE rollup_zone (id INTEGER PRIMARY KEY CHECK (id = 1), zone TEXT NOT NULL, changed_at INTEGER);
  INSERT INTO rollup_zone (id, zone, changed_at) VALUES (1, 'UTC', NULL);
  CREATE TABLE rollup_offsets (from_ms INTEGER PRIMARY KEY, offset_ms INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO rollup_offsets (from_ms, offset_ms) VALUES (-8640000000000000, 0);
  DROP TRIGGER rows_daily_insert;
  DROP TRIGGER rows_daily_delete;
  DROP TRIGGER rows_daily_update;
  ${dailyRollupTriggers()}`,
  // 23. One index on order ids instead of two (issue 34, the bench's scale part): rows_order_id
  //     (account, order_id) and rows_order_lookup (order_id) both took an entry for every order
  //     placed, one more page written per answer that carries an order. Every look-up is by
  //     order_id, alone or with the account (store/row-lookups.ts), which (order_id, account)
  //     serves both ways; unique over the same pair, so the same orders are refused.
  `
  DROP INDEX rows_order_lookup;
  DROP INDEX rows_order_id;
  CREATE UNIQUE INDEX rows_order_id ON rows (order_id, account) WHERE order_id IS NOT NULL;
  `,
  // 24. Player checks made durable before they are sent (issue 31's adversarial review): a check is
  //     recorded `sent` (it may be charged) before its request leaves and its answer replaces that,
  //     so a kill between the two leaves "in doubt, may have cost X", never nothing. `charged` says
  //     what the supplier may have taken: `yes` (the check ran: found, not found), `maybe` (no
  //     answer, or one that does not say it did not run), `no` (a 429, a refusal of the key, the
  //     account, maintenance: the supplier did not run it, so price_usd is 0). One check of a
  //     player in flight at a time, for every process on this store: the partial unique index.
  //     Rows of earlier versions: settled answers `yes`; a 429 `no` at 0 (it was counted at the
  //     tariff); the rest `maybe` at the tariff (an old refusal cannot be told apart).
  `
  ALTER TABLE player_check_calls ADD COLUMN charged TEXT NOT NULL DEFAULT 'maybe' CHECK (charged IN ('yes', 'maybe', 'no'));
  UPDATE player_check_calls SET charged = 'yes' WHERE outcome IN ('found', 'not-found');
  UPDATE player_check_calls SET charged = 'no', price_usd = 0 WHERE outcome = 'rate-limited';
  CREATE UNIQUE INDEX player_check_calls_flying ON player_check_calls (kind, player) WHERE outcome = 'sent';
  `,
  // 25. An API order once sent stays `sent` while it waits to be sent again (orders/types.ts
  //     publicStatus, docs/order-api.md): a plainly refused send (maintenance) took it back to
  //     `accepted`, and every order probe to `sent` again, so a shop's webhook receiver got an
  //     `order.accepted` / `order.sent` pair per probe (a new-user trial: 17 events in 30 s for one
  //     order). `accepted` is left only for an order no request has left for (first_sent_at NULL:
  //     a failover move clears it, the new account has not been sent it).
  `
  DROP TRIGGER rows_api_event_update;
  CREATE TRIGGER rows_api_event_update AFTER UPDATE OF state ON rows
    WHEN NEW.api_body_hash IS NOT NULL AND
      (CASE WHEN OLD.state = 'pending' AND OLD.first_sent_at IS NULL THEN 'accepted'
            WHEN OLD.state IN ('pending', 'sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN OLD.state IN ('processing', 'unseen') THEN 'processing'
            WHEN OLD.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE OLD.state END)
      IS NOT
      (CASE WHEN NEW.state = 'pending' AND NEW.first_sent_at IS NULL THEN 'accepted'
            WHEN NEW.state IN ('pending', 'sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END) BEGIN
    INSERT INTO order_events (batch_id, idx, trxid, type, status, row_state, at)
      SELECT NEW.batch_id, NEW.idx, coalesce(NEW.trxid, OLD.trxid),
        CASE WHEN OLD.state = 'review' THEN 'order.resolved' ELSE 'order.' || s END, s, NEW.state, NEW.updated_at
      FROM (SELECT CASE WHEN NEW.state = 'pending' AND NEW.first_sent_at IS NULL THEN 'accepted'
            WHEN NEW.state IN ('pending', 'sending', 'resending', 'verifying', 'searching') THEN 'sent'
            WHEN NEW.state IN ('processing', 'unseen') THEN 'processing'
            WHEN NEW.state IN ('invalid', 'rejected', 'skipped') THEN 'rejected'
            ELSE NEW.state END AS s);
  END;
  `,
  // 26. rows.repeat_of: the purchase a row skipped as a repeat stands for (JSON {"batchId","idx"}),
  //     set in the transaction that skips it (rows.skipAsRepeat, or the insert of a row whose trxid
  //     an earlier row bought). The result file names that purchase's trxid and order id from it:
  //     the reseller finds the purchase the row repeats (a new-user trial: both cells were empty).
  `
  ALTER TABLE rows ADD COLUMN repeat_of TEXT;
  `,
  // 27. A row in doubt on its account (`resending`, `searching`) may change account in one case:
  //     the restore lookup (ops/restore-reconcile.ts decide) proved its own account's history,
  //     read back to before the copy with every order's trxid, holds nothing under its trxid, and
  //     found it bought once on another under the trxid a move gives it (edge restored-moved). Only
  //     while that lookup holds the row, exactly as the intent's guard refuses to send it
  //     (rows.markSending: the reconcile marker, its batch's claim mark, its order mark): the
  //     sender, which would read a refusal as "nothing created", can never move a row in doubt
  //     (stop 38: a hand copy caught the paused account's probe `sending`, the first start took
  //     the batch over (`resending`), and a row bought once on `second` went to review).
  `
  DROP TRIGGER rows_account_moves;
  CREATE TRIGGER rows_account_moves BEFORE UPDATE OF account ON rows
    WHEN OLD.account IS NOT NEW.account AND NOT (
      NEW.state = 'pending' AND OLD.order_id IS NULL
      AND NEW.order_id IS NULL AND NEW.trxid IS NOT OLD.trxid AND NEW.trxid IS NOT NULL AND OLD.pinned = 0
      AND (OLD.state IN ('pending', 'sending', 'verifying') OR (OLD.state IN ('resending', 'searching') AND EXISTS (
        SELECT 1 FROM meta WHERE key IN ('restore.reconcile', 'restore.claim:' || OLD.batch_id, 'restore.order:' || OLD.batch_id || ':' || OLD.idx))))
    ) AND NOT (
      NEW.trxid IS OLD.trxid AND NEW.order_id IS OLD.order_id AND NEW.state IS OLD.state
      AND EXISTS (SELECT 1 FROM account_renames WHERE from_name = OLD.account AND to_name = NEW.account)
    ) BEGIN
    SELECT RAISE(ABORT, 'a row changes account only when nothing was created on the account it leaves, and with a new trxid (and never a row pinned to its account; a row in doubt only by the restore lookup that proved it), or by a recorded rename of its account');
  END;
  `,
];

/**
 * The local day of the instant `ms` (an SQL expression of wall ms) in the store's roll-up zone
 * (migration 22): the offset in force at that instant from rollup_offsets, then the UTC date of
 * the shifted instant. One indexed look-up per row.
 */
export function zoneDaySql(ms: string): string {
  return `strftime('%Y-%m-%d', (${ms} + coalesce((SELECT offset_ms FROM rollup_offsets WHERE from_ms <= ${ms} ORDER BY from_ms DESC LIMIT 1), 0)) / 1000, 'unixepoch')`;
}

/** Migration 19's triggers of the daily roll-ups, with the day taken in the roll-up zone (migration 22). */
function dailyRollupTriggers(): string {
  const day = zoneDaySql;
  return `
  CREATE TRIGGER rows_daily_insert AFTER INSERT ON rows WHEN NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT ${day('NEW.updated_at')}, coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'review') THEN coalesce(NEW.reject_code, '') WHEN NEW.state = 'cancelled' THEN coalesce(NEW.reject_code, nullif(substr(trim(NEW.error), 1, 80), ''), '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT ${day('NEW.updated_at')}, coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER rows_daily_delete AFTER DELETE ON rows WHEN OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = ${day('OLD.updated_at')} AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'review') THEN coalesce(OLD.reject_code, '') WHEN OLD.state = 'cancelled' THEN coalesce(OLD.reject_code, nullif(substr(trim(OLD.error), 1, 80), ''), '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = ${day('OLD.updated_at')} AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
  END;
  CREATE TRIGGER rows_daily_update AFTER UPDATE OF state, updated_at, amount_usd, expected_usd, refunded, reject_code, error, slug, account, sale_usd, first_sent_at ON rows
    WHEN (OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') OR NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')) AND (OLD.state IS NOT NEW.state OR OLD.updated_at IS NOT NEW.updated_at OR OLD.amount_usd IS NOT NEW.amount_usd OR OLD.expected_usd IS NOT NEW.expected_usd OR OLD.refunded IS NOT NEW.refunded OR OLD.reject_code IS NOT NEW.reject_code OR OLD.error IS NOT NEW.error OR OLD.slug IS NOT NEW.slug OR OLD.account IS NOT NEW.account OR OLD.sale_usd IS NOT NEW.sale_usd OR OLD.first_sent_at IS NOT NEW.first_sent_at) BEGIN
    UPDATE daily_rows SET n = n - 1, spent_cents = spent_cents - (CASE WHEN OLD.state = 'completed' OR (OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 0) THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END),
        refunded_cents = refunded_cents - (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END), sale_cents = sale_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(OLD.sale_usd * 100) AS INTEGER) ELSE 0 END),
        sale_n = sale_n - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN 1 ELSE 0 END), sale_cost_cents = sale_cost_cents - (CASE WHEN OLD.state = 'completed' AND OLD.sale_usd IS NOT NULL THEN CAST(round(coalesce(OLD.amount_usd, OLD.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END)
      WHERE OLD.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review') AND day = ${day('OLD.updated_at')} AND game = coalesce(OLD.slug, '') AND account = OLD.account
        AND outcome = (CASE WHEN OLD.state = 'cancelled' AND coalesce(OLD.refunded, 0) = 1 THEN 'refunded' ELSE OLD.state END) AND class = (CASE WHEN OLD.state IN ('rejected', 'review') THEN coalesce(OLD.reject_code, '') WHEN OLD.state = 'cancelled' THEN coalesce(OLD.reject_code, nullif(substr(trim(OLD.error), 1, 80), ''), '') ELSE '' END);
    UPDATE daily_latency SET n = n - 1
      WHERE OLD.state = 'completed' AND OLD.first_sent_at IS NOT NULL AND day = ${day('OLD.updated_at')} AND game = coalesce(OLD.slug, '') AND bucket = CAST(round(8 * ln(max(OLD.updated_at - OLD.first_sent_at, 100) / 100.0)) AS INTEGER);
    INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
      SELECT ${day('NEW.updated_at')}, coalesce(NEW.slug, ''), NEW.account,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN 'refunded' ELSE NEW.state END,
        CASE WHEN NEW.state IN ('rejected', 'review') THEN coalesce(NEW.reject_code, '') WHEN NEW.state = 'cancelled' THEN coalesce(NEW.reject_code, nullif(substr(trim(NEW.error), 1, 80), ''), '') ELSE '' END,
        1, CASE WHEN NEW.state = 'completed' OR (NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 0) THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'cancelled' AND coalesce(NEW.refunded, 0) = 1 THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END,
        CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(NEW.sale_usd * 100) AS INTEGER) ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN 1 ELSE 0 END, CASE WHEN NEW.state = 'completed' AND NEW.sale_usd IS NOT NULL THEN CAST(round(coalesce(NEW.amount_usd, NEW.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END
      WHERE NEW.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
      ON CONFLICT (day, game, account, outcome, class) DO UPDATE SET n = n + 1, spent_cents = spent_cents + excluded.spent_cents,
        refunded_cents = refunded_cents + excluded.refunded_cents, sale_cents = sale_cents + excluded.sale_cents,
        sale_n = sale_n + excluded.sale_n, sale_cost_cents = sale_cost_cents + excluded.sale_cost_cents;
    INSERT INTO daily_latency (day, game, bucket, n)
      SELECT ${day('NEW.updated_at')}, coalesce(NEW.slug, ''), CAST(round(8 * ln(max(NEW.updated_at - NEW.first_sent_at, 100) / 100.0)) AS INTEGER), 1
      WHERE NEW.state = 'completed' AND NEW.first_sent_at IS NOT NULL
      ON CONFLICT (day, game, bucket) DO UPDATE SET n = n + 1;
  END;
`;
}

/**
 * Both daily roll-ups rebuilt from the rows, each row on its day in the roll-up zone: run by
 * store/rollup-zone.ts in the transaction that changes the zone.
 */
export function rebuildDailyRollupsSql(): string {
  const day = zoneDaySql;
  return `
  DELETE FROM daily_rows;
  INSERT INTO daily_rows (day, game, account, outcome, class, n, spent_cents, refunded_cents, sale_cents, sale_n, sale_cost_cents)
    SELECT day, game, account, outcome, class, count(*), sum(spent), sum(refunded), sum(sale), sum(sale_n), sum(sale_cost) FROM (
      SELECT ${day('rows.updated_at')} AS day, coalesce(rows.slug, '') AS game, rows.account AS account,
        CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN 'refunded' ELSE rows.state END AS outcome,
        CASE WHEN rows.state IN ('rejected', 'review') THEN coalesce(rows.reject_code, '') WHEN rows.state = 'cancelled' THEN coalesce(rows.reject_code, nullif(substr(trim(rows.error), 1, 80), ''), '') ELSE '' END AS class,
        CASE WHEN rows.state = 'completed' OR (rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 0) THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS spent,
        CASE WHEN rows.state = 'cancelled' AND coalesce(rows.refunded, 0) = 1 THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS refunded,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN CAST(round(rows.sale_usd * 100) AS INTEGER) ELSE 0 END AS sale,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN 1 ELSE 0 END AS sale_n,
        CASE WHEN rows.state = 'completed' AND rows.sale_usd IS NOT NULL THEN CAST(round(coalesce(rows.amount_usd, rows.expected_usd, 0) * 100) AS INTEGER) ELSE 0 END AS sale_cost
      FROM rows WHERE rows.state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')
    ) GROUP BY day, game, account, outcome, class;
  DELETE FROM daily_latency;
  INSERT INTO daily_latency (day, game, bucket, n)
    SELECT ${day('rows.updated_at')}, coalesce(rows.slug, ''), CAST(round(8 * ln(max(rows.updated_at - rows.first_sent_at, 100) / 100.0)) AS INTEGER), count(*)
    FROM rows WHERE state = 'completed' AND first_sent_at IS NOT NULL GROUP BY 1, 2, 3;
`;
}
