/**
 * "The same account" is its endpoint and key, not its name (issue 29, kernel/identity.ts).
 *
 * Every send records on its row the origin it went to and the key's fingerprint (rows.ts
 * markSending, which also refuses to send a row whose record names another identity). At start,
 * before anything is sent, reconcile() holds the accounts file to those records:
 *
 *  - an account that holds unsettled rows (in flight or in doubt, placed and not ended, in review)
 *    sent to another origin or with another key is a conflict: only the account those rows were
 *    sent to can tell whether they were charged, and sending them elsewhere buys them there too
 *    (an adversarial review: a re-pointed account charged an in-doubt trxid at a second supplier).
 *    The start is refused with the rows named, until the file points back, or an operator says
 *    it is the same supplier account (confirm(): a regenerated key, another host of the same API);
 *  - an account renamed in the file (its name gone, its origin and key under a new name) takes its
 *    rows with it: they follow the identity, not the name. Recorded in account_renames, which is
 *    also what lets the rows_account_moves trigger allow the change (migration 13), and audited.
 *    Every other stored reference by name goes with them (renameReferences: the accounts rows
 *    left, left_trxids, and every per-account record of store/account-keys.ts: pause, call log,
 *    learned limits, balance readings, report marks), so the store has one name per account at
 *    any time.
 *
 * All of it in one IMMEDIATE transaction: two processes starting at once see one outcome.
 */
import type { Db } from './db.js';
import type { AccountIdentity } from '../kernel/identity.js';
import { rowStates } from './state-sql.js';
import { IN_FLIGHT_STATES, CHECKED_STATES, PLACED_STATES, type RowState } from './row-states.js';
import { AuditStore } from './audit.js';
import { ACCOUNT_META_KEYS, ACCOUNT_TABLES } from './account-keys.js';

/** Rows whose money only the account they were sent to can settle. */
export const UNSETTLED_STATES: readonly RowState[] = Object.freeze([...IN_FLIGHT_STATES, ...CHECKED_STATES, ...PLACED_STATES, 'review']);

export interface ConfiguredIdentity extends AccountIdentity {
  name: string;
}

export interface IdentityConflict {
  account: string;
  /** What the file says now. */
  now: AccountIdentity;
  /** What the rows were sent to (one entry per distinct identity). */
  sentTo: AccountIdentity[];
  rows: number;
  /** A few of them, to look up. */
  trxids: string[];
  /**
   * The store is a restored copy not reconciled yet (meta restore.reconcile) and the account was
   * re-pointed since the copy: its rows are open, and what was bought at the old endpoint after the
   * copy can only be looked up there (adv9: the reconcile swept the new endpoint, found nothing, and
   * bought the rows a second time).
   */
  restored?: boolean;
}

/** meta restore.reconcile (store/backup.ts RECONCILE_KEY), read here without importing the backup code. */
const RECONCILE_META_KEY = 'restore.reconcile';
/** The states the reconcile after a restore looks up (ops/restore-reconcile.ts LOOKED_UP). */
const LOOKED_UP_STATES: readonly RowState[] = ['pending', 'sending', 'resending', 'verifying', 'searching'];

/**
 * A restored copy, not reconciled yet, whose account `now` names another endpoint or key than the
 * copy recorded for it, while any row of the store is open (it may have been bought, or moved and
 * bought, at the old endpoint after the copy was taken).
 */
function restoredConflictOf(db: Db, account: string, now: AccountIdentity): IdentityConflict | undefined {
  if (db.prepare('SELECT 1 FROM meta WHERE key = ?').get(RECONCILE_META_KEY) === undefined) return undefined;
  const was = db.prepare('SELECT origin, key_fp AS keyFp FROM account_identities WHERE name = ?').get(account) as AccountIdentity | undefined;
  if (!was || (was.origin === now.origin && was.keyFp === now.keyFp)) return undefined;
  const where = `state IN (${rowStates(LOOKED_UP_STATES)})`;
  const n = (db.prepare(`SELECT count(*) AS n FROM rows WHERE ${where}`).get() as { n: number }).n;
  if (n === 0) return undefined;
  const trxids = (db.prepare(`SELECT coalesce(trxid, '(none)') AS trxid FROM rows WHERE ${where} ORDER BY batch_id, idx LIMIT 5`).all() as { trxid: string }[]).map((r) => r.trxid);
  return { account, now, sentTo: [was], rows: n, trxids, restored: true };
}

