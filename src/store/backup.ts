/**
 * Backups of the store (docs/backup.md): an online, consistent copy taken while the daemon runs,
 * verified on the copy, together with the job files the store still needs, written whole or not
 * at all.
 *
 * A backup is a folder `topup-backup-<UTC time>-<id>/` holding:
 *   topup.db       the copy (SQLite's online backup API through better-sqlite3: a consistent
 *                  snapshot of the store as of one transaction, whatever the daemon writes meanwhile)
 *   jobs/<batch>/  the claimed files of the batches not finished at that moment (a restore onto a
 *                  new disk can finish them from their bytes: their trxids derive from those bytes)
 *   manifest.json  what it holds, with the copy's SHA-256, checked again by `topup restore`
 * It is built under a hidden temporary name in the same folder and renamed when complete (a kill
 * mid-backup leaves a `.tmp-…` folder the next backup removes, never a half backup with a final
 * name). Every file is 0600 and every folder 0700: the copy holds delivered codes.
 *
 * Every copy carries its marker inside (meta `backup.copy` and `restore.reconcile`), written into
 * the copy, never into the live store. So a copy is always recognisable as a copy, however it comes
 * back: restored by `topup restore`, or its topup.db dropped into jobs/ by hand. A store whose meta
 * holds `restore.reconcile` makes the first runner reconcile before it sends anything
 * (ops/restore-reconcile.ts).
 *
 * A copy of the database made by other means (a file copy of a stopped home's topup.db) carries no
 * marker; it is recognised by the store generation instead: the daemon counts a generation in the
 * store and writes the same number beside it, outside jobs/ (`<home>/.topup-store-mark`). A store
 * older than the mark says is a copy brought back (storeIsBehindMark).
 */
import { addCarried, carryOverChecks, type ChecksCarried } from './backup-checks.js';
import { crashPoint } from '../kernel/crash-points.js';
import { rowStates } from './state-sql.js';
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeSync, chmodSync, lstatSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { MIGRATIONS } from './migrations.js';
import type { Db } from './db.js';
import type { MetaStore } from './meta.js';
import { raiseEventIds } from './event-ids.js';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { registerIdentity } from '../kernel/identity.js';
import type { Logger } from '../kernel/log.js';

/** In a copy: what it is a copy of, and when it was taken. Never in a live store that was not restored. */
export const COPY_KEY = 'backup.copy';
/** In a store: "a copy, not yet reconciled": the first runner looks every open row up before it sends. */
export const RECONCILE_KEY = 'restore.reconcile';
/**
 * In a store reconciled after a restore (or the loss of the store): for JOURNAL_DAYS, a file claimed
 * again is reconciled too before it sends (RestoreWindow). A re-dropped file the copy never knew
 * gets its byte-derived trxids, but a row of it that had failed over was bought on another account
 * under `<trxid>-<account>`: resent on its own account it is a second purchase, not a replay.
 */
export const RESTORE_WINDOW_KEY = 'restore.window';
/** In the live store: the last backup that was taken and verified (BackupRecord). */
export const LAST_BACKUP_KEY = 'backup.last';
/** In the live store: the last backup attempt, good or not ({at, ok, error?}). */
export const LAST_ATTEMPT_KEY = 'backup.lastAttempt';
/** The store's generation (a counter the daemon raises) and its identity, mirrored in the mark file. */
export const GENERATION_KEY = 'store.generation';
/** Wall ms the generation was last raised: a copy of the store carrying it was taken at or after it. */
export const GENERATION_AT_KEY = 'store.generationAt';
export const STORE_ID_KEY = 'store.id';
/** The mark file, in the home (outside jobs/, so restoring jobs/ alone does not take it back too). */
export const MARK_FILE = '.topup-store-mark';

export const BACKUP_PREFIX = 'topup-backup-';
const MANIFEST = 'manifest.json';
const FORMAT = 'topup-backup/1';

export interface CopyMarker {
  /** The backup's id (its folder name's last part). */
  id: string;
  /** Wall ms at which the copy was taken (the snapshot is at most this old). */
  takenAt: number;
  schema: number;
  host: string;
  /** The home it was taken from. */
  home: string;
}

/** Why a store must be reconciled before it sends (meta RECONCILE_KEY). */
export interface ReconcileMarker {
  /**
   * 'backup': a copy taken by topup backup; 'mark': the store is older than the home's mark file
   * says; 'replica': restored from a Litestream replica by topup takeover (standby/takeover.ts);
   * 'claim': a file claimed within the window after a reconcile (RESTORE_WINDOW_KEY), whose rows
   * the copy may never have known although they were bought.
   */
  kind: 'backup' | 'mark' | 'replica' | 'claim';
  copy: CopyMarker | null;
  restoredAt: number | null;
  /** The backup restored (topup restore), when known. */
  from: string | null;
  detail: string;
  /**
   * For a copy recognised by the mark file: the wall ms its store last raised its generation (it
   * was copied at or after it, so what happened without it happened after). The reconcile reads
   * history back to before it. Absent: a deleted store, whose rows date from their first claim.
   */
  since?: number;
}

/** meta RESTORE_WINDOW_KEY: after a reconcile, until when a claim is reconciled too, and how far back its lookups read. */
export interface RestoreWindow {
  /** Wall ms: the suppliers' histories are read back to before this (what the copy did not know was bought after it). */
  since: number;
  /** Wall ms the window closes. */
  until: number;
  /** The restore it follows (its marker's detail). */
  detail: string;
  /**
   * Wall ms the operator closed it early for files (`topup restore --close-window`): files claimed
   * since are not looked up. API orders still are until `until`: a shop's resend of an order
   * accepted after the copy is what nobody on this home can rule out (the journal went with the
   * store), and its lookup is cheap (an adversarial review).
   */
  filesClosedAt?: number;
}

/**
 * The window after a restore as a claim now would meet it (markClaimInRestoreWindow's rule): open,
 * and with more than one account that may have bought rows since it reaches back; null otherwise.
 * For `topup validate` (a warning: the file's rows are looked up before they are sent) and for
 * `topup restore --close-window`.
 */
