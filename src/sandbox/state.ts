/**
 * Persistent sandbox state in SQLite: accounts and balances, orders, the money ledger, live stock
 * and admin overrides of the catalog. Every money movement is one transaction that writes the
 * balance and its ledger entry together, so the ledger always explains the balance.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { AccountState, LedgerEntry, OrderRecord } from './types.js';
import { toUsd } from './types.js';

export interface AccountRow { fp: string; balanceMicros: number; state: AccountState; ipAllowlist: string[] | null }

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  fp TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, balance_micros INTEGER NOT NULL,
  state TEXT NOT NULL, ip_allowlist TEXT, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL UNIQUE, account TEXT NOT NULL,
  idem_key TEXT NOT NULL UNIQUE, trxid TEXT NOT NULL, pid TEXT NOT NULL, game TEXT NOT NULL,
  pack_name TEXT NOT NULL, amount_micros INTEGER NOT NULL, quantity INTEGER, user_id TEXT,
  server_id TEXT, more_id TEXT, zone_id TEXT, codes TEXT, status TEXT NOT NULL, error TEXT,
  refunded INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, settle_at INTEGER,
  settle_to TEXT, done_at INTEGER, refund_on_cancel INTEGER NOT NULL DEFAULT 1,
  source TEXT NOT NULL DEFAULT 'api', id_style TEXT);
CREATE INDEX IF NOT EXISTS orders_account ON orders(account, created_at DESC, seq DESC);
CREATE INDEX IF NOT EXISTS orders_due ON orders(status, settle_at);
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, t INTEGER NOT NULL, account TEXT NOT NULL, kind TEXT NOT NULL,
  order_id TEXT, trxid TEXT, amount_micros INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS stock (id TEXT PRIMARY KEY, qty INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS product_overrides (id TEXT PRIMARY KEY, price REAL, status TEXT);
CREATE TABLE IF NOT EXISTS starting_balances (fp TEXT PRIMARY KEY, micros INTEGER NOT NULL);
`;

/** Columns added after the first state files were written; an older file gets them with their defaults. */
const ADDED_COLUMNS: [name: string, ddl: string][] = [
  ['refund_on_cancel', 'refund_on_cancel INTEGER NOT NULL DEFAULT 1'],
  ['source', "source TEXT NOT NULL DEFAULT 'api'"],
  ['id_style', 'id_style TEXT'],
];

export const keyHash = (apiKey: string): string => createHash('sha256').update(apiKey).digest('hex');
/** The only way an account is named in logs, admin views and the database. */
export const fingerprint = (apiKey: string): string => keyHash(apiKey).slice(0, 12);

type Row = Record<string, unknown>;

function toOrder(r: Row): OrderRecord {
  return {
    orderId: r.order_id as string, account: r.account as string, idemKey: r.idem_key as string,
    trxid: r.trxid as string, pid: r.pid as string, game: r.game as string, packName: r.pack_name as string,
    amountMicros: r.amount_micros as number, quantity: r.quantity as number | null,
    userId: r.user_id as string | null, serverId: r.server_id as string | null, moreId: r.more_id as string | null,
    zoneId: r.zone_id as string | null, codes: r.codes ? (JSON.parse(r.codes as string) as string[]) : null,
    status: r.status as OrderRecord['status'], error: r.error as string | null, refunded: r.refunded === 1,
    createdAt: r.created_at as number, settleAt: r.settle_at as number | null,
    settleTo: r.settle_to as OrderRecord['settleTo'], doneAt: r.done_at as number | null,
    refundOnCancel: r.refund_on_cancel !== 0, source: r.source === 'manual' ? 'manual' : 'api',
    idStyle: r.id_style === 'spec' || r.id_style === 'real-world' ? r.id_style : null,
  };
}

function toAccount(r: Row): AccountRow {
  return {
    fp: r.fp as string, balanceMicros: r.balance_micros as number, state: r.state as AccountState,
    ipAllowlist: r.ip_allowlist === null ? null : (JSON.parse(r.ip_allowlist as string) as string[]),
  };
}

