/**
 * Failover between supplier accounts, only on proof (docs/accounts.md).
 *
 * The one sentence: a row moves to another account only from `pending` (never sent, or a send
 * answered before any order was made) or from `sending` on a refusal of its first send that
 * proves nothing was created; it moves in one guarded UPDATE (RowStore.move, edge `moved`) that
 * gives it a new trxid and the new account's pid, and the trigger rows_account_moves refuses any
 * other change of account. If the process dies before that UPDATE, the row is where it was (its
 * account, its trxid) and is sent or moved again later; after it, the row is `pending` on the new
 * account and is sent there with its new trxid. A timeout, a 5xx, a lost or unreadable answer,
 * DUPLICATE_IN_FLIGHT, a refusal after a lost answer: none of them moves a row (the row is then
 * `resending` or `verifying`, and the store has no edge from those).
 *
 * Why a new trxid: two accounts at one supplier share one trxid space (reusing a trxid across
 * them answers 403 FORBIDDEN), and a trxid sent to an account, even refused, is kept for the
 * account that saw it. The new one is the row's first trxid plus the account's name
 * (`SHOP-1001-second`), so it is readable and the same whichever process moves the row.
 */
import type { Runtime } from '../runtime.js';
import type { Row, RowMove } from '../store/row-record.js';
import type { Actor } from '../store/rows.js';
import { Router, ordersPerMinute, type AccountIndex, type AccountLoad } from '../account/routing.js';
import type { CatalogEntry } from '../intake/catalog-index.js';
import { roundCents } from '../kernel/money.js';
import { coerceError } from '../kernel/errors.js';
import { namesOrder } from '../api/order-id.js';

/**
 * API refusals of a first send that say this account cannot sell the pack now, with nothing
 * created: another account may. (A refusal about the order itself, a bad player id say, would be
 * refused everywhere: it is not moved.)
 */
const ACCOUNT_REFUSALS: readonly RegExp[] = [
  /^UNKNOWN[ _]PID$/i, /^GAME[ _]DISABLED$/i, /^INVALID[ _]PRODUCT$/i, /^PRODUCT[ _]DISABLED$/i,
  /^(OUT[ _]OF|INSUFFICIENT|NO)[ _]STOCK$/i, /^STOCK[ _](EMPTY|UNAVAILABLE)$/i, /^SOLD[ _]OUT$/i, /^INSUFFICIENT[ _]BALANCE$/i,
];
// Whole codes only: "INVALID PACK" is also answered for a server or region the row chose wrongly
// (the order's own data), and a reason text merely mentioning stock is not a stock refusal (an
// adversarial review). Such refusals stay `rejected` on their account, as before accounts.

export function isAccountRefusal(code: string | undefined | null, reason?: string | null): boolean {
  // The reason as a whole, or its code part ("INSUFFICIENT_BALANCE: INSUFFICIENT BALANCE").
  const texts = [code, reason, reason?.split(':')[0]];
  return texts.some((t) => t !== undefined && t !== null && ACCOUNT_REFUSALS.some((re) => re.test(t.trim())));
}

/**
 * Does a refusal of a first send (nothing created) move the row to another account? Every refusal
 * the client reads as "no balance" (api/classify.ts: INSUFFICIENT_FUNDS, NOT ENOUGH BALANCE, Saldo
 * tidak cukup …), or a refusal with one of the account refusals' whole codes (an adversarial review:
 * balance refusals in other words left the row waiting while another account had money).
 */
export function movesOnRefusal(classification: string, apiCode: string | undefined | null, reason: string | undefined | null): boolean {
  return classification === 'insufficient-balance' || (classification === 'rejected' && isAccountRefusal(apiCode, reason));
}

/**
 * Accounts that answered INSUFFICIENT BALANCE lately, by monotonic time until which they take no
 * moved rows: a row moved onto an account out of balance is only refused again (found by the torture
 * suite: 107 of 233 moved rows went to an account whose balance had run out). In this process's
 * memory: a restart forgets it, which costs one refusal per account, never money.
 */
const shortUntil = new WeakMap<object, Map<string, number>>();
const SHORT_MS = 60_000;

/** Per home (its runtime's accounts): two runtimes in one process (the simulator's daemons) keep their own. */
function shortOf(rt: Pick<Runtime, 'accounts'>): Map<string, number> {
  let m = shortUntil.get(rt.accounts);
  if (!m) shortUntil.set(rt.accounts, (m = new Map()));
  return m;
}

export function noteBalanceShort(rt: Pick<Runtime, 'accounts'>, account: string, mono: number): void {
  shortOf(rt).set(account, mono + SHORT_MS);
}

type FailoverParts = Pick<Runtime, 'accounts' | 'accountOf' | 'clock' | 'log' | 'owner' | 'routing' | 'rows'>;

/** The trxid a row takes on `account`: its first trxid and the account's name, made unique if a file already used it. */
function trxidFor(rt: FailoverParts, row: Row, account: string): string {
  const root = row.moves[0]?.trxid ?? row.trxid!;
  let t = `${root}-${account}`;
  for (let n = 2; rt.rows.byTrxid(t) !== undefined; n++) t = `${root}-${account}${n}`;
  return t;
}

