/**
 * Which supplier account places a row, when a home has several (accounts.toml, docs/accounts.md).
 *
 * The same pack on several accounts: matched by game slug and pack name (case and spacing
 * ignored), or by the [[pack]] table of accounts.toml for names that differ. A row names its pack
 * by a pid (of any account: looked up account by account, in file order) or by slug + pack; a
 * `account` column (only read when the home has several accounts) pins it to one.
 *
 * The rules (routing = …):
 *  - cheapest (default): the cheapest account that carries the pack, in stock, under the row's
 *    maxPriceUsd, not paused and with balance left for it; a cheaper account is preferred unless
 *    its queue would delay the row by more than max_queue_delay (default 30 s): then the next
 *    cheapest whose queue is short enough, and when every queue is long, the shortest. So a large
 *    file fills the cheap account first and spreads over the others only as far as time demands.
 *  - priority: the first such account in the file's order.
 *  - spread: the account whose queue is shortest (the most throughput), price aside.
 * "Queue" is an estimate: the rows waiting on the account (every batch) plus those this load gave
 * it, over its order rate (its tightest rate window, per minute).
 *
 * Not paused and balance left are preferences: when no account satisfies them, the row still
 * goes to an account that carries the pack (the funds gate makes it wait for a top-up, a pause for
 * its end), never invalid for a reason that will pass.
 */
import type { CatalogEntry, CatalogIndex } from '../intake/catalog-index.js';
import { isActive } from '../intake/catalog-index.js';
import type { PackAlias, Routing } from '../config/accounts.js';
import type { RateWindow } from '../config/config.js';
import { roundCents } from '../kernel/money.js';
import { foldPackName } from '../api/pack-id.js';

export interface AccountIndex {
  readonly name: string;
  readonly index: CatalogIndex;
}

/** The one fold of a slug and a pack name (api/pack-id.ts). */
const fold = foldPackName;

/**
 * One index over several accounts' catalogs, for validating a row: a pid, a slug + pack and a game
 * line are looked up account by account in the order of accounts.toml, the first that knows it answers.
 */
