/**
 * The durable store: one SQLite file (better-sqlite3, WAL) under jobs/.
 *
 * synchronous=FULL: a commit is on disk before `run()` returns, so "the intent to send is
 * committed before the request leaves" holds across a power cut, not just a process kill. (The
 * runner's intents are committed NORMAL and the log synced off the event loop before their
 * requests leave: the same guarantee, store/wal-sync.ts.)
 * The file is created mode 0600 (it holds delivered codes); SQLite gives its -wal and -shm
 * files the same mode as the database file.
 *
 * journal_size_limit: after a checkpoint SQLite reuses the write-ahead log from its start but keeps
 * the file as large as it ever grew; this cuts it back to JOURNAL_SIZE_LIMIT. A burst (a 100,000-row
 * batch stored in one transaction) may grow it, the next checkpoint shrinks it (store/upkeep.ts).
 */
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations.js';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { registerIdentity, TRXID_FOLD_VERSION } from '../kernel/identity.js';

export type Db = Database.Database;

/** Bytes the write-ahead log is cut back to after a checkpoint. */
export const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * The page cache of each connection, in KiB (SQLite's negative form). better-sqlite3 builds SQLite
 * with 16 MiB, which a daemon fills as its database grows: RSS rose by ~19 MB over a 20,000-row
 * batch and pushed a 100,000-row one to the edge of its 150 MB budget. 4,000 KiB (about 4 MB)
 * holds what a step reads (the partial indexes of sendable rows and due polls, the counters, the
 * recent pages); the rest is one read from the operating system's file cache away.
 */
export const PAGE_CACHE_KIB = 4_000;

/** How long a connection waits for another process's write before SQLITE_BUSY: a daemon and a `topup` command share the file. */
export const BUSY_TIMEOUT_MS = 10_000;

export function openDb(path: string): Db {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Create the file ourselves so that its mode never depends on the caller's umask.
  closeSync(openSync(path, 'a', 0o600));
  // better-sqlite3's `timeout` is SQLite's busy timeout.
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  // Two processes opening a new home at once (a submit and a status, two submits) both switch
  // it to WAL; SQLite can answer that switch SQLITE_BUSY at once, without its busy wait, and the
  // command died with nothing on stdout (seen twice in loaded test runs). Tried again, as briefly
  // as the busy timeout allows.
  whileBusy(() => db.pragma('journal_mode = WAL'));
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  // The one trxid fold (kernel/identity.ts): the indexes and triggers of rows use it, so no
  // statement can write a row on a connection without it.
  registerIdentity(db);
  whileBusy(() => migrate(db));
  whileBusy(() => refoldIfUnicodeChanged(db));
  return db;
}

/** What the folded trxid indexes were built with: the fold's version and the engine's Unicode tables. */
export const FOLD_BUILD = `${TRXID_FOLD_VERSION}/${process.versions.unicode ?? 'unknown'}`;

/**
 * The folded trxid indexes hold trxid_fold() as it was when each entry was written. A Node upgrade
 * with newer Unicode tables (or a new fold) can fold a stored trxid differently, and an index
 * whose entries no longer match the function answers look-ups wrongly: "used" trxids would read
 * as new. So the build is recorded, and on a change the three indexes are rebuilt (REINDEX, in one
 * transaction, before anything else runs on this connection).
 */
function refoldIfUnicodeChanged(db: Db): void {
  const run = db.transaction(() => {
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'trxid_fold_build'`).get() as { value: string } | undefined;
    if (row?.value === FOLD_BUILD) return;
    // A home migrated just now was indexed with this build already; rebuilding it costs one pass.
    db.exec('REINDEX rows_trxid_folded; REINDEX left_trxids_folded; REINDEX order_events_trxid;');
    db.prepare(`INSERT INTO meta (key, value) VALUES ('trxid_fold_build', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(FOLD_BUILD);
  });
  run.immediate();
}

/** Runs `fn`, again after a short pause while SQLite answers SQLITE_BUSY, up to BUSY_TIMEOUT_MS. */
function whileBusy<T>(fn: () => T): T {
  const until = performance.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return fn();
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (!code.startsWith('SQLITE_BUSY') || performance.now() > until) throw err;
      // A synchronous pause: the store opens before anything else runs.
      Atomics.wait(pause, 0, 0, 20);
    }
  }
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  // The version is read inside the write transaction: two processes starting at once after an
  // upgrade must not both apply the same migration.
  const apply = db.transaction(() => {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new TopupError(ErrorCode.Store, `the database was written by a newer topup-runner (schema ${current}, this build knows ${MIGRATIONS.length})`);
    }
    if (current === MIGRATIONS.length) return;
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (row) db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
    else db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
  });
  apply.immediate();
}

/** Statements prepared once per SQL text: the runner asks the stores the same questions every step. */
export function statementCache(db: Db): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

/**
 * Runs `fn` (synchronous writes only: nothing else can run on the connection meanwhile) with
 * synchronous=NORMAL, then restores FULL. Its commits reach the OS at once, so they survive the
 * process dying and every other process sees them; only a power cut or an OS crash can lose them,
 * and only until the next FULL commit, which fsyncs the whole write-ahead log, theirs included.
 * For writes whose loss in a power cut is recovered by a path that already exists: the rate
 * gate's call log (its times are on the monotonic clock, which restarts at boot: after a power
 * cut they are dropped as stale anyway), and the answers of sends and polls (rows.ts
 * UNSYNCED_EVENTS: a lost answer leaves the row where its intent left it, so it is resent with
 * the same trxid or polled again, as after a kill before the answer's commit). For the intent to
 * send only with the log synced before the request leaves (store/wal-sync.ts, which the intent's
 * request waits for): it must be on disk before the request leaves; and nothing read from the
 * store may leave it for a reseller's eyes before durable() has made such answers permanent.
 */
export function unsynced<T>(db: Db, fn: () => T): T {
  // Inside a transaction the level cannot change (SQLite refuses): the enclosing commit decides.
  if (db.inTransaction) return fn();
  // exec, not a cached statement: SQLite applies this pragma when it compiles it.
  db.exec('PRAGMA synchronous = NORMAL');
  try {
    return fn();
  } finally {
    db.exec('PRAGMA synchronous = FULL');
  }
}

/**
 * One fully synced commit: it fsyncs the write-ahead log up to here, so every commit before it,
 * unsynced() ones included, survives a power cut. Called before a result file is written: a file
 * must never report an answer (completed, refused) that a power cut could take back.
 */
export function durable(db: Db, now: number): void {
  if (db.inTransaction) return; // the enclosing commit is the one that syncs
  db.prepare(`INSERT INTO meta (key, value) VALUES ('durable_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(String(now));
}

/** `PRAGMA integrity_check`: 'ok' or the first problems SQLite reports. */
export function integrityCheck(db: Db): string {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).join('; ');
}

/** `?,?,?` for an IN list of this length. */
export function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(',');
}