export interface Renamed {
  from: string;
  to: string;
  rows: number;
}

/**
 * Every other stored reference to an account by name, renamed with its rows: the accounts a row
 * left (its moves, which failover reads to never send a row back to an account that refused it,
 * and the result's `refusedBy` shows) and the trxids it left there (left_trxids). One name per
 * account in the store at any time: left under the old name, a renamed account would be two
 * accounts to failover, and one supplier account would have two names in one result file.
 */
function renameReferences(db: Db, from: string, to: string): void {
  db.prepare('UPDATE left_trxids SET account = ? WHERE account = ?').run(to, from);
  // Everything else kept per account (store/account-keys.ts): its pause, its call log (what its rate
  // gate counts), what the gate learned from 429s, its balance readings and report marks. Left under
  // the old name, the renamed account would start unpaused, with an empty rate budget and limits to
  // learn again by being refused. What the new name held before (an account of that name removed
  // earlier, another endpoint or key) is not this account's: its state is replaced, its call records
  // kept (more calls counted only slows the gate down).
  for (const { table, merge } of ACCOUNT_TABLES) {
    if (merge) {
      db.prepare(merge).run({ from, to });
      db.prepare(`DELETE FROM ${table} WHERE account = ?`).run(from);
    } else {
      db.prepare(`UPDATE ${table} SET account = ? WHERE account = ?`).run(to, from);
    }
  }
  const get = db.prepare('SELECT value FROM meta WHERE key = ?');
  const del = db.prepare('DELETE FROM meta WHERE key = ?');
  const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  for (const keyOf of ACCOUNT_META_KEYS) {
    const was = get.get(keyOf(from)) as { value: string } | undefined;
    del.run(keyOf(to));
    if (was) {
      put.run(keyOf(to), was.value);
      del.run(keyOf(from));
    }
  }
  const moved = db.prepare(`SELECT batch_id AS batchId, idx, moves_json AS moves FROM rows WHERE moves_json IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(rows.moves_json) WHERE json_extract(value, '$.from') = ?)`).all(from) as { batchId: string; idx: number; moves: string }[];
  const update = db.prepare('UPDATE rows SET moves_json = ? WHERE batch_id = ? AND idx = ?');
  for (const r of moved) {
    const moves = (JSON.parse(r.moves) as { from: string }[]).map((m) => (m.from === from ? { ...m, from: to } : m));
    update.run(JSON.stringify(moves), r.batchId, r.idx);
  }
}

/** The rows of `account` sent to another identity than `now` and not settled. */
function conflictOf(db: Db, account: string, now: AccountIdentity): IdentityConflict | undefined {
  const where = `account = @account AND state IN (${rowStates(UNSETTLED_STATES)}) AND sent_origin IS NOT NULL AND (sent_origin <> @origin OR sent_key_fp <> @keyFp)`;
  const p = { account, origin: now.origin, keyFp: now.keyFp };
  const n = (db.prepare(`SELECT count(*) AS n FROM rows WHERE ${where}`).get(p) as { n: number }).n;
  if (n === 0) return undefined;
  const trxids = (db.prepare(`SELECT trxid FROM rows WHERE ${where} ORDER BY batch_id, idx LIMIT 5`).all(p) as { trxid: string }[]).map((r) => r.trxid);
  const sentTo = (db.prepare(`SELECT DISTINCT sent_origin AS origin, sent_key_fp AS keyFp FROM rows WHERE ${where}`).all(p) as AccountIdentity[]);
  return { account, now, sentTo, rows: n, trxids };
}

/** meta restore.window (store/backup.ts RESTORE_WINDOW_KEY), read here without importing the backup code. */
const WINDOW_META_KEY = 'restore.window';

/**
 * Accounts the store knows that are not in the accounts file any more: since when (removed_at,
 * set once, at the first start without them). After a restore, a file claimed in the window is
 * looked up at every account that may have bought its rows after the copy was taken, one taken
 * out of the file since included (store/backup.ts markClaimInRestoreWindow); one taken out before
 * the window reaches back does not hold anything.
 *
 * When: in a live store (neither a copy waiting for its reconcile nor within the window after
 * one) every send is on record, so the account bought nothing after the last send recorded on it
 * (a row that left it by a failover was proven not bought there): a store upgraded from a version
 * without removed_at, whose account went long ago, is not held for it. In a copy, or within the
 * window, sends after the copy are unknown: now.
 */