/** The row's pack at its own account, from the catalog held (its pid may be gone: then slug + pack name). */
function entryOf(rt: FailoverParts, row: Row, catalogs: readonly AccountIndex[]): CatalogEntry | undefined {
  const own = catalogs.find((c) => c.name === row.account)?.index ?? rt.accountOf(row.account).catalog.cached?.index;
  const byPid = row.productId !== null ? own?.byPid(row.productId) : undefined;
  if (byPid) return byPid;
  if (row.slug === null || row.packName === null) return undefined;
  for (const c of catalogs) {
    const e = c.index.bySlugPack(row.slug, row.packName);
    if (e) return e;
  }
  return undefined;
}

/**
 * Moves the row to another account that sells its pack, if there is one (not its own, none that
 * refused it already). Returns the account it moved to, or null (it stays: no other account, or
 * the store refused the move because the row is no longer where the caller saw it).
 */
export async function moveRow(
  rt: FailoverParts,
  row: Row,
  a: Actor,
  why: { code: string; why: string },
  fromState: 'pending' | 'sending' | 'verifying',
  /** readyOnly: only to an account not paused (moving off a paused one to another paused one helps nobody). */
  opts: { readyOnly?: boolean } = {},
): Promise<string | null> {
  // A row the file pinned to its account (its account column) stays there (found by the simulator).
  if (rt.accounts.length < 2 || row.pinned || row.request === null || row.trxid === null || row.orderId !== null) return null;
  // Never back to its own account or one that refused it; with readyOnly, not to a paused one.
  const exclude = new Set([row.account, ...row.moves.map((m) => m.from)]);
  // Never to an account the operator paused (`topup account pause`), whatever moves the row.
  for (const acct of rt.accounts) {
    const kind = acct.pauses().current?.kind;
    if (kind === 'operator' || (opts.readyOnly && kind !== undefined)) exclude.add(acct.id);
  }
  for (const acct of rt.accounts) if ((shortOf(rt).get(acct.id) ?? 0) > rt.clock.mono()) exclude.add(acct.id);
  if (rt.accounts.every((acct) => exclude.has(acct.id))) return null;
  // Every account's catalog that can be read, its own included: a [[pack]] entry is recognised
  // through the account the row is on (an adversarial review: aliased packs never moved).
  const catalogs: AccountIndex[] = [];
  for (const account of rt.accounts) {
    try {
      catalogs.push({ name: account.id, index: (await account.catalog.get()).index });
    } catch (err) {
      rt.log.debug({ account: account.id, err: coerceError(err).message }, 'catalog not readable: the account takes no moved rows now');
    }
  }
  if (!catalogs.some((c) => !exclude.has(c.name))) return null;
  const entry = entryOf(rt, row, catalogs);
  if (!entry) return null;
  const queued = rt.rows.unsentByAccountAll();
  const loads = new Map<string, AccountLoad>();
  for (const c of catalogs) {
    if (exclude.has(c.name)) continue;
    const acct = rt.accountOf(c.name);
    loads.set(c.name, { queued: queued.get(c.name) ?? 0, perMinute: ordersPerMinute(acct.setting.rateLimits), paused: acct.pauses().current !== null });
  }
  const router = new Router(rt.routing.routing, catalogs, rt.routing.packAliases, loads, rt.routing.maxQueueDelayMs);
  // The pack at the other accounts: the same slug and name, or the [[pack]] table.
  const placed = router.place(entry, { quantity: row.quantity ?? 1, exclude, ...(row.maxPriceUsd !== null ? { maxPriceUsd: row.maxPriceUsd } : {}) });
  if (!placed.ok) return null;
  const target = placed.entry;
  const trxid = trxidFor(rt, row, placed.account);
  const price = target.product.price;
  const quantity = row.quantity ?? 1;
  const move: RowMove = { from: row.account, trxid: row.trxid, code: why.code, why: why.why, at: a.now };
  const moves = [...row.moves, move];
  const note = `moved from account ${row.account} (${why.why}; its trxid there ${row.trxid}, nothing created) to ${placed.account} with trxid ${trxid}`;
  let ok: boolean;
  try {
    ok = rt.rows.move(row.batchId, row.idx, a, {
      fromState,
      from: row.account,
      fromTrxid: row.trxid,
      to: placed.account,
      trxid,
      request: JSON.stringify({ ...row.request, pid: target.product.id, trxid }),
      productId: target.product.id,
      unitPriceUsd: price,
      expectedUsd: roundCents(price * quantity),
      moves: JSON.stringify(moves),
      note,
    });
  } catch (err) {
    // The store refused it (a trxid taken meanwhile, the trigger): the row stays where it is.
    rt.log.warn({ batch: row.batchId, line: row.line, err: coerceError(err).message }, 'row not moved: the store refused the move');
    return null;
  }
  if (!ok) return null;
  rt.log.warn({ batch: row.batchId, line: row.line, from: row.account, to: placed.account, trxid, was: row.trxid, code: why.code }, 'row moved to another account (nothing was created on the first)');
  return placed.account;
}

/**
 * Does a failure body name an order (an id under an order's own key, api/order-id.ts, at its top or in an envelope)? Such a
 * refusal is not moved even when it says `orderCreated: false`: with failover, a wrong "not
 * created" would become a purchase elsewhere instead of a visible rejection (an adversarial review).
 */
export function namesAnOrder(body: unknown): boolean {
  return namesOrder(body);
}
