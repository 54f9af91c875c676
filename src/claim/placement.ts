/**
 * Placement: which supplier account each valid row of a file is placed on, decided once when the
 * file is stored (account/routing.ts has the rules). A home with one account places every row on
 * it, exactly as before; with several, a row's pid and price become those of the account chosen,
 * and a row no account can place (pinned to one that does not sell its pack, every price above
 * its cap) is invalid with the reason, like any other row that cannot be ordered.
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { CatalogEntry, CatalogIndex } from '../intake/catalog-index.js';
import type { ValidOrder } from '../intake/validate.js';
import type { NewRow } from '../store/row-record.js';
import type { OrderRequest } from '../api/schemas.js';
import { accountColumn, mergedIndex, ordersPerMinute, Router, samePackAt, type AccountIndex, type AccountLoad } from '../account/routing.js';
import { Pauses } from '../account/pauses.js';
import { roundCents } from '../kernel/money.js';
import { coerceError } from '../kernel/errors.js';

export type Placed =
  /** cheapestUsd: the row's amount at the cheapest account it may go to (what routing's spill is measured against). */
  | { ok: true; account: string; order: ValidOrder; pinned?: boolean; cheapestUsd: number }
  | { ok: false; error: string };

export interface Placer {
  /** The index rows are validated against (every account's catalog, looked up in order). */
  readonly index: CatalogIndex;
  /**
   * Whether place() judges a row's price cap (several accounts: against the accounts it may go to,
   * the one it is pinned to alone), so the validator must not judge it against the merged index.
   */
  readonly judgesCap: boolean;
  /** `namedByPid`: the file gave this row's pid (not slug + pack): a pid several accounts use for different packs is refused. */
  place(order: ValidOrder, cells: readonly string[], namedByPid: boolean): Placed;
  /**
   * What stands for the pack in the row's purchase fingerprint (claim/repeats.ts): the pack itself
   * (slug and name; a [[pack]] entry's members share the smallest of theirs), never the pid the file
   * used, so a re-drop naming the pack by another account's pid is the same purchase, and adding an
   * account or a [[pack]] entry changes no fingerprint (adversarial reviews).
   */
  packKey(order: ValidOrder): string;
  /** Every pid the pack has at an account (the file's first): homes before several accounts fingerprinted purchases by pid. */
  pidKeys(order: ValidOrder): string[];
}

/** The stored fields of a placed order (claim/load.ts's rows and the order desk's API orders): its exact request, trxid included. */
export function placedRow(placed: Extract<Placed, { ok: true }>, trxid: string): Required<Pick<NewRow, 'productId' | 'slug' | 'packName' | 'quantity' | 'unitPriceUsd' | 'expectedUsd' | 'maxPriceUsd' | 'account' | 'pinned'>> & { request: OrderRequest; error: null } {
  const o = placed.order;
  return {
    request: { ...o.request, trxid },
    error: null,
    productId: o.request.pid,
    slug: o.slug,
    packName: o.packName,
    quantity: o.quantity,
    unitPriceUsd: o.unitPriceUsd,
    expectedUsd: o.amountUsd,
    maxPriceUsd: o.maxPriceUsd ?? null,
    account: placed.account,
    pinned: placed.pinned === true,
  };
}

type PlacementParts = Pick<Runtime, 'accounts' | 'config' | 'log' | 'meta' | 'routing' | 'rows'>;

/**
 * Whether a file's `account` column pins its rows: in a home whose accounts are named in an accounts
 * file, one or several. A reseller who names accounts means them: a row naming an account the file
 * does not list (one removed for a while, a typo) is refused, never bought through another account
 * (with one account listed it used to be bought through that one). A home without the file has one
 * account, `default`, named by no one: a column called `Account` there is the reseller's own (their
 * customer's account, say), carried through as before.
 */
export function readsAccountColumn(rt: Pick<Runtime, 'accounts' | 'config'>): boolean {
  return rt.accounts.length > 1 || rt.config.accounts.file !== null;
}

/**
 * Every account's catalog that can be read now (an account that cannot be read places nothing in
 * this file). Throws the first account's error when none can be read: the batch waits for the catalog.
 */
export async function readCatalogs(rt: Pick<Runtime, 'accounts' | 'log'>, priority: number = Priority.lookup): Promise<AccountIndex[]> {
  const out: AccountIndex[] = [];
  let first: unknown;
  for (const a of rt.accounts) {
    try {
      out.push({ name: a.id, index: (await a.catalog.get(undefined, priority)).index });
    } catch (err) {
      first ??= err;
      if (rt.accounts.length > 1) rt.log.warn({ account: a.id, err: coerceError(err).message }, 'cannot read this account\'s catalog: it places no rows of this file');
    }
  }
  if (out.length === 0) throw first;
  return out;
}

const fold = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, ' ');

