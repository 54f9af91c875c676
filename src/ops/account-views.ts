/**
 * What the views show of a home's supplier accounts, one account at a time: the same pack's price
 * and stock at each account (`topup catalog --compare`), the USD each account's unfinished batches
 * still have to spend (validate's plan, `topup balance`), and its calls in the last minute and rows
 * waiting (`topup status`, the console). Reads only; the API is called by the commands that need it.
 *
 * The packs are matched across accounts by the routing's own rule (account/routing.ts samePackAt:
 * the [[pack]] table first, else the same game slug and pack name), so what --compare pairs is
 * what a load would treat as one purchase.
 */
import { samePackAt, type AccountIndex } from '../account/routing.js';
import type { PackAlias } from '../config/accounts.js';
import { isActive } from '../intake/catalog-index.js';
import type { Product } from '../api/schemas.js';
import { ORDERING_BATCH_STATES } from '../store/batch-states.js';
import type { Runtime } from '../runtime.js';
import type { Db } from '../store/db.js';
import { roundCents } from '../kernel/money.js';

export interface PackOffer {
  account: string;
  pid: string;
  priceUsd: number;
  status: string;
  /** Codes in stock (null: the catalog gives no count); 0 when the catalog says out of stock. */
  stock: number | null;
  /** Active and not out of stock: routing may place rows on it. */
  orderable: boolean;
}

export interface ComparedPack {
  slug: string;
  game: string;
  pack: string;
  /** In the order of accounts.toml; only the accounts that list the pack. */
  offers: PackOffer[];
  /** The orderable offer with the lowest price (the first in file order on a tie); null when none is orderable. */
  cheapest: string | null;
}

function offerOf(account: string, p: Product): PackOffer {
  const active = isActive(p.status);
  return { account, pid: p.id, priceUsd: p.price, status: p.status, stock: p.inStock === false ? 0 : (p.quantity ?? null), orderable: active && p.inStock !== false };
}

/**
 * Every pack of every account, each once, with its offer at every account that lists it. A pack is
 * grouped under the first account (in file order) that lists it; an account's product already
 * paired with an earlier account's pack is not listed again.
 */
export function comparePacks(list: readonly AccountIndex[], aliases: readonly PackAlias[]): ComparedPack[] {
  const taken = new Set<string>();
  const key = (account: string, pid: string): string => `${account}\u0000${pid}`;
  const out: ComparedPack[] = [];
  for (const at of list) {
    for (const p of at.index.products) {
      if (taken.has(key(at.name, p.id))) continue;
      taken.add(key(at.name, p.id));
      const offers: PackOffer[] = [offerOf(at.name, p)];
      const entry = at.index.byPid(p.id);
      if (entry) {
        for (const other of list) {
          if (other === at) continue;
          const e = samePackAt(entry, other, aliases, list);
          if (!e || taken.has(key(other.name, e.product.id))) continue;
          taken.add(key(other.name, e.product.id));
          offers.push(offerOf(other.name, e.product));
        }
      }
      const order = (name: string): number => list.findIndex((a) => a.name === name);
      offers.sort((a, b) => order(a.account) - order(b.account));
      const best = offers.filter((o) => o.orderable).sort((a, b) => a.priceUsd - b.priceUsd || order(a.account) - order(b.account))[0];
      out.push({ slug: p.slug, game: p.gameName, pack: p.serviceName, offers, cheapest: best?.account ?? null });
    }
  }
  return out;
}

/**
 * USD the unfinished batches still have to spend, per account: the unsent rows of every batch that
 * may still order and holds money (not those whose cancel was asked for, not those waiting for
 * balance: the funds gate sets nothing aside for them), as RowStore.reservedUsd counts them for
 * the home as a whole. `waiting: true`: the batches waiting for balance instead
 * (RowStore.waitingForBalanceUsd).
 */
export function reservedByAccount(rt: Pick<Runtime, 'batches' | 'rows'>, opts: { waiting?: boolean } = {}): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of rt.batches.unfinished()) {
    if (!ORDERING_BATCH_STATES.includes(b.state) || b.cancelRequested) continue;
    if ((b.waitReason === 'balance') !== (opts.waiting === true)) continue;
    for (const [account, usd] of rt.rows.unsentByAccount(b.id)) out.set(account, roundCents((out.get(account) ?? 0) + usd));
  }
  return out;
}

/**
 * API calls started in the last `ms` per account, from the call log every process on the home
 * writes (api_calls, on the monotonic clock every process on the machine shares).
 */
export function callsWithinByAccount(db: Db, monoNow: number, ms = 60_000): Map<string, number> {
  const rows = db.prepare('SELECT account, count(*) AS n FROM api_calls WHERE t > ? GROUP BY account').all(monoNow - ms) as { account: string; n: number }[];
  return new Map(rows.map((r) => [r.account, r.n]));
}

/**
 * Whether the views speak of accounts by name: the home has an accounts file (docs/accounts.md).
 * A home without one has the single `default` account and its views stay as they always were.
 */
export function namedAccounts(config: { accounts: { file: string | null } }): boolean {
  return config.accounts.file !== null;
}

/** One account's queue: what `topup status`, the console's Accounts and Money tables and its live feed all show. */
export interface AccountQueue {
  account: string;
  /** Rows waiting to be sent or resent on it, of every batch (files, retries, the order API's). */
  rowsWaiting: number;
  /** USD its unfinished batches that hold money still have to spend there (reservedByAccount). */
  reservedUsd: number;
  /** USD of its rows in batches waiting for balance: not reserved (nothing is set aside for them). */
  waitingForBalanceUsd: number;
}

/**
 * THE per-account queue figures, read in one place so the CLI and the console cannot drift apart
 * (a new-user trial compared them during a pause and found them different: the console's were
 * rendered once while the rows moved on, now its live feed carries these same figures).
 */
export function accountQueues(rt: Pick<Runtime, 'batches' | 'rows'>, names: readonly string[]): AccountQueue[] {
  const waiting = rt.rows.unsentByAccountAll();
  const reserved = reservedByAccount(rt);
  const short = reservedByAccount(rt, { waiting: true });
  return names.map((account) => ({ account, rowsWaiting: waiting.get(account) ?? 0, reservedUsd: reserved.get(account) ?? 0, waitingForBalanceUsd: short.get(account) ?? 0 }));
}