export class SandboxState {
  readonly db: Database.Database;

  constructor(file?: string) {
    this.db = new Database(file ?? ':memory:');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 2000');
    this.db.exec(SCHEMA);
    const have = new Set((this.db.prepare('PRAGMA table_info(orders)').all() as { name: string }[]).map((c) => c.name));
    for (const [name, ddl] of ADDED_COLUMNS) if (!have.has(name)) this.db.exec(`ALTER TABLE orders ADD COLUMN ${ddl}`);
  }

  close(): void { this.db.close(); }

  /** A restart on the same state file keeps an existing account as it was (balance, state, allowlist). */
  ensureAccount(apiKey: string, init: { balanceMicros: number; state: AccountState; ipAllowlist: string[] | null }): string {
    const fp = fingerprint(apiKey);
    const seq = (this.db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number }).n;
    this.db.prepare(`INSERT OR IGNORE INTO accounts (fp, key_hash, balance_micros, state, ip_allowlist, seq)
      VALUES (?, ?, ?, ?, ?, ?)`).run(fp, keyHash(apiKey), init.balanceMicros, init.state,
      init.ipAllowlist === null ? null : JSON.stringify(init.ipAllowlist), seq);
    return fp;
  }

  accountByKey(apiKey: string): AccountRow | undefined {
    const r = this.db.prepare('SELECT * FROM accounts WHERE key_hash = ?').get(keyHash(apiKey)) as Row | undefined;
    return r && toAccount(r);
  }

  account(fp: string): AccountRow | undefined {
    const r = this.db.prepare('SELECT * FROM accounts WHERE fp = ?').get(fp) as Row | undefined;
    return r && toAccount(r);
  }

  accounts(): AccountRow[] {
    return (this.db.prepare('SELECT * FROM accounts ORDER BY seq').all() as Row[]).map(toAccount);
  }

  updateAccount(fp: string, patch: { state?: AccountState; ipAllowlist?: string[] | null }): void {
    if (patch.state !== undefined) this.db.prepare('UPDATE accounts SET state = ? WHERE fp = ?').run(patch.state, fp);
    if (patch.ipAllowlist !== undefined) {
      this.db.prepare('UPDATE accounts SET ip_allowlist = ? WHERE fp = ?')
        .run(patch.ipAllowlist === null ? null : JSON.stringify(patch.ipAllowlist), fp);
    }
  }

  /** Adds `deltaMicros` (may be negative) to a balance with a 'topup' ledger entry. */
  topup(fp: string, deltaMicros: number, now: number): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE fp = ?').run(deltaMicros, fp);
      this.ledgerAdd(now, fp, 'topup', null, null, deltaMicros);
    })();
  }

  /**
   * A player check charged by the check tariff (players.ts): the balance and its ledger entry
   * (kind `check`, the check's trxid, no order) in one transaction. False when the balance cannot pay.
   */
  chargeCheck(fp: string, micros: number, trxid: string, now: number): boolean {
    return this.db.transaction(() => {
      const a = this.account(fp);
      if (!a || a.balanceMicros < micros) return false;
      this.db.prepare('UPDATE accounts SET balance_micros = balance_micros - ? WHERE fp = ?').run(micros, fp);
      this.ledgerAdd(now, fp, 'check', null, trxid, -micros);
      return true;
    })();
  }

  /**
   * The starting balance an account was given (the setting it was made with, or last changed
   * to: home.ts). For an account of an older state file, which did not record it, it is what the
   * ledger does not explain: every movement since the start is in the ledger.
   */
  startingBalance(fp: string): number | undefined {
    const r = this.db.prepare('SELECT micros FROM starting_balances WHERE fp = ?').get(fp) as { micros: number } | undefined;
    if (r) return r.micros;
    const a = this.account(fp);
    if (!a) return undefined;
    const moved = (this.db.prepare('SELECT coalesce(sum(amount_micros), 0) AS m FROM ledger WHERE account = ?').get(fp) as { m: number }).m;
    return a.balanceMicros - moved;
  }

  setStartingBalance(fp: string, micros: number): void {
    this.db.prepare('INSERT INTO starting_balances (fp, micros) VALUES (?, ?) ON CONFLICT(fp) DO UPDATE SET micros = excluded.micros').run(fp, micros);
  }

  /** The sequence the next order's id comes from (ORD<1000000 + seq>): the last one given out. */
  orderSeq(): number {
    const r = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'orders'").get() as { seq: number } | undefined;
    return r?.seq ?? 0;
  }

  /** Makes the next order's sequence larger than `seq` (never smaller than it already is). */
  raiseOrderSeq(seq: number): void {
    this.db.transaction(() => {
      if (seq <= this.orderSeq()) return;
      const changed = this.db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'orders'").run(seq).changes;
      if (changed === 0) this.db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('orders', ?)").run(seq);
    })();
  }

  private ledgerAdd(t: number, fp: string, kind: LedgerEntry['kind'], orderId: string | null, trxid: string | null, micros: number): void {
    this.db.prepare('INSERT INTO ledger (t, account, kind, order_id, trxid, amount_micros) VALUES (?, ?, ?, ?, ?, ?)')
      .run(t, fp, kind, orderId, trxid, micros);
  }

  ledger(): LedgerEntry[] {
    return (this.db.prepare('SELECT * FROM ledger ORDER BY seq').all() as Row[]).map((r) => ({
      time: r.t as number, account: r.account as string, kind: r.kind as LedgerEntry['kind'],
      orderId: r.order_id as string | null, trxid: r.trxid as string | null, amountUsd: toUsd(r.amount_micros as number),
    }));
  }

  initStock(id: string, qty: number): void {
    this.db.prepare('INSERT OR IGNORE INTO stock (id, qty) VALUES (?, ?)').run(id, qty);
  }

  stock(id: string): number | undefined {
    return (this.db.prepare('SELECT qty FROM stock WHERE id = ?').get(id) as { qty: number } | undefined)?.qty;
  }

  setStock(id: string, qty: number): void {
    this.db.prepare('INSERT INTO stock (id, qty) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET qty = excluded.qty').run(id, qty);
  }

  overrides(): Map<string, { price: number | null; status: string | null }> {
    const rows = this.db.prepare('SELECT * FROM product_overrides').all() as Row[];
    return new Map(rows.map((r) => [r.id as string, { price: r.price as number | null, status: r.status as string | null }]));
  }

  setOverride(id: string, patch: { price?: number; status?: string }): void {
    this.db.prepare(`INSERT INTO product_overrides (id, price, status) VALUES (@id, @price, @status)
      ON CONFLICT(id) DO UPDATE SET price = coalesce(@price, price), status = coalesce(@status, status)`)
      .run({ id, price: patch.price ?? null, status: patch.status ?? null });
  }

  /**
   * Charges, takes stock and creates the order in one transaction; the `orderId` comes from the
   * row's sequence so it is unique across restarts. An order created already cancelled (a
   * real-world failure at submit) gets its refund, if it has one, in the same transaction.
   */
  createOrder(o: Omit<OrderRecord, 'orderId'>, stockTaken: number): OrderRecord {
    return this.db.transaction(() => {
      const refunded = o.status === 'cancelled' && o.refundOnCancel;
      const info = this.db.prepare(`INSERT INTO orders (order_id, account, idem_key, trxid, pid, game, pack_name,
        amount_micros, quantity, user_id, server_id, more_id, zone_id, codes, status, error, refunded, created_at,
        settle_at, settle_to, done_at, refund_on_cancel, source, id_style) VALUES ('pending-' || hex(randomblob(8)), @account,
        @idemKey, @trxid, @pid, @game, @packName, @amountMicros, @quantity, @userId, @serverId, @moreId, @zoneId, @codes,
        @status, @error, @refunded, @createdAt, @settleAt, @settleTo, @doneAt, @refundOnCancel, @source, @idStyle)`)
        .run({ ...o, codes: o.codes ? JSON.stringify(o.codes) : null, refunded: refunded ? 1 : 0, refundOnCancel: o.refundOnCancel ? 1 : 0 });
      const orderId = `ORD${String(1_000_000 + Number(info.lastInsertRowid))}`;
      // A manual order was not placed through the API: it has no trxid, and neither has its charge.
      const trxid = o.source === 'manual' ? null : o.trxid;
      this.db.prepare('UPDATE orders SET order_id = ? WHERE seq = ?').run(orderId, info.lastInsertRowid);
      this.db.prepare('UPDATE accounts SET balance_micros = balance_micros - ? WHERE fp = ?').run(o.amountMicros, o.account);
      this.ledgerAdd(o.createdAt, o.account, 'charge', orderId, trxid, -o.amountMicros);
      if (refunded) {
        this.db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE fp = ?').run(o.amountMicros, o.account);
        this.ledgerAdd(o.createdAt, o.account, 'refund', orderId, trxid, o.amountMicros);
      }
      if (stockTaken > 0) this.db.prepare('UPDATE stock SET qty = qty - ? WHERE id = ?').run(stockTaken, o.pid);
      return { ...o, orderId, refunded };
    })();
  }

  /** Creates the account's manual order unless it has one or cannot pay for it (real-world.ts). */
  createManualOrder(o: Omit<OrderRecord, 'orderId'>): OrderRecord | undefined {
    return this.db.transaction(() => {
      if (this.orderByIdemKey(o.idemKey)) return undefined;
      const a = this.account(o.account);
      if (!a || a.balanceMicros < o.amountMicros) return undefined;
      return this.createOrder(o, 0);
    })();
  }

  orderByIdemKey(key: string): OrderRecord | undefined {
    const r = this.db.prepare('SELECT * FROM orders WHERE idem_key = ?').get(key) as Row | undefined;
    return r && toOrder(r);
  }

  order(orderId: string): OrderRecord | undefined {
    const r = this.db.prepare('SELECT * FROM orders WHERE order_id = ?').get(orderId) as Row | undefined;
    return r && toOrder(r);
  }

  /** `after`: only orders made after it (a history kept for an age only). */
  history(fp: string, limit: number, offset: number, after = Number.MIN_SAFE_INTEGER): OrderRecord[] {
    return (this.db.prepare('SELECT * FROM orders WHERE account = ? AND created_at > ? ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?')
      .all(fp, after, limit, offset) as Row[]).map(toOrder);
  }

  countOrders(fp: string, after = Number.MIN_SAFE_INTEGER): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM orders WHERE account = ? AND created_at > ?').get(fp, after) as { n: number }).n;
  }

  allOrders(): OrderRecord[] {
    return (this.db.prepare('SELECT * FROM orders ORDER BY seq').all() as Row[]).map(toOrder);
  }

  /**
   * Moves every processing order whose time has come to its decided end. The end time is the
   * decided `settle_at`, not `now`, so durations do not depend on when somebody looked.
   */
  settleDue(now: number): void {
    const due = this.db.prepare("SELECT * FROM orders WHERE status = 'processing' AND settle_at <= ?").all(now) as Row[];
    if (due.length === 0) return;
    this.db.transaction(() => {
      for (const r of due.map(toOrder)) {
        if (r.settleTo === 'cancelled') {
          this.db.prepare("UPDATE orders SET status = 'cancelled', error = 'INVALID PLAYER', refunded = ?, done_at = settle_at WHERE order_id = ?")
            .run(r.refundOnCancel ? 1 : 0, r.orderId);
          // An unrefunded cancel keeps the charge: no refund entry, the balance stays down.
          if (r.refundOnCancel) {
            this.db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE fp = ?').run(r.amountMicros, r.account);
            this.ledgerAdd(r.settleAt ?? now, r.account, 'refund', r.orderId, r.trxid, r.amountMicros);
          }
        } else {
          this.db.prepare("UPDATE orders SET status = 'completed', done_at = settle_at WHERE order_id = ?").run(r.orderId);
        }
      }
    })();
  }
}