export function openRestoreWindow(db: Db, configured: readonly string[], now: number): (RestoreWindow & { accounts: string[] }) | null {
  const w = db.prepare('SELECT value FROM meta WHERE key = ?').get(RESTORE_WINDOW_KEY) as { value: string } | undefined;
  if (!w) return null;
  const window = JSON.parse(w.value) as RestoreWindow;
  if (now >= window.until || window.filesClosedAt !== undefined) return null;
  const known = (db.prepare('SELECT name FROM account_identities WHERE removed_at IS NULL OR removed_at >= ? ORDER BY name').all(window.since) as { name: string }[]).map((r) => r.name);
  const accounts = [...new Set([...configured, ...known])];
  return accounts.length < 2 ? null : { ...window, accounts };
}

/** meta: `<prefix><batch id>` = ClaimLookup: a batch claimed in the window after a restore, not yet looked up (markClaimInRestoreWindow). */
export const CLAIM_LOOKUP_PREFIX = 'restore.claim:';

/** What a batch claimed in the window is looked up with: how far back, and why. */
export interface ClaimLookup {
  batchId: string;
  since: number;
  detail: string;
  /**
   * Every account that may have bought its rows after the copy was taken, as the claim's own
   * transaction read them: those configured for the claiming process and every account the store
   * knows that was still in accounts.toml when the window reaches back (account_identities,
   * removed_at). One no longer configured cannot be read: its rows are held, then put in review
   * (ops/restore-reconcile.ts lookUpClaims), never sent blind. Absent in marks of earlier versions:
   * the accounts configured.
   */
  accounts?: string[];
  /**
   * The lookup could not read every account (key refused, unreachable, no longer configured):
   * since when, and why, per account. Shown by status and doctor; after the wait
   * (TOPUP_RESTORE_LOOKUP_WAIT), the rows that could have been bought there go to review.
   */
  blocked?: { since: number; at: number; accounts: Record<string, string> };
}

/**
 * Called in the claim's own transaction (claim/claim.ts recordClaim): a new file claimed while the
 * window after a restore is open is marked "not yet looked up" (meta CLAIM_LOOKUP_PREFIX + its id),
 * so nothing of it is sent (store: rows.ts markSending refuses its intents while the mark is there)
 * before its rows were looked up at every account under the trxids a move gives (ops/restore-reconcile.ts
 * lookUpClaims, by the process that runs the batch). Per batch, not the whole store: a `topup submit`
 * beside a running daemon must not stop the daemon's batches, nor wait for them.
 *
 * Which accounts may have bought its rows is read here, in the same transaction, from the store:
 * the claiming process's accounts and every account the store knows that was in accounts.toml at
 * any time since the window reaches back (an adversarial review: `second` taken out of the file
 * after a restore, the day's file dropped again, its rows bought on `second` by a failover were
 * bought again on `main`, because the mark was skipped with one account configured and the lookup
 * read only the accounts configured). Only when that is a single account is nothing looked up: a
 * re-drop's byte-derived trxids meet any purchase there as a replay.
 */
export function markClaimInRestoreWindow(db: Db, configured: readonly string[], c: { batchId: string; sourceName: string; now: number }): boolean {
  // Asked for every order the API accepts: the statement prepared once per connection (a prepare
  // per order was 1 % of the order API's event loop at 500 POSTs/s).
  let read = restoreWindowReadOf.get(db);
  if (!read) restoreWindowReadOf.set(db, (read = db.prepare('SELECT value FROM meta WHERE key = ?')));
  const w = read.get(RESTORE_WINDOW_KEY) as { value: string } | undefined;
  if (!w) return false;
  const window = JSON.parse(w.value) as RestoreWindow;
  if (c.now >= window.until || window.filesClosedAt !== undefined) return false;
  const known = (db.prepare('SELECT name FROM account_identities WHERE removed_at IS NULL OR removed_at >= ? ORDER BY name').all(window.since) as { name: string }[]).map((r) => r.name);
  const accounts = [...new Set([...configured, ...known])];
  if (accounts.length < 2) return false;
  const mark: ClaimLookup = {
    batchId: c.batchId,
    since: window.since,
    detail: `${c.sourceName} (batch ${c.batchId}) was claimed within ${Math.round((window.until - window.since) / 86_400_000)} days of a restore (${window.detail}): its rows may have been bought before under trxids a move gives`,
    accounts,
  };
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(CLAIM_LOOKUP_PREFIX + c.batchId, JSON.stringify(mark));
  return true;
}

/**
 * Whether a file loaded now may hold rows bought before the store was lost: the store is a copy
 * not yet reconciled (a batch folder claimed again from jobs/ is loaded by the reconcile), or the
 * window after a restore is open for files (the day's files given again). Its rows are then
 * validated without what the catalog says of a pack *now* (stock, price against a cap: intake/
 * validate.ts `availability`), as an API order recovered from the journal is: the purchase made
 * before may be what took the last stock, and a row refused for it is never looked up, so its
 * order is held by no row and reported nowhere (the simulator: seed 20261127 #27, a card row
 * bought after the copy, "out of stock" when its folder was claimed again after the restore).
 */
export function mayHoldBoughtRows(db: Db, now: number): boolean {
  return boughtRowsSince(db, now) !== null;
}

/**
 * How far back a row that may have been bought already is looked up (mayHoldBoughtRows): the open
 * window's start, or the reconcile's (the copy's generation); a copy that does not know (a deleted
 * store) reaches back `fallbackMs`. Null when no row loaded now may have been bought before.
 */
export function boughtRowsSince(db: Db, now: number, fallbackMs = 8 * 86_400_000): number | null {
  // Asked for every order the API accepts: the statement prepared once per connection (a prepare
  // per order was 1 % of the order API's event loop at 500 POSTs/s).
  let read = restoreWindowReadOf.get(db);
  if (!read) restoreWindowReadOf.set(db, (read = db.prepare('SELECT value FROM meta WHERE key = ?')));
  const w = read.get(RESTORE_WINDOW_KEY) as { value: string } | undefined;
  const window = w ? (JSON.parse(w.value) as RestoreWindow) : undefined;
  const r = read.get(RECONCILE_KEY) as { value: string } | undefined;
  if (r !== undefined) {
    const marker = JSON.parse(r.value) as ReconcileMarker;
    return Math.min(marker.since ?? now - fallbackMs, window?.since ?? now);
  }
  if (!window) return null;
  return now < window.until && window.filesClosedAt === undefined ? window.since : null;
}

/** meta: `<prefix><batch id>:<idx>` = OrderLookup: an API order accepted in the window after a restore, not yet looked up (markOrderInRestoreWindow). */
export const ORDER_LOOKUP_PREFIX = 'restore.order:';