function markRemoved(db: Db, configured: ReadonlySet<string>, now: number): void {
  const gone = (db.prepare('SELECT name, since FROM account_identities WHERE removed_at IS NULL').all() as { name: string; since: number }[]).filter((k) => !configured.has(k.name));
  if (gone.length === 0) return;
  const win = db.prepare('SELECT value FROM meta WHERE key = ?').get(WINDOW_META_KEY) as { value: string } | undefined;
  const windowOpen = win !== undefined && now < (JSON.parse(win.value) as { until: number }).until;
  const live = !windowOpen && db.prepare('SELECT 1 FROM meta WHERE key = ?').get(RECONCILE_META_KEY) === undefined;
  const lastSent = db.prepare('SELECT max(last_sent_at) AS at FROM rows WHERE account = ?');
  const set = db.prepare('UPDATE account_identities SET removed_at = ? WHERE name = ? AND removed_at IS NULL');
  for (const k of gone) {
    const at = live ? Math.max(k.since, (lastSent.get(k.name) as { at: number | null }).at ?? 0) : now;
    set.run(at, k.name);
  }
}

/**
 * The name kept for what an account name pointed at before it was pointed elsewhere: `second (was
 * https://b.example, key 1a2b…)`. Not a name accounts.toml can give (names are plain words), so it
 * is never configured, never sent with, and only ever read as "an account that may have bought".
 */
export function retiredName(name: string, origin: string, keyFp: string): string {
  return `${name} (was ${origin}, key ${keyFp})`;
}

/** Is this a name retiredName made? Then the account it was, and since when it points elsewhere. */
export function isRetiredName(name: string): boolean {
  return / \(was .+, key [^)]+\)$/.test(name);
}

/**
 * An account name pointed at another endpoint or key (accounts.toml edited, or a process started
 * with another accounts file) keeps what it pointed at before as a retired identity, removed now.
 * The identities are keyed by name, and the upsert below replaced the old one without a trace:
 * after a restore, a file re-dropped in the window was then looked up at the new endpoint only,
 * found nothing there, and its rows bought on a failover at the old one were bought again (an
 * adversarial review, 4 of 4, also with a `topup submit` beside a daemon). A retired identity is
 * in the window's lookups (store/backup.ts) as an account that cannot be read: its claims are held,
 * then their rows go to review. Pointing the name back removes it; `topup accounts confirm`
 * (the same supplier account) removes them all.
 */
function retireRepointed(db: Db, configured: readonly ConfiguredIdentity[], now: number): void {
  const was = db.prepare('SELECT origin, key_fp AS keyFp, since FROM account_identities WHERE name = ?');
  const keep = db.prepare('INSERT INTO account_identities (name, origin, key_fp, since, removed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET removed_at = excluded.removed_at');
  const drop = db.prepare('DELETE FROM account_identities WHERE name = ?');
  for (const c of configured) {
    // Pointed back where it was: that identity is read under its name again.
    drop.run(retiredName(c.name, c.origin, c.keyFp));
    const old = was.get(c.name) as { origin: string; keyFp: string; since: number } | undefined;
    if (old && (old.origin !== c.origin || old.keyFp !== c.keyFp)) keep.run(retiredName(c.name, old.origin, old.keyFp), old.origin, old.keyFp, old.since, now);
  }
}

/** `topup accounts confirm`: the name is the same supplier account as before, so nothing it pointed at before is another account. */
function forgetRetired(db: Db, name: string): void {
  const rows = db.prepare('SELECT name, origin, key_fp AS keyFp FROM account_identities').all() as { name: string; origin: string; keyFp: string }[];
  const drop = db.prepare('DELETE FROM account_identities WHERE name = ?');
  for (const r of rows) if (r.name === retiredName(name, r.origin, r.keyFp)) drop.run(r.name);
}

class Conflicts extends Error {
  constructor(readonly found: IdentityConflict[]) {
    super('account identity conflicts');
  }
}

/**
 * The renames the accounts file makes against what the store recorded: a known account whose name
 * the file no longer has, its endpoint and key under a new name. Reads only.
 */
function findRenames(db: Db, configured: readonly ConfiguredIdentity[]): { old: ConfiguredIdentity; to: ConfiguredIdentity; rows: number }[] {
  const names = new Set(configured.map((c) => c.name));
  const known = db.prepare('SELECT name, origin, key_fp AS keyFp FROM account_identities').all() as ConfiguredIdentity[];
  const out: { old: ConfiguredIdentity; to: ConfiguredIdentity; rows: number }[] = [];
  for (const old of known) {
    // A retired identity (retireRepointed) is not an account to rename: it never sends.
    if (names.has(old.name) || isRetiredName(old.name)) continue;
    const to = configured.find((c) => c.origin === old.origin && c.keyFp === old.keyFp);
    if (!to) continue;
    out.push({ old, to, rows: (db.prepare('SELECT count(*) AS n FROM rows WHERE account = ?').get(old.name) as { n: number }).n });
  }
  return out;
}