/** `mayBeBought`: the store is a restored copy whose rows may have been bought already (Router.place's PlaceRequest.mayBeBought). */
export async function openPlacer(rt: PlacementParts, catalogs: readonly AccountIndex[], columns: readonly string[], opts: { mayBeBought?: boolean } = {}): Promise<Placer> {
  const index = mergedIndex(catalogs);
  const packOf = (e: CatalogEntry): string => `pack:${fold(e.product.slug)}\u0000${fold(e.product.serviceName)}`;
  if (rt.accounts.length === 1) {
    const only = rt.accounts[0]!.id;
    const pinAt = readsAccountColumn(rt) ? accountColumn(columns) : undefined;
    return {
      index,
      judgesCap: false,
      place: (order, cells) => {
        const pinned = pinAt === undefined ? '' : (cells[pinAt] ?? '').trim();
        if (pinned === '') return { ok: true, account: only, order, cheapestUsd: order.amountUsd };
        // The same words as a home with several accounts (account/routing.ts Router.place).
        if (pinned.toLowerCase() !== only) return { ok: false, error: `account: "${pinned}" is not one of this home's accounts (${only})` };
        return { ok: true, account: only, order, pinned: true, cheapestUsd: order.amountUsd };
      },
      packKey: (order) => {
        const e = index.byPid(order.request.pid);
        return e ? packOf(e) : order.request.pid;
      },
      pidKeys: (order) => [order.request.pid],
    };
  }
  const queued = rt.rows.unsentByAccountAll();
  const loads = new Map<string, AccountLoad>();
  for (const a of rt.accounts) {
    let balanceUsd: number | undefined;
    const paused = Pauses.read(rt.meta, a.id) !== null;
    if (!paused && catalogs.some((c) => c.name === a.id)) {
      try {
        balanceUsd = (await a.client.balance({ priority: Priority.lookup })).balanceUsd;
      } catch {
        // Unknown balance: no preference either way; the funds gate judges before anything is sent.
      }
    }
    loads.set(a.id, { queued: queued.get(a.id) ?? 0, perMinute: ordersPerMinute(a.setting.rateLimits), paused, ...(balanceUsd !== undefined ? { balanceUsd } : {}) });
  }
  const router = new Router(rt.routing.routing, catalogs, rt.routing.packAliases, loads, rt.routing.maxQueueDelayMs);
  const pinColumn = accountColumn(columns);
  const sameProduct = (x: CatalogEntry, y: CatalogEntry): boolean => fold(x.product.slug) === fold(y.product.slug) && fold(x.product.serviceName) === fold(y.product.serviceName);
  return {
    index,
    judgesCap: true,
    packKey(order) {
      const entry = index.byPid(order.request.pid);
      if (!entry) return order.request.pid;
      // A [[pack]] entry naming this product: its members' smallest pack key, whatever the entry's
      // place in the file (an adversarial review: a key by position moved when an entry was added).
      let key = packOf(entry);
      for (const al of rt.routing.packAliases) {
        const members = Object.entries(al.at)
          .map(([name, ref]) => {
            const c = catalogs.find((x) => x.name === name);
            return c && (ref.pid !== undefined ? c.index.byPid(ref.pid) : ref.slug !== undefined && ref.pack !== undefined ? c.index.bySlugPack(ref.slug, ref.pack) : undefined);
          })
          .filter((e): e is CatalogEntry => e !== undefined);
        if (members.some((e) => e.product.id === entry.product.id && sameProduct(e, entry))) {
          for (const m of members) if (packOf(m) < key) key = packOf(m);
        }
      }
      return key;
    },
    pidKeys(order) {
      const entry = index.byPid(order.request.pid);
      const pids = new Set([order.request.pid]);
      if (entry) for (const c of catalogs) {
        const e = samePackAt(entry, c, rt.routing.packAliases, catalogs);
        if (e) pids.add(e.product.id);
      }
      return [...pids];
    },
    place(order, cells, namedByPid) {
      const entry = index.byPid(order.request.pid);
      if (!entry) return { ok: false, error: `pid: ${order.request.pid} is in no account's catalog` };
      if (namedByPid) {
        // One pid, different packs at different accounts: which one the row means cannot be told
        // (an adversarial review: a row pinned to the second account bought the first's pack).
        const named = catalogs.map((c) => ({ name: c.name, e: c.index.byPid(order.request.pid) })).filter((x): x is { name: string; e: CatalogEntry } => x.e !== undefined);
        if (named.some((x) => !sameProduct(x.e, entry))) {
          const what = named.map((x) => `${x.e.product.serviceName} (${x.e.product.slug}) at ${x.name}`).join(', ');
          return { ok: false, error: `pid: ${order.request.pid} names different packs at your accounts: ${what}; name the pack by slug and pack instead (and add an account column to choose the account)` };
        }
      }
      const pinned = pinColumn === undefined ? '' : (cells[pinColumn] ?? '').trim();
      const p = router.place(entry, { quantity: order.quantity, maxPriceUsd: order.maxPriceUsd, ...(pinned !== '' ? { pinned } : {}), ...(opts.mayBeBought === true ? { mayBeBought: true } : {}) });
      if (!p.ok) return p;
      const price = p.entry.product.price;
      return {
        ok: true,
        account: p.account,
        pinned: pinned !== '',
        cheapestUsd: roundCents(p.cheapestPrice * order.quantity),
        order: { ...order, request: { ...order.request, pid: p.entry.product.id }, unitPriceUsd: price, amountUsd: roundCents(price * order.quantity) },
      };
    },
  };
}

/**
 * The column report (intake/column-report.ts) as a home with several accounts reads the file: its
 * `account` column pins rows to an account, it is not carried through as the reseller's own.
 */
export function withPinColumn<R extends { columns: { position: number; note: string }[] }>(report: R, rt: Pick<Runtime, 'accounts' | 'config'>, columns: readonly string[]): R {
  const pin = readsAccountColumn(rt) ? accountColumn(columns) : undefined;
  if (pin === undefined) return report;
  const why = rt.accounts.length > 1 ? 'several accounts: a row is pinned to it and never moves' : 'a name accounts.toml does not list is refused, never bought through another account';
  return { ...report, columns: report.columns.map((c) => (c.position === pin + 1 ? { ...c, note: `read as the supplier account each row is placed on (${why})` } : c)) };
}