/** What an API order accepted in the window is looked up with (as ClaimLookup, for one row of the day's API batch). */
export interface OrderLookup {
  batchId: string;
  idx: number;
  trxid: string;
  /** Wall ms the order was accepted (how long it has waited). */
  at: number;
  since: number;
  /** Every account that may have bought it after the copy was taken (as ClaimLookup.accounts). */
  accounts: string[];
  blocked?: { since: number; at: number; accounts: Record<string, string> };
  /**
   * The row's line in its file, for a row of a file claimed in the window that waits for an
   * account the lookup cannot read (holdRowsInRestoreWindow); absent for an API order.
   */
  line?: number;
  /**
   * A file row that would have been refused for what the catalog says now (a pack withdrawn or
   * unlisted, out of stock, dearer than its cap, a field the line no longer takes) while it may
   * have been bought already (claim/held-refusals.ts): stored `pending` with the request its cells
   * give, held by this mark, never sent. Looked up and found, it is settled; found nowhere, it is
   * refused with this error in the transaction that removes the mark (lookUpOrders).
   */
  refusal?: string;
}

/**
 * Rows of a file claimed in the window, held one by one (ops/restore-reconcile.ts lookUpClaims):
 * the batch's other rows are decided from the accounts read, and each of these waits for an
 * account that cannot be read now under the same per-row mark an API order has (the store refuses
 * its intent while the mark is there, rows.ts), looked up by lookUpOrders. Called in the
 * transaction that removes the batch's mark.
 */
export function holdRowsInRestoreWindow(db: Db, marks: readonly OrderLookup[]): void {
  const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  for (const m of marks) put.run(`${ORDER_LOOKUP_PREFIX}${m.batchId}:${m.idx}`, JSON.stringify(m));
}

/**
 * Called in the acceptance's own transaction (orders/desk.ts): a new API order (a trxid the store
 * does not know) accepted while the window after a restore is open, on a home with more than one
 * account, is marked "not yet looked up" (meta ORDER_LOOKUP_PREFIX + batch:idx). The store refuses
 * its intent while the mark is there (rows.ts), the dispatch stage leaves it out, and the runner
 * looks its trxid and the trxids a move gives up at every account back to the window's start
 * (ops/restore-reconcile.ts lookUpOrders) before it is sent or settled.
 *
 * Why: without a folder replica, an order accepted after the last backup, failed over and bought on
 * another account as `<trxid>-<account>`, then lost with the disk (the store and jobs/api-journal/),
 * leaves nothing local; the shop resends it, and the restored home took it as new and bought it on
 * its first account too (issue 32, reproduced: test/restore/api-resend-no-replica.test.ts). The
 * 202 does not wait for the lookup: it still means "on disk", and the lookup runs after it.
 * Which accounts: as markClaimInRestoreWindow. One account: nothing looked up (a resend under its
 * own trxid meets its purchase as a replay).
 */
const restoreWindowReadOf = new WeakMap<Db, Database.Statement>();

export function markOrderInRestoreWindow(db: Db, configured: readonly string[], o: { batchId: string; idx: number; trxid: string; now: number }): boolean {
  // Asked for every order the API accepts: the statement prepared once per connection (a prepare
  // per order was 1 % of the order API's event loop at 500 POSTs/s).
  let read = restoreWindowReadOf.get(db);
  if (!read) restoreWindowReadOf.set(db, (read = db.prepare('SELECT value FROM meta WHERE key = ?')));
  const w = read.get(RESTORE_WINDOW_KEY) as { value: string } | undefined;
  if (!w) return false;
  const window = JSON.parse(w.value) as RestoreWindow;
  if (o.now >= window.until) return false;
  const known = (db.prepare('SELECT name FROM account_identities WHERE removed_at IS NULL OR removed_at >= ? ORDER BY name').all(window.since) as { name: string }[]).map((r) => r.name);
  const accounts = [...new Set([...configured, ...known])];
  if (accounts.length < 2) return false;
  const mark: OrderLookup = { batchId: o.batchId, idx: o.idx, trxid: o.trxid, at: o.now, since: window.since, accounts };
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(`${ORDER_LOOKUP_PREFIX}${o.batchId}:${o.idx}`, JSON.stringify(mark));
  return true;
}

/** The API orders accepted in the window not yet looked up (a range of the meta key's index). */
export function orderLookups(db: Db): OrderLookup[] {
  const rows = claimStatements(db).all.all(ORDER_LOOKUP_PREFIX, ORDER_LOOKUP_END) as { value: string }[];
  return rows.map((r) => JSON.parse(r.value) as OrderLookup);
}

/**
 * Whether any API order waits for its lookup: one seek on a statement prepared once, what the
 * runner asks every step (as hasClaimLookups; issue 34's profile: reading and parsing the marks
 * each step was a cost of every order). Read from the store each time, not cached: the order API
 * of another process writes marks.
 */
export function hasOrderLookups(db: Db): boolean {
  return claimStatements(db).any.get(ORDER_LOOKUP_PREFIX, ORDER_LOOKUP_END) !== undefined;
}

const ORDER_LOOKUP_END = ORDER_LOOKUP_PREFIX.replace(/:$/, ';');

/** Records on an order's mark that its lookup could not read every account (an UPDATE: a mark removed meanwhile stays removed). */
export function noteOrderBlocked(db: Db, o: Pick<OrderLookup, 'batchId' | 'idx'>, blocked: NonNullable<OrderLookup['blocked']>): void {
  const key = `${ORDER_LOOKUP_PREFIX}${o.batchId}:${o.idx}`;
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  if (!row) return;
  db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(JSON.stringify({ ...(JSON.parse(row.value) as OrderLookup), blocked }), key);
}

/**
 * The accounts the store knows that are not configured now and were still in accounts.toml at or
 * after `since` (account_identities.removed_at): after a restore, each may have bought rows after
 * the copy was taken, and none can be read. Name → why.
 */
export function removedSince(db: Db, configured: readonly string[], since: number): Map<string, string> {
  const names = new Set(configured);
  const rows = db.prepare('SELECT name, removed_at AS removedAt FROM account_identities WHERE removed_at IS NULL OR removed_at >= ? ORDER BY name').all(since) as { name: string; removedAt: number | null }[];
  return new Map(rows.filter((r) => !names.has(r.name)).map((r) => [r.name, notReadableWhy(r.name)]));
}