/**
 * Accounts this process knows by a name the store has since given up: renamed (the same endpoint
 * and key under another name) by a process that started after this one, on an accounts file that
 * names it otherwise (the daemon restarted on an edited accounts.toml while a `topup submit` ran on
 * the file as it was). This process cannot send or follow the rows that went with the new name (it
 * has no account of that name), and no other process takes a batch it holds: they would wait for
 * ever (the simulator, seed 101: a submit's rows waited `account` for six hours after the file was
 * put back). `since`: when this process read its accounts (a rename recorded before that is one it
 * started with). Reads only.
 */
export function renamedAway(db: Db, configured: readonly ConfiguredIdentity[], since: number): { mine: string; now: string }[] {
  const names = new Set(configured.map((c) => c.name));
  const renamed = db.prepare(`SELECT r.to_name AS now FROM account_renames r JOIN account_identities i ON i.name = r.to_name AND i.origin = r.origin AND i.key_fp = r.key_fp
    WHERE r.from_name = ? AND r.origin = ? AND r.key_fp = ? AND r.at >= ? ORDER BY r.at DESC LIMIT 1`);
  const out: { mine: string; now: string }[] = [];
  for (const c of configured) {
    const r = renamed.get(c.name, c.origin, c.keyFp, since) as { now: string } | undefined;
    if (r && !names.has(r.now)) out.push({ mine: c.name, now: r.now });
  }
  return out;
}

/**
 * What reconcileAccounts would do, without doing it: for a command that only reads (doctor, status,
 * balance …). A rename is applied by a process that sends (runtime.ts), when it opens the home: a
 * read-only command applying it would move the rows, the pause and the call log of an account to a
 * name the running daemon does not know (it read the accounts file when it started). So the
 * renames are returned as pending, and the conflicts that would refuse a start (reads only: a
 * renamed account has the same endpoint and key, so its rows can never be in conflict).
 */
export function pendingAccountChanges(db: Db, configured: readonly ConfiguredIdentity[]): { pending: Renamed[]; conflicts: IdentityConflict[] } {
  return db.transaction(() => ({
    pending: findRenames(db, configured).map((r) => ({ from: r.old.name, to: r.to.name, rows: r.rows })),
    conflicts: configured.map((c) => conflictOf(db, c.name, c) ?? restoredConflictOf(db, c.name, c)).filter((c): c is IdentityConflict => c !== undefined),
  }))();
}

/**
 * Holds the configured accounts to what the store recorded (see the file's comment). Renames are
 * applied; conflicts roll everything back and are returned (the caller refuses the start).
 */
export function reconcileAccounts(db: Db, configured: readonly ConfiguredIdentity[], now: number, actor: string): { renamed: Renamed[]; conflicts: IdentityConflict[] } {
  const renamed: Renamed[] = [];
  const run = db.transaction(() => {
    const names = new Set(configured.map((c) => c.name));
    for (const { old, to, rows } of findRenames(db, configured)) {
      db.prepare('INSERT INTO account_renames (from_name, to_name, origin, key_fp, at, rows) VALUES (?, ?, ?, ?, ?, ?)').run(old.name, to.name, old.origin, old.keyFp, now, rows);
      db.prepare('UPDATE rows SET account = ? WHERE account = ?').run(to.name, old.name);
      renameReferences(db, old.name, to.name);
      db.prepare('DELETE FROM account_identities WHERE name = ?').run(old.name);
      new AuditStore(db).record({ at: now, actor, action: 'account renamed', detail: `account "${old.name}" is "${to.name}" now (same endpoint ${old.origin} and key ${old.keyFp}): its ${rows} rows follow it`, outcome: 'ok' });
      renamed.push({ from: old.name, to: to.name, rows });
    }
    const conflicts = configured.map((c) => conflictOf(db, c.name, c) ?? restoredConflictOf(db, c.name, c)).filter((c): c is IdentityConflict => c !== undefined);
    if (conflicts.length > 0) throw new Conflicts(conflicts);
    retireRepointed(db, configured, now);
    const upsert = db.prepare(`INSERT INTO account_identities (name, origin, key_fp, since) VALUES (@name, @origin, @keyFp, @now)
      ON CONFLICT (name) DO UPDATE SET origin = excluded.origin, key_fp = excluded.key_fp, removed_at = NULL, since = CASE WHEN origin IS excluded.origin AND key_fp IS excluded.key_fp THEN since ELSE excluded.since END`);
    for (const c of configured) upsert.run({ name: c.name, origin: c.origin, keyFp: c.keyFp, now });
    markRemoved(db, names, now);
  });
  try {
    run.immediate();
    return { renamed, conflicts: [] };
  } catch (err) {
    if (err instanceof Conflicts) return { renamed: [], conflicts: err.found };
    throw err;
  }
}