export function mergedIndex(list: readonly AccountIndex[]): CatalogIndex {
  if (list.length === 1) return list[0]!.index;
  const first = <T>(f: (i: CatalogIndex) => T | undefined): T | undefined => {
    for (const a of list) {
      const v = f(a.index);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  return {
    byPid: (pid) => first((i) => i.byPid(pid)),
    bySlugPack: (slug, pack) => first((i) => i.bySlugPack(slug, pack)),
    slugPackCandidates: (slug, pack) => first((i) => {
      const c = i.slugPackCandidates(slug, pack);
      return c.length > 0 ? c : undefined;
    }) ?? [],
    line: (slug) => first((i) => i.line(slug)),
    products: Object.freeze(list.flatMap((a) => [...a.index.products])),
    services: Object.freeze(list.flatMap((a) => [...a.index.services])),
  };
}

/** The account whose catalog an entry came from: the first (in order) whose pid answers with it. */
function aliasAt(entry: CatalogEntry, at: AccountIndex, aliases: readonly PackAlias[], all: readonly AccountIndex[]): CatalogEntry | undefined {
  for (const alias of aliases) {
    const mine = Object.entries(alias.at).some(([name, ref]) => {
      const home = all.find((a) => a.name === name);
      if (home === undefined) return false;
      const named = lookup(home, ref);
      return named !== undefined && named === entryIn(home, entry);
    });
    if (!mine) continue;
    const ref = alias.at[at.name];
    if (ref) return lookup(at, ref);
  }
  return undefined;
}

function lookup(at: AccountIndex, ref: { slug?: string; pack?: string; pid?: string }): CatalogEntry | undefined {
  if (ref.pid !== undefined) return at.index.byPid(ref.pid);
  if (ref.slug !== undefined && ref.pack !== undefined) return at.index.bySlugPack(ref.slug, ref.pack);
  return undefined;
}

/** The entry of `at`'s catalog that is this very product (same pid, slug and name), if `at` lists it. */
function entryIn(at: AccountIndex, entry: CatalogEntry): CatalogEntry | undefined {
  const e = at.index.byPid(entry.product.id);
  return e && fold(e.product.slug) === fold(entry.product.slug) && fold(e.product.serviceName) === fold(entry.product.serviceName) ? e : undefined;
}

/** The same pack at account `at`: the [[pack]] table first, else the same slug and pack name. */
export function samePackAt(entry: CatalogEntry, at: AccountIndex, aliases: readonly PackAlias[], all: readonly AccountIndex[]): CatalogEntry | undefined {
  return aliasAt(entry, at, aliases, all) ?? at.index.bySlugPack(entry.product.slug, entry.product.serviceName);
}

/** Whether an entry can be ordered at all (active, not out of stock). */
function orderable(e: CatalogEntry): boolean {
  return isActive(e.product.status) && e.product.inStock !== false;
}

/** Orders per minute an account's tightest rate window allows. */
export function ordersPerMinute(windows: readonly RateWindow[]): number {
  return Math.max(1e-6, Math.min(...windows.map((w) => (w.limit * 60_000) / w.windowMs)));
}

export interface AccountLoad {
  /** Rows waiting on the account (every batch), then those this router gave it. */
  queued: number;
  perMinute: number;
  /** Its balance less what this router gave it, when known. */
  balanceUsd?: number;
  paused: boolean;
}

export type Placement =
  /** cheapestPrice: the lowest unit price among the accounts the row may go to (its cap and pin held), queues, pauses and balances aside: what routing's spill costs is measured against it. */
  | { ok: true; account: string; entry: CatalogEntry; cheapestPrice: number }
  | { ok: false; error: string };

export interface PlaceRequest {
  quantity: number;
  maxPriceUsd?: number | undefined;
  /** The `account` cell: this account only. */
  pinned?: string | undefined;
  /** Accounts that must not place it (they refused it already). */
  exclude?: ReadonlySet<string>;
  /**
   * The row may have been bought already (a restored store: store/backup.ts mayHoldBoughtRows): its
   * purchase may be what took the last stock or what a price rise came after, so neither is judged
   * here. Every account that lists the pack carries it, and the cap is left to the send
   * (dispatch/sender.ts priceStillOk), after the restore lookup has settled what was bought.
   */
  mayBeBought?: boolean;
}

export class Router {
  readonly #routing: Routing;
  readonly #list: readonly AccountIndex[];
  readonly #aliases: readonly PackAlias[];
  readonly #loads: Map<string, AccountLoad>;
  readonly #maxDelayMs: number;

  constructor(routing: Routing, list: readonly AccountIndex[], aliases: readonly PackAlias[], loads: Map<string, AccountLoad>, maxQueueDelayMs: number) {
    this.#routing = routing;
    this.#list = list;
    this.#aliases = aliases;
    this.#loads = loads;
    this.#maxDelayMs = maxQueueDelayMs;
  }

  /** How long the account's queue would hold one more row, in ms. */
  #delay(name: string): number {
    const l = this.#loads.get(name);
    return l ? (l.queued / l.perMinute) * 60_000 : 0;
  }

  /** The accounts that carry this pack (orderable), with their entry for it, in file order. */
  carriers(entry: CatalogEntry, exclude: ReadonlySet<string> = new Set(), listedOnly = false): { name: string; entry: CatalogEntry }[] {
    const out: { name: string; entry: CatalogEntry }[] = [];
    for (const at of this.#list) {
      if (exclude.has(at.name)) continue;
      const e = samePackAt(entry, at, this.#aliases, this.#list);
      if (e && (listedOnly || orderable(e))) out.push({ name: at.name, entry: e });
    }
    return out;
  }

  place(entry: CatalogEntry, req: PlaceRequest): Placement {
    const pack = `${entry.product.slug} / ${entry.product.serviceName}`;
    let found = this.carriers(entry, req.exclude, req.mayBeBought === true);
    if (req.pinned !== undefined) {
      const pin = req.pinned.trim().toLowerCase();
      if (!this.#list.some((a) => a.name === pin)) return { ok: false, error: `account: "${req.pinned}" is not one of this home's accounts (${this.#list.map((a) => a.name).join(', ')})` };
      found = found.filter((c) => c.name === pin);
      if (found.length === 0) return { ok: false, error: `account: ${pin} does not sell ${pack} now (not in its catalog, inactive or out of stock)` };
    }
    if (found.length === 0) return { ok: false, error: `pack: no account sells ${pack} now${req.exclude && req.exclude.size > 0 ? ` (besides ${[...req.exclude].join(', ')}, which refused it)` : ''}` };
    if (req.maxPriceUsd !== undefined && req.mayBeBought !== true) {
      const cap = req.maxPriceUsd;
      const under = found.filter((c) => c.entry.product.price <= cap + 1e-9);
      if (under.length === 0) {
        const cheapest = Math.min(...found.map((c) => c.entry.product.price));
        const who = req.pinned !== undefined ? `${found[0]!.name} (the row's account)` : found.length === 1 ? `${found[0]!.name}, the only account that sells it,` : 'the cheapest account';
        return { ok: false, error: `maxPriceUsd: ${who} sells ${pack} at ${cheapest} USD, above the cap of ${cap} USD; not sent` };
      }
      found = under;
    }
    const amount = (c: { entry: CatalogEntry }): number => roundCents(c.entry.product.price * req.quantity);
    // Preferences: not paused, balance left. Dropped when no account meets them (the row then waits).
    const ready = found.filter((c) => {
      const l = this.#loads.get(c.name);
      return !l?.paused && (l?.balanceUsd === undefined || l.balanceUsd + 1e-9 >= amount(c));
    });
    const pool = ready.length > 0 ? ready : found;
    const chosen = this.#choose(pool);
    const load = this.#loads.get(chosen.name);
    if (load) {
      load.queued += 1;
      if (load.balanceUsd !== undefined) load.balanceUsd -= amount(chosen);
    }
    return { ok: true, account: chosen.name, entry: chosen.entry, cheapestPrice: Math.min(...found.map((c) => c.entry.product.price)) };
  }

  #choose(pool: readonly { name: string; entry: CatalogEntry }[]): { name: string; entry: CatalogEntry } {
    const order = (name: string): number => this.#list.findIndex((a) => a.name === name);
    const shortest = [...pool].sort((a, b) => this.#delay(a.name) - this.#delay(b.name) || order(a.name) - order(b.name))[0]!;
    if (this.#routing === 'spread') return shortest;
    if (this.#routing === 'priority') return pool[0]!;
    const byPrice = [...pool].sort((a, b) => a.entry.product.price - b.entry.product.price || order(a.name) - order(b.name));
    return byPrice.find((c) => this.#delay(c.name) <= this.#maxDelayMs) ?? shortest;
  }
}

// accountColumn lives in intake/account-column.ts (the file's reading is the base layer's); re-exported here.
export { accountColumn } from '../intake/account-column.js';
