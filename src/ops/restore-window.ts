/**
 * The window after a restore, closed early by the operator (`topup restore --close-window`,
 * docs/backup.md "Closing the window early").
 *
 * For 8 days after a reconcile (meta RESTORE_WINDOW_KEY), every file claimed and every new API order
 * on a home with several accounts is looked up at every account before it is sent (store/backup.ts
 * markClaimInRestoreWindow): what the copy did not know may have been bought after it. The operator
 * knows what the program cannot: that no file was claimed after the copy was taken, or that every
 * file since was dropped again and looked up. Then the window only holds new work (its rows wait
 * for an account that cannot be read, then go to review); closing it ends that.
 *
 * MONEY SAFETY. Closing never sends a row blind: the rows and orders already marked for a lookup
 * keep their marks (the store still refuses their intents) and are looked up as before. So by
 * default it is refused while any lookup is unanswered (the operator should know they exist);
 * `--force` closes the window for what comes next and leaves those to their lookup. The window's
 * removal, the record of who closed it, and the audit entry are one transaction.
 */
import type { Db } from '../store/db.js';
import { AuditStore } from '../store/audit.js';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { RECONCILE_KEY, RESTORE_WINDOW_KEY, claimLookups, openRestoreWindow, orderLookups, type RestoreWindow } from '../store/backup.js';

/** meta: when and by whom the window was closed early (status and doctor say it). */
export const WINDOW_CLOSED_KEY = 'restore.windowClosed';

export interface WindowClosed {
  at: number;
  actor: string;
  /** The window as it was when closed. */
  window: RestoreWindow;
  /** Lookups left unanswered when it was closed with --force (they go on). */
  unanswered: number;
}

export interface WindowState {
  /** The window as a claim now meets it (null: none, closed, or one account). */
  open: (RestoreWindow & { accounts: string[] }) | null;
  /** A restore not yet reconciled: the window comes after it; nothing to close yet. */
  reconcileDue: boolean;
  /** Lookups not yet answered: batches held whole, file rows held one by one, API orders. */
  unanswered: { batches: string[]; fileRows: number; apiOrders: number };
}

export function restoreWindowState(db: Db, configured: readonly string[], now: number): WindowState {
  const reconcileDue = db.prepare('SELECT 1 FROM meta WHERE key = ?').get(RECONCILE_KEY) !== undefined;
  const orders = orderLookups(db);
  return {
    open: openRestoreWindow(db, configured, now),
    reconcileDue,
    unanswered: {
      batches: claimLookups(db).map((c) => c.batchId),
      fileRows: orders.filter((o) => o.line !== undefined).length,
      apiOrders: orders.filter((o) => o.line === undefined).length,
    },
  };
}

export function unansweredCount(s: WindowState): number {
  return s.unanswered.batches.length + s.unanswered.fileRows + s.unanswered.apiOrders;
}

export function unansweredText(s: WindowState): string {
  const parts: string[] = [];
  if (s.unanswered.batches.length > 0) parts.push(`${s.unanswered.batches.length} file(s) (${s.unanswered.batches.slice(0, 5).join(', ')})`);
  if (s.unanswered.fileRows > 0) parts.push(`${s.unanswered.fileRows} file row(s)`);
  if (s.unanswered.apiOrders > 0) parts.push(`${s.unanswered.apiOrders} API order(s)`);
  return parts.join(', ');
}

/**
 * Closes the window (one transaction: the window read again, refused if a lookup is unanswered
 * and not forced, removed, the closing recorded in meta and in the audit). Throws TopupError
 * (E_BACKUP) when refused; the refusal is audited too.
 */
export function closeRestoreWindow(db: Db, configured: readonly string[], now: number, opts: { force: boolean; actor: string }): WindowClosed {
  const audit = new AuditStore(db);
  const refuse = (why: string): never => {
    audit.record({ at: now, actor: opts.actor, action: 'restore window close', detail: why, outcome: 'refused' });
    throw new TopupError(ErrorCode.Backup, why);
  };
  const refused = { why: 'restore window not closed' };
  const closed = db.transaction((): WindowClosed | null => {
    const s = restoreWindowState(db, configured, now);
    if (s.reconcileDue) { refused.why = 'restore window not closed: this store is a restored copy not yet reconciled; start the daemon first (it reconciles before it sends anything), then close the window'; return null; }
    if (!s.open) { refused.why = 'no restore window is open on this home (none, already closed or over, or one account)'; return null; }
    const unanswered = unansweredCount(s);
    if (unanswered > 0 && !opts.force) {
      refused.why = `restore window not closed: ${unansweredText(s)} still wait for their restore lookup (topup status); closing it would not send them, but make sure they are what you expect, then close it with --force (they go on waiting for their lookup, then to review)`;
      return null;
    }
    const window: RestoreWindow = { since: s.open.since, until: s.open.until, detail: s.open.detail };
    const out: WindowClosed = { at: now, actor: opts.actor, window, unanswered };
    // Closed for files only: API orders are still looked up until the window's end (RestoreWindow.filesClosedAt).
    db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(JSON.stringify({ ...window, filesClosedAt: now }), RESTORE_WINDOW_KEY);
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(WINDOW_CLOSED_KEY, JSON.stringify(out));
    audit.record({
      at: now,
      actor: opts.actor,
      action: 'restore window close',
      detail: `closed the window after a restore (${window.detail}) early, ${Math.max(0, Math.round((window.until - now) / 3_600_000))} h before it would have; files claimed from now on are sent without a lookup at every account (API orders are still looked up until the window's end)${unanswered > 0 ? `; ${unanswered} lookup(s) still unanswered go on (forced)` : ''}`,
      outcome: 'ok',
    });
    return out;
  }).immediate();
  if (closed === null) return refuse(refused.why);
  return closed;
}