/**
 * The operator's word that `account`, as the file names it now, is the same supplier account its
 * unsettled rows were sent to (a regenerated key, another host of the same API): their records
 * take the new identity, so they are followed and resent there. Audited with both identities and
 * the number of rows. Returns how many rows it moved over.
 */
export function confirmAccount(db: Db, account: ConfiguredIdentity, now: number, actor: string): { rows: number; from: AccountIdentity[] } {
  return db.transaction(() => {
    const c = conflictOf(db, account.name, account);
    const rows = c?.rows ?? 0;
    if (c) {
      db.prepare(`UPDATE rows SET sent_origin = @origin, sent_key_fp = @keyFp WHERE account = @account AND state IN (${rowStates(UNSETTLED_STATES)}) AND sent_origin IS NOT NULL`)
        .run({ account: account.name, origin: account.origin, keyFp: account.keyFp });
    }
    db.prepare(`INSERT INTO account_identities (name, origin, key_fp, since) VALUES (@name, @origin, @keyFp, @now)
      ON CONFLICT (name) DO UPDATE SET origin = excluded.origin, key_fp = excluded.key_fp, since = excluded.since`).run({ name: account.name, origin: account.origin, keyFp: account.keyFp, now });
    forgetRetired(db, account.name);
    const from = c?.sentTo ?? [];
    new AuditStore(db).record({
      at: now,
      actor,
      action: 'account confirmed',
      detail: `account "${account.name}" confirmed as the same supplier account at ${account.origin} with key ${account.keyFp}${from.length > 0 ? `; ${rows} unsettled rows sent to ${from.map((f) => `${f.origin} (key ${f.keyFp})`).join(', ')} follow it` : '; no unsettled row was sent elsewhere'}`,
      outcome: 'ok',
    });
    return { rows, from };
  }).immediate();
}

/** The message that refuses a start: every conflict, its rows, and what to do. */
export function conflictMessage(conflicts: readonly IdentityConflict[], file: string): string {
  return conflicts
    .map((c) => {
      const was = c.sentTo.map((s) => `${s.origin} (key ${s.keyFp})`).join(', ');
      if (c.restored) {
        return `start refused: this store is a restored copy not yet reconciled, and account "${c.account}" now names ${c.now.origin} (key ${c.now.keyFp}), but when the copy was taken it named ${was}; ${c.rows} open row${c.rows === 1 ? '' : 's'} (trxid ${c.trxids.join(', ')}${c.rows > c.trxids.length ? ', …' : ''}) may have been bought there after the copy, which only that account can tell: sending them now could buy them twice. Point "${c.account}" in ${file} back to ${was.replace(/ \(key .*\)$/, '')} with its key for the first start (the reconcile looks them up there), or, if it is the same supplier account, run: topup accounts confirm ${c.account}`;
      }
      const more = c.rows > c.trxids.length ? `, … (${c.rows} in all)` : '';
      return `account "${c.account}" now names ${c.now.origin} (key ${c.now.keyFp}), but ${c.rows} unsettled row${c.rows === 1 ? ' was' : 's were'} sent to ${was} (trxid ${c.trxids.join(', ')}${more}): only that account can tell whether ${c.rows === 1 ? 'it was' : 'they were'} charged, and sending ${c.rows === 1 ? 'it' : 'them'} elsewhere could buy ${c.rows === 1 ? 'it' : 'them'} twice. Point "${c.account}" in ${file} back to ${was.includes(',') ? 'where they were sent' : was.replace(/ \(key .*\)$/, '')} with its key until they settle, or, if it is the same supplier account (a regenerated key, another host of the same API), run: topup accounts confirm ${c.account}`;
    })
    .join('\n');
}