/** Why an account the store knows cannot be read now: taken out of accounts.toml, or its name now points elsewhere. */
export function notReadableWhy(name: string): string {
  const m = / \(was (.+), key ([^)]+)\)$/.exec(name);
  if (m) {
    const base = name.slice(0, m.index);
    return `account "${base}" pointed at ${m[1]} (key ${m[2]}) and now points elsewhere, so its orders there cannot be read; if it is the same supplier account, run: topup accounts confirm ${base}; else point it back for the lookup`;
  }
  return `account "${name}" is no longer in accounts.toml, so its orders cannot be read`;
}

/**
 * Records on a claim's mark that its lookup could not read every account. An UPDATE, never an
 * insert: a mark another process removed meanwhile (its lookup done) is not brought back.
 */
export function noteClaimBlocked(db: Db, batchId: string, blocked: NonNullable<ClaimLookup['blocked']>): void {
  const key = CLAIM_LOOKUP_PREFIX + batchId;
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  if (!row) return;
  const mark = JSON.parse(row.value) as ClaimLookup;
  db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(JSON.stringify({ ...mark, blocked }), key);
}

/** The batches claimed in the window not yet looked up (a range of the meta key's index: cheap for every step). */
export function claimLookups(db: Db): ClaimLookup[] {
  if (!hasClaimLookups(db)) return [];
  const rows = claimStatements(db).all.all(CLAIM_LOOKUP_PREFIX, CLAIM_LOOKUP_END) as { value: string }[];
  return rows.map((r) => JSON.parse(r.value) as ClaimLookup);
}

/**
 * Removes the marks of batches that will never send a row (trial s35: a cancelled batch, a file
 * refused for its header, a duplicate kept their marks for the window, and `topup status` and
 * `topup doctor` said they were "waiting … nothing of it is sent"; each step also paid for them).
 * A mark holds a batch's sends until its lookup; a batch that failed or was a duplicate stored no
 * row to send, and one done with no row that may still be sent (pending, sending, resending,
 * verifying, searching) or settled later (review) has nothing left the mark could hold. Read and
 * deleted in one immediate transaction: a batch reopened meanwhile is seen as it is. Returns how
 * many went.
 */
export function dropSpentClaimMarks(db: Db): number {
  if (!hasClaimLookups(db)) return 0;
  return db.transaction(() => {
    let dropped = 0;
    const del = db.prepare('DELETE FROM meta WHERE key = ?');
    for (const c of claimLookups(db)) if (spentClaim(db, c.batchId)) dropped += del.run(CLAIM_LOOKUP_PREFIX + c.batchId).changes;
    return dropped;
  }).immediate();
}

/** Whether a marked batch can no longer send a row (dropSpentClaimMarks; status and doctor do not list it). */
export function spentClaim(db: Db, batchId: string): boolean {
  const b = db.prepare('SELECT state FROM batches WHERE id = ?').get(batchId) as { state: string } | undefined;
  if (b === undefined) return false;
  if (b.state === 'failed' || b.state === 'duplicate') return true;
  return b.state === 'done' && db.prepare(`SELECT 1 FROM rows WHERE batch_id = ? AND state IN (${rowStates(['pending', 'sending', 'resending', 'verifying', 'searching', 'review'])}) LIMIT 1`).get(batchId) === undefined;
}

/**
 * Whether any batch claimed in a restore window waits for its lookup: one seek on meta's key. The
 * runner asks every step, and the dispatch stage twice more (each asked once per answer at 400
 * orders/s: a statement prepared and every mark parsed each time was ~0.8 CPU-ms per order in a
 * profile with no mark at all). Read from the store each time, not cached: another process (a
 * `topup submit`, a restore) can write a mark between two steps.
 */
export function hasClaimLookups(db: Db): boolean {
  return claimStatements(db).any.get(CLAIM_LOOKUP_PREFIX, CLAIM_LOOKUP_END) !== undefined;
}

/** The end of the marks' key range: the prefix with its ':' stepped to the next character. */
const CLAIM_LOOKUP_END = CLAIM_LOOKUP_PREFIX.replace(/:$/, ';');

const claimStatementsOf = new WeakMap<Db, { any: Database.Statement; all: Database.Statement }>();
function claimStatements(db: Db): { any: Database.Statement; all: Database.Statement } {
  let s = claimStatementsOf.get(db);
  if (!s) {
    s = { any: db.prepare('SELECT 1 FROM meta WHERE key >= ? AND key < ? LIMIT 1'), all: db.prepare('SELECT value FROM meta WHERE key >= ? AND key < ?') };
    claimStatementsOf.set(db, s);
  }
  return s;
}

export interface BackupRecord {
  id: string;
  path: string;
  takenAt: number;
  bytes: number;
  schema: number;
  /** Batch folders of jobs/ copied with it. */
  batches: string[];
  ms: number;
}

export interface BackupManifest {
  format: string;
  id: string;
  takenAt: number;
  schema: number;
  integrity: 'ok';
  host: string;
  home: string;
  db: { file: string; bytes: number; sha256: string };
  jobs: { batch: string; files: string[] }[];
  journal: string[];
}

/** The schema version a store file says it has. */
function schemaOf(db: Database.Database): number {
  const r = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
  return r?.version ?? 0;
}

function integrityOf(db: Database.Database): string {
  return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Writes `content` to `path` (0600), fsynced: for files inside a folder that is renamed into place afterwards. */
function writeSynced(path: string, content: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A UTC time as it reads in a folder name: 20261127T173448Z. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

export interface BackupSource {
  db: Db;
  home: string;
  jobsDir: string;
  /** Batch folders the store still needs (unfinished batches), relative to jobsDir. */
  unfinishedBatches: () => string[];
  /** Files under jobsDir kept for a restore besides the batches' (the order API's journal). */
  journalFiles?: () => string[];
  now: () => number;
}

/**
 * Takes a backup into `toDir` (created 0700 if need be) and verifies it. Resolves with its record;
 * rejects with a TopupError (code backup) when the copy cannot be made or does not verify, leaving
 * no folder with a final name behind.
 */
export async function takeBackup(src: BackupSource, toDir: string): Promise<BackupRecord> {
  const started = performance.now();
  const takenAt = src.now();
  const id = randomBytes(3).toString('hex');
  const name = `${BACKUP_PREFIX}${stamp(takenAt)}-${id}`;
  const dir = resolve(toDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  removeStaleTemps(dir);
  const tmp = join(dir, `.tmp-${name}`);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    const copyPath = join(tmp, 'topup.db');
    // The online backup API copies the store page by page as of one consistent snapshot; the
    // daemon goes on writing meanwhile (better-sqlite3 steps it between turns of the event loop).
    await src.db.backup(copyPath);
    chmodSync(copyPath, 0o600);
    const schema = verifyAndMark(copyPath, { id, takenAt, schema: MIGRATIONS.length, host: hostname(), home: src.home });
    // The files the store still needs: those of batches not finished when the copy was taken.
    const jobs: BackupManifest['jobs'] = [];
    for (const batch of src.unfinishedBatches()) {
      const from = join(src.jobsDir, batch);
      if (!existsSync(from) || !statSync(from).isDirectory()) continue;
      const files = copyTree(from, join(tmp, 'jobs', batch));
      jobs.push({ batch, files });
    }
    const journal: string[] = [];
    for (const rel of src.journalFiles?.() ?? []) {
      const from = join(src.jobsDir, rel);
      if (!existsSync(from)) continue;
      const to = join(tmp, 'jobs', rel);
      mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
      copyFileSync(from, to);
      chmodSync(to, 0o600);
      fsyncPath(to);
      journal.push(rel);
    }
    const bytes = statSync(copyPath).size;
    const manifest: BackupManifest = {
      format: FORMAT, id, takenAt, schema, integrity: 'ok', host: hostname(), home: src.home,
      db: { file: 'topup.db', bytes, sha256: sha256File(copyPath) }, jobs, journal,
    };
    writeSynced(join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    fsyncPath(tmp);
    const final = join(dir, name);
    renameSync(tmp, final);
    fsyncPath(dir);
    return { id, path: final, takenAt, bytes, schema, batches: jobs.map((j) => j.batch), ms: Math.round(performance.now() - started) };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (err instanceof TopupError) throw err;
    throw new TopupError(ErrorCode.Backup, `backup into ${dir} failed: ${(err as Error).message}`);
  }
}

/**
 * Checks the copy (integrity_check, a schema this build knows), then writes its marker into it and
 * makes it one self-contained file (journal_mode DELETE: no -wal beside it). Returns its schema.
 */
function verifyAndMark(copyPath: string, marker: CopyMarker): number {
  const copy = new Database(copyPath);
  // Its indexes and triggers call trxid_fold(): integrity_check and every write need it.
  registerIdentity(copy);
  try {
    const integrity = integrityOf(copy);
    if (integrity !== 'ok') throw new TopupError(ErrorCode.Backup, `the copy failed its integrity check: ${integrity}`);
    const schema = schemaOf(copy);
    if (schema < 1 || schema > MIGRATIONS.length) throw new TopupError(ErrorCode.Backup, `the copy has schema ${schema}, this build knows 1 to ${MIGRATIONS.length}`);
    const reconcile: ReconcileMarker = { kind: 'backup', copy: { ...marker, schema }, restoredAt: null, from: null, detail: `a copy taken by topup backup at ${new Date(marker.takenAt).toISOString()}` };
    const set = copy.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    copy.transaction(() => {
      set.run(COPY_KEY, JSON.stringify({ ...marker, schema }));
      set.run(RECONCILE_KEY, JSON.stringify(reconcile));
      // The live store's presence and leases say nothing about the copy's future: a restored copy
      // must not look as if a daemon held it.
      copy.prepare(`DELETE FROM meta WHERE key = 'daemon.presence'`).run();
      // Nor hold its batches: whoever starts on the copy takes them at once (the trigger
      // batches_taken_over then puts their rows that were on their way in doubt, owed a resend).
      copy.prepare('UPDATE batches SET owner = NULL, lease_until = 0 WHERE owner IS NOT NULL').run();
    })();
    copy.pragma('journal_mode = DELETE');
    return schema;
  } finally {
    copy.close();
  }
}

/** Copies a folder's regular files (one level of subfolders is enough for a batch folder), 0600/0700, fsynced. */
function copyTree(from: string, to: string): string[] {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  const out: string[] = [];
  const walk = (f: string, t: string): void => {
    for (const e of readdirSync(f, { withFileTypes: true })) {
      const src = join(f, e.name);
      const dst = join(t, e.name);
      if (e.isDirectory()) {
        mkdirSync(dst, { recursive: true, mode: 0o700 });
        walk(src, dst);
      } else if (e.isFile()) {
        copyFileSync(src, dst);
        chmodSync(dst, 0o600);
        fsyncPath(dst);
        out.push(relative(to, dst));
      }
    }
  };
  walk(from, to);
  return out;
}

/** Temporary folders of backups that were killed half-way. */
function removeStaleTemps(dir: string): void {
  for (const e of readdirSync(dir)) if (e.startsWith(`.tmp-${BACKUP_PREFIX}`)) rmSync(join(dir, e), { recursive: true, force: true });
}

/** Backups in `dir`, oldest first (their names sort by time). */
export function listBackups(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((e) => e.startsWith(BACKUP_PREFIX) && existsSync(join(dir, e, MANIFEST)))
    .sort()
    .map((e) => join(dir, e));
}

/** Keeps the newest `keep` backups in `dir`; returns the ones removed. */
export function pruneBackups(dir: string, keep: number): string[] {
  const all = listBackups(dir);
  const gone = all.slice(0, Math.max(0, all.length - keep));
  for (const path of gone) rmSync(path, { recursive: true, force: true });
  return gone;
}

export interface VerifiedBackup {
  path: string;
  dbFile: string;
  manifest: BackupManifest;
}

/**
 * Opens a backup (its folder, its manifest or its topup.db) and checks it whole: the manifest, the
 * copy's SHA-256, integrity_check, a schema this build knows, the copy marker. Throws a TopupError
 * (code backup) naming what is wrong.
 */
export function verifyBackup(given: string): VerifiedBackup {
  const abs = resolve(given);
  if (!existsSync(abs)) throw new TopupError(ErrorCode.Backup, `no backup at ${abs}`);
  const path = lstatSync(abs).isDirectory() ? abs : dirname(abs);
  const mf = join(path, MANIFEST);
  if (!existsSync(mf)) throw new TopupError(ErrorCode.Backup, `${path} holds no ${MANIFEST}: not a backup taken by topup backup`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(mf, 'utf8')) as BackupManifest;
  } catch (err) {
    throw new TopupError(ErrorCode.Backup, `${mf} cannot be read: ${(err as Error).message}`);
  }
  if (manifest.format !== FORMAT) throw new TopupError(ErrorCode.Backup, `${mf}: format "${String(manifest.format)}" is not ${FORMAT}`);
  const dbFile = join(path, basename(manifest.db.file));
  if (!existsSync(dbFile)) throw new TopupError(ErrorCode.Backup, `${dbFile} is missing`);
  const sum = sha256File(dbFile);
  if (sum !== manifest.db.sha256) throw new TopupError(ErrorCode.Backup, `${dbFile} is not the file the backup wrote (SHA-256 ${sum}, the manifest says ${manifest.db.sha256})`);
  const copy = new Database(dbFile, { readonly: true, fileMustExist: true });
  // Its indexes and triggers call trxid_fold(): integrity_check and every write need it.
  registerIdentity(copy);
  try {
    const integrity = integrityOf(copy);
    if (integrity !== 'ok') throw new TopupError(ErrorCode.Backup, `${dbFile} failed its integrity check: ${integrity}`);
    const schema = schemaOf(copy);
    if (schema > MIGRATIONS.length) throw new TopupError(ErrorCode.Backup, `${dbFile} was written by a newer topup-runner (schema ${schema}, this build knows ${MIGRATIONS.length})`);
    const marker = copy.prepare('SELECT value FROM meta WHERE key = ?').get(RECONCILE_KEY) as { value: string } | undefined;
    if (!marker) throw new TopupError(ErrorCode.Backup, `${dbFile} carries no copy marker: not a copy taken by topup backup`);
  } finally {
    copy.close();
  }
  return { path, dbFile, manifest };
}

export interface RestoreOutcome {
  backup: VerifiedBackup;
  /** Where the store that was replaced was kept (null: the home had none). */
  keptAs: string | null;
  /** Batch folders copied into jobs/ (those the home did not have). */
  batches: string[];
  journal: string[];
  /** Player checks of the replaced store the copy lacked, carried into it (store/backup-checks.ts). */
  checks: ChecksCarried;
}

/**
 * Puts a verified backup in place of the home's store: the store there (if any) is kept beside it
 * as topup.db.replaced-<time> with its -wal and -shm, the copy is written as a temporary file and
 * renamed over topup.db, then the batch folders the home lacks are copied into jobs/ (a folder
 * that survived is the same batch or newer: kept). The caller has made sure no daemon runs here.
 */
export function restoreBackup(backup: VerifiedBackup, target: { home: string; dbPath: string; jobsDir: string; now: number }): RestoreOutcome {
  const { dbPath, jobsDir, now } = target;
  mkdirSync(jobsDir, { recursive: true, mode: 0o700 });
  // A restore killed part-way (RESTORE_PENDING_SUFFIX): the stores it had moved aside are still
  // the ones whose checks the copy must carry. Run again, it found no store (or the copy it had put
  // in place) and carried none (stop 37's review).
  const pendingPath = dbPath + RESTORE_PENDING_SUFFIX;
  const replaced = readPendingRestore(pendingPath).filter((p) => existsSync(p));
  let keptAs: string | null = null;
  if (existsSync(dbPath)) {
    keptAs = `${dbPath}.replaced-${stamp(now)}`;
    for (let n = 2; existsSync(keptAs) || replaced.includes(keptAs); n++) keptAs = `${dbPath}.replaced-${stamp(now)}-${n}`;
    // Written (and synced) before the store moves: a kill after the move still knows where it went.
    replaced.push(keptAs);
    writePendingRestore(pendingPath, replaced);
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(dbPath + suffix)) renameSync(dbPath + suffix, keptAs + suffix);
    fsyncPath(dirname(dbPath));
  } else {
    for (const suffix of ['-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
  }
  const tmp = `${dbPath}.restoring`;
  rmSync(tmp, { force: true });
  copyFileSync(backup.dbFile, tmp);
  chmodSync(tmp, 0o600);
  const copy = new Database(tmp);
  // Its indexes and triggers call trxid_fold(): integrity_check and every write need it.
  registerIdentity(copy);
  let checks: ChecksCarried = { calls: 0, answers: 0, problem: null };
  try {
    const prev = copy.prepare('SELECT value FROM meta WHERE key = ?').get(RECONCILE_KEY) as { value: string } | undefined;
    const marker: ReconcileMarker = {
      ...(prev ? (JSON.parse(prev.value) as ReconcileMarker) : { kind: 'backup', copy: null, detail: 'a copy taken by topup backup' }),
      restoredAt: now,
      from: backup.path,
    };
    copy.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(RECONCILE_KEY, JSON.stringify(marker));
    // The copy numbers its order events on from its own last id: ids issued after it was taken
    // would be issued again for other events (a new-user trial: 28 clashed). Raised above any id a
    // store can have issued before now (store/event-ids.ts).
    raiseEventIds(copy, now);
    // Result files are named by absolute path: restored into another home (a new machine, another
    // folder), a batch's result goes to this home's outbox, not to the lost one's.
    const from = resolve(backup.manifest.home);
    const to = resolve(target.home);
    if (from !== to) {
      copy.prepare(`UPDATE batches SET result_file = ? || substr(result_file, ?) WHERE substr(result_file, 1, ?) = ?`).run(to, from.length + 1, from.length + 1, `${from}/`);
    }
    // The checks made after the copy was taken: no supplier lists them, so only the replaced store
    // knows what they cost (store/backup-checks.ts).
    // Every store moved aside by this restore and by runs of it a kill ended, the oldest first
    // (the home's own store; then a copy a killed run had put in place, or a store a daemon wrote
    // in between): each carry adds only what the copy lacks.
    // Every store moved aside, a copy a killed run had put in place included: a command run on it
    // before this run (`topup validate --check-players`) may have paid for checks recorded only
    // there (an adversarial review, stop 38). Carrying a store into itself adds nothing.
    for (const r of replaced) checks = addCarried(checks, carryOverChecks(copy, r));
  } finally {
    copy.close();
  }
  crashPoint('restore-store-kept');
  fsyncPath(tmp);
  renameSync(tmp, dbPath);
  fsyncPath(dirname(dbPath));
  crashPoint('restore-copy-in-place');
  const batches: string[] = [];
  for (const j of backup.manifest.jobs) {
    const to = join(jobsDir, j.batch);
    if (existsSync(to)) continue;
    copyTree(join(backup.path, 'jobs', j.batch), to);
    batches.push(j.batch);
  }
  const journal: string[] = [];
  for (const rel of backup.manifest.journal ?? []) {
    const to = join(jobsDir, rel);
    if (existsSync(to)) continue;
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
    copyFileSync(join(backup.path, 'jobs', rel), to);
    chmodSync(to, 0o600);
    journal.push(rel);
  }
  fsyncPath(jobsDir);
  // Done: a run after this one replaces a store of its own, not these.
  rmSync(pendingPath, { force: true });
  fsyncPath(dirname(dbPath));
  return { backup, keptAs: replaced[0] ?? keptAs, batches, journal, checks };
}

/**
 * Beside the store while a restore runs: the stores it moved aside (JSON list of paths), written
 * before each move, removed when the restore is done. Found by a run of `topup restore` after a
 * kill, it names the home's own store (moved aside, not replaced yet, or replaced by the copy).
 */
export const RESTORE_PENDING_SUFFIX = '.restore-pending';

function readPendingRestore(path: string): string[] {
  if (!existsSync(path)) return [];
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as { replaced?: unknown };
    return Array.isArray(v.replaced) ? v.replaced.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    // Torn by the kill (written atomically, so only an older format or a hand edit): nothing known.
    return [];
  }
}

function writePendingRestore(path: string, replaced: readonly string[]): void {
  const tmp = `${path}.tmp`;
  writeSynced(tmp, `${JSON.stringify({ replaced })}\n`);
  renameSync(tmp, path);
  fsyncPath(dirname(path));
}

// ───────────────────────────── the store generation ─────────────────────────────

interface Mark {
  storeId: string;
  generation: number;
  /**
   * Every account the store knew when the mark was written (account_identities), with since when
   * it is out of accounts.toml (null: in it). Outside jobs/, so a copy restored into this home, or
   * a store lost, learns the accounts added after the copy and taken out again since
   * (adoptRememberedAccounts): one of them may have bought a re-dropped file's rows.
   */
  accounts?: RememberedAccount[];
}

export interface RememberedAccount {
  name: string;
  origin: string;
  keyFp: string;
  removedAt: number | null;
}

/** The accounts the store knows, for the mark file. */
export function knownAccounts(db: Db): RememberedAccount[] {
  return db.prepare('SELECT name, origin, key_fp AS keyFp, removed_at AS removedAt FROM account_identities ORDER BY name').all() as RememberedAccount[];
}

/**
 * At the start of a process with keys, on a store that must be reconciled (a copy, a lost store):
 * the accounts the home's mark file remembers and the store does not (added after the copy was
 * taken, or all of them for a lost store), not configured now, are recorded as the mark has them;
 * a remembered account still in the file at the mark's time is then marked out of it now by the
 * start (store/account-identity.ts), so a claim in the window looks it up, or holds for it.
 * Returns the names adopted.
 */
export function adoptRememberedAccounts(db: Db, home: string, configured: readonly string[], now: number): string[] {
  const mark = readMark(home);
  if (!mark?.accounts || mark.accounts.length === 0) return [];
  if (db.prepare('SELECT 1 FROM meta WHERE key = ?').get(RECONCILE_KEY) === undefined) return [];
  const names = new Set(configured);
  const add = db.prepare('INSERT INTO account_identities (name, origin, key_fp, since, removed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING');
  // A name configured now is recorded too, as the mark has it: when accounts.toml now points it
  // elsewhere, the start's reconcileAccounts keeps what it pointed at as a retired identity (an
  // adversarial review re-pointed `second` with the restore, and the copy, taken before `second`
  // was recorded, knew nothing to retire: the re-drop was looked up at the new endpoint only).
  const added = db.transaction(() => mark.accounts!.filter((a) => add.run(a.name, a.origin, a.keyFp, now, names.has(a.name) ? null : a.removedAt).changes > 0))();
  return added.filter((a) => !names.has(a.name)).map((a) => a.name);
}

/**
 * The accounts known to the backups in `dirs` taken after `backup` (their stores'
 * account_identities), for `topup restore`: an account added after the restored copy was taken,
 * used (a failover bought rows there as `<trxid>-<account>`) and taken out of accounts.toml again
 * is in no file of a disk lost whole (the mark file went with it), and the copy never knew it; a
 * newer backup beside it does (issue 32: the older of two backups restored, the day's file dropped
 * again, its rows bought on `second` were bought again on `main`). A newer backup that cannot be
 * read is named, not trusted.
 */
export function accountsOfNewerBackups(backup: VerifiedBackup, dirs: readonly string[]): { accounts: RememberedAccount[]; from: string[]; unreadable: { path: string; why: string }[] } {
  const seen = new Set<string>();
  const accounts = new Map<string, RememberedAccount>();
  const from: string[] = [];
  const unreadable: { path: string; why: string }[] = [];
  for (const dir of new Set([dirname(backup.path), ...dirs].map((d) => resolve(d)))) {
    for (const path of listBackups(dir)) {
      if (path === backup.path || seen.has(path)) continue;
      seen.add(path);
      try {
        const m = JSON.parse(readFileSync(join(path, MANIFEST), 'utf8')) as BackupManifest;
        if (!(m.takenAt > backup.manifest.takenAt)) continue;
        const db = new Database(join(path, basename(m.db.file)), { readonly: true, fileMustExist: true });
        try {
          for (const a of db.prepare('SELECT name, origin, key_fp AS keyFp, removed_at AS removedAt FROM account_identities').all() as RememberedAccount[]) {
            const had = accounts.get(a.name);
            // The newest word on an account: still in the file (null) beats a removal, a later removal an earlier one.
            if (!had || (had.removedAt !== null && (a.removedAt === null || a.removedAt > had.removedAt))) accounts.set(a.name, a);
          }
        } finally {
          db.close();
        }
        from.push(path);
      } catch (err) {
        unreadable.push({ path, why: (err as Error).message });
      }
    }
  }
  return { accounts: [...accounts.values()], from, unreadable };
}

/** The file beside the backups (TOPUP_BACKUP_DIR) that records every account the home has run with (writeAccountsSeen). */
export const ACCOUNTS_SEEN_FILE = 'accounts-seen.json';

/**
 * Records the accounts the store knows in `<backup dir>/accounts-seen.json`, merged with those the
 * file has (an account the store lacks, e.g. after a restore of an older copy, stays), each under
 * its newest word. Written by the daemon beside its mark (ops/backup-job.ts startStoreMark) when
 * it changes, not only at a backup: an account added after the last backup, used (a failover
 * bought there as `<trxid>-<account>`) and taken out of accounts.toml before the disk was lost
 * whole is in no backup and no file of the home; with the backups on another disk, it is in this
 * one, and `topup restore` records it in the restored store (readAccountsSeen) so the window's
 * lookups hold for it. Only into a folder that exists (a mount that is not there is not made on
 * the local disk). Returns whether it wrote. Never the key: its fingerprint only.
 */
export function writeAccountsSeen(dir: string, accounts: readonly RememberedAccount[]): boolean {
  if (!existsSync(dir)) return false;
  const path = join(dir, ACCOUNTS_SEEN_FILE);
  const had = readAccountsSeen(dir);
  const merged = new Map(had.map((a) => [a.name, a]));
  for (const a of accounts) merged.set(a.name, a);
  const list = [...merged.values()].sort((x, y) => x.name.localeCompare(y.name));
  const text = `${JSON.stringify({ accounts: list }, null, 2)}\n`;
  try {
    if (readFileSync(path, 'utf8') === text) return false;
  } catch {
    // not there yet
  }
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeSynced(tmp, text);
  renameSync(tmp, path);
  return true;
}

/** The accounts `<dir>/accounts-seen.json` records (writeAccountsSeen); none when it is absent or unreadable. */
export function readAccountsSeen(dir: string): RememberedAccount[] {
  try {
    const f = JSON.parse(readFileSync(join(dir, ACCOUNTS_SEEN_FILE), 'utf8')) as { accounts?: RememberedAccount[] };
    return (f.accounts ?? []).filter((a) => typeof a.name === 'string' && typeof a.origin === 'string' && typeof a.keyFp === 'string');
  } catch {
    return [];
  }
}

/** Records in a restored store the accounts it does not know (accountsOfNewerBackups); returns their names. */
export function adoptAccounts(db: Db, accounts: readonly RememberedAccount[], now: number): string[] {
  const add = db.prepare('INSERT INTO account_identities (name, origin, key_fp, since, removed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING');
  return db.transaction(() => accounts.filter((a) => add.run(a.name, a.origin, a.keyFp, now, a.removedAt).changes > 0).map((a) => a.name))();
}

function readMark(home: string): Mark | null {
  try {
    const m = JSON.parse(readFileSync(join(home, MARK_FILE), 'utf8')) as Mark;
    return typeof m.storeId === 'string' && Number.isInteger(m.generation) ? m : null;
  } catch {
    return null;
  }
}

/**
 * Is this store older than the home's mark file says (a copy of it brought back), or another store
 * than the one the home had (the database deleted, or replaced by a copy from elsewhere)? Returns
 * why, or null. Read before the daemon raises the generation (markGeneration).
 */
export function storeIsBehindMark(meta: MetaStore, home: string): string | null {
  const mark = readMark(home);
  const id = meta.get(STORE_ID_KEY);
  const generation = Number(meta.get(GENERATION_KEY) ?? '0');
  if (!mark) {
    // A store that has run under a daemon (it has an identity) in a home without a mark: a copy
    // brought in by hand whose dotfile did not come along (`cp home/* new/`, a sync skipping
    // dotfiles, jobs/topup.db copied into a fresh home), or the mark removed. Which of them cannot
    // be told; the reconcile only looks rows up, so it runs (adv9: a hand copy without its mark was
    // not reconciled and failed-over rows were bought again).
    if (id !== undefined) return `the store has run before (store ${id}, generation ${generation}) but this home has no ${MARK_FILE}: a copy brought here by hand, or the mark file removed`;
    return null;
  }
  if (id === undefined) return `the store is new, but this home had another (generation ${mark.generation}): the database was deleted or lost`;
  if (id !== mark.storeId) return `the store is not the one this home last ran (store ${id}, the home's mark names ${mark.storeId})`;
  if (generation < mark.generation) return `the store is an older copy (generation ${generation}, the home's mark says ${mark.generation})`;
  return null;
}

/**
 * Raises the store's generation and writes the mark file beside it: the store first, then the file.
 * A kill between the two leaves the store ahead of the mark (never mistaken for a copy); the mark
 * is written whole (a temporary file renamed) or not at all.
 */
export function markGeneration(meta: MetaStore, home: string, newId: () => string, now: number, accounts?: RememberedAccount[]): void {
  const mark = readMark(home);
  let id = meta.get(STORE_ID_KEY);
  if (id === undefined) {
    id = newId();
    meta.set(STORE_ID_KEY, id);
  }
  const generation = Math.max(Number(meta.get(GENERATION_KEY) ?? '0'), mark?.storeId === id ? mark.generation : 0) + 1;
  meta.set(GENERATION_KEY, String(generation));
  meta.set(GENERATION_AT_KEY, String(now));
  const path = join(home, MARK_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeSynced(tmp, `${JSON.stringify({ storeId: id, generation, ...(accounts ? { accounts } : {}) } satisfies Mark)}\n`);
  renameSync(tmp, path);
}

/**
 * At the daemon's start, before the generation is raised: a store older than the home's mark (a
 * copy of the database put back by hand, or the database deleted) is marked "copy, not yet
 * reconciled", so the runner reconciles before it sends (ops/restore-reconcile.ts).
 */
export function noteCopyBehindMark(rt: { config: { home: string }; log: Pick<Logger, 'warn'>; meta: MetaStore; db: Db; now: number }): void {
  if (rt.meta.get(RECONCILE_KEY) !== undefined) return;
  const why = storeIsBehindMark(rt.meta, rt.config.home);
  if (why === null) return;
  const lastRan = Number(rt.meta.get(GENERATION_AT_KEY) ?? 'NaN');
  const marker: ReconcileMarker = { kind: 'mark', copy: null, restoredAt: null, from: null, detail: why, ...(Number.isFinite(lastRan) ? { since: lastRan } : {}) };
  // The marker and the raised event ids together: a store behind the home may number its events
  // below ids the shop was already sent (store/event-ids.ts).
  rt.db.transaction(() => {
    rt.meta.setJson(RECONCILE_KEY, marker);
    raiseEventIds(rt.db, rt.now);
  })();
  rt.log.warn({ why }, 'this store is not the one this home last ran: it is reconciled with the suppliers before anything is sent');
}
