/**
 * The order API's client in the simulator (issue 23): a shop that places orders one at a time
 * through the order desk (src/orders/desk.ts, `desk.accept(input)` on a daemon's runtime, as the
 * HTTP layer calls it) and acts on what it is told, as shops do:
 *
 *  - new orders under its own trxids (`API-<n>`), some under a trxid a file row of the schedule uses
 *    (`SHOP-<id>`, as written or in other letter case), some under one the supplier already holds an
 *    order under (`OLD-<k>`, another shop's);
 *  - the same trxid sent again with the same body (its keys in another order, `queue` flipped:
 *    still the same body), and with another body (another player, quantity or meta);
 *  - several acceptances arriving together (concurrent requests: one group commit), spread over
 *    the daemons alive;
 *  - `queue: true`, orders the balance cannot cover (402), orders the catalog refuses (422);
 *  - no answer (the daemon crashed while the acceptance was in flight, before or after its commit;
 *    no daemon listening; the shop's 30 s timeout; a 500): the shop sends the same body again
 *    later, to whichever daemon is up, up to MAX_TRIES times;
 *  - schedules starting before UTC midnight, so that a second day's API batch is made while the
 *    first still has live orders, and the first is finished once its day is over.
 */
import fc from 'fast-check';
import type { OrderInput } from '../src/orders/types.js';
import { trxidAsGiven } from '../src/kernel/identity.js';
import { paddedTrxid } from './phrases.js';

export interface ShopOrder {
  /** The trxid: the shop's own order n (`API-<n>`), a file row's (`SHOP-<id>`; `lower`: in other letter case), or another shop's (`OLD-<k>`, in the supplier's ledger). */
  trxid: { own: number } | { file: number; row: number; lower: boolean } | { old: number };
  /** 0: the order's body; 1: another body under the same trxid (another player, quantity or meta). */
  variant: 0 | 1;
  queue: boolean;
  /** The same body with its keys (and meta's) written in another order. */
  reorder: boolean;
}

/** Requests that reach the daemons at one instant (concurrent acceptances). */
export interface ShopCall {
  at: number;
  orders: ShopOrder[];
}

export interface Shop {
  calls: ShopCall[];
  /** The wall clock starts this long before UTC midnight (0: at midnight, the day just begun). */
  beforeMidnightMs: number;
  /** After no answer, the shop sends the same body again this long after. */
  resendAfterMs: number;
  /** A crash of the daemon a call reached, this long after the call (an acceptance cut in flight). */
  cuts: { call: number; afterMs: number; dead: boolean }[];
}

/** How many times one body is sent before the shop gives up (the Telegram shop of issue 23 resends up to six times). */
export const MAX_TRIES = 6;
/** The shop's HTTP client gives up on an answer after this long. */
export const SHOP_TIMEOUT_MS = 30_000;

const MIN = 60_000;

const order: fc.Arbitrary<ShopOrder> = fc.record({
  trxid: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 7 }).map((own) => ({ own })) },
    { weight: 2, arbitrary: fc.record({ file: fc.nat(2), row: fc.nat(5), lower: fc.boolean() }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }).map((old) => ({ old })) },
  ),
  variant: fc.constantFrom<0 | 1>(0, 0, 0, 1),
  queue: fc.constantFrom(false, false, true),
  reorder: fc.boolean(),
});

/** Shared instants (as schedule.ts `when`): calls meet crashes, drops and each other. */
const callAt: fc.Arbitrary<number> = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 5 * MIN }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(10_000, 60_000, 150_000), fc.integer({ min: 0, max: 200 })).map(([t, j]) => t + j) },
);

export const shopArb: fc.Arbitrary<Shop> = fc
  .record({
    calls: fc.array(fc.record({ at: callAt, orders: fc.array(order, { minLength: 1, maxLength: 5 }) }), { minLength: 1, maxLength: 8 }),
    beforeMidnightMs: fc.constantFrom(0, 2 * MIN, 4 * MIN),
    resendAfterMs: fc.constantFrom(2_000, 20_000, 60_000),
    cuts: fc.array(fc.record({ call: fc.nat(7), afterMs: fc.constantFrom(0, 1, 3, 10, 50, 300), dead: fc.boolean() }), { maxLength: 2 }),
  })
  .map((s) => ({ ...s, calls: [...s.calls].sort((a, b) => a.at - b.at) }));

/** A shop order's trxid as sent. `fileTrxid`: the trxid a file's row has (undefined: the file has none there). */
export function shopTrxid(o: ShopOrder, fileTrxid: (file: number, row: number) => string | undefined): string {
  const t = o.trxid;
  // The `padded-trxid` family (phrases.ts): the shop's own trxid with a Unicode space around it,
  // chosen by the order's own draws (one purchase is sent padded and bare, as a resend may be).
  if ('own' in t) return paddedTrxid(`API-${t.own}`, `${t.own}:${o.variant}:${o.reorder}:${o.queue}`);
  if ('old' in t) return `OLD-${t.old}`;
  const written = fileTrxid(t.file, t.row) ?? `SHOP-${1 + t.file * 100 + t.row}`;
  return t.lower ? written.toLowerCase() : written;
}

/** A number standing for the purchase (its pack and player), the same for every spelling of its trxid. */
function keyOf(trxid: string): number {
  let h = 7;
  for (const ch of trxidAsGiven(trxid).toUpperCase()) h = (h * 31 + ch.charCodeAt(0)) % 1_000_003;
  return h;
}

/**
 * The body the shop sends for an order: a pack and player drawn from its trxid (so a resend is the
 * same body), `variant` 1 another body under it. Some are refused by the catalog (an unknown pid, a
 * price cap below the price), some are card orders (quantity), one in seven names the pack by slug.
 */
export function shopBody(o: ShopOrder, trxid: string, two: boolean): OrderInput {
  const k = keyOf(trxid);
  const v = o.variant;
  const meta: Record<string, unknown> = { shop: 'sim', order: k, ...(v === 1 && k % 2 === 0 ? { note: 'changed' } : {}) };
  let b: OrderInput;
  switch (k % 8) {
    case 0: b = { trxid, pid: 'PUBG-60', userId: String(6_100_000_000 + (k % 1000) * 10 + (v === 1 && k % 2 === 1 ? 1 : 0)) }; break;
    case 1: b = two ? { trxid, pid: 'pubg_uc_60', userId: String(6_200_000_000 + (k % 1000) * 10 + v) } : { trxid, pid: 'ML-86', userId: String(6_300_000_000 + (k % 1000)), zoneId: String(2000 + (k % 50) + v) }; break;
    case 2: b = { trxid, pid: 'STEAM-5', quantity: 1 + v }; break;
    case 3: b = { trxid, pid: 'KEY-PUBG-60', quantity: 1 + (k % 2) + v }; break;
    case 4: b = { trxid, pid: 'PUBG-325', userId: String(6_400_000_000 + (k % 1000) * 10 + v), maxPriceUsd: 5 }; break;
    case 5: b = { trxid, pid: 'PUBG-325', userId: String(6_500_000_000 + (k % 1000) * 10 + v), maxPriceUsd: 1 }; break; // the cap is below the price: 422
    case 6: b = { trxid, slug: 'pubg', pack: '60 UC', userId: String(6_600_000_000 + (k % 1000) * 10 + v) }; break;
    default: b = { trxid, pid: 'NOPE-1', userId: String(6_700_000_000 + (k % 1000)) }; break; // not in the catalog: 422
  }
  b.meta = meta;
  if (o.queue) b.queue = true;
  if (o.reorder) {
    // The same body, written in another order (keys and meta's keys reversed).
    const rev = (x: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(x).reverse());
    return { ...rev({ ...b, meta: rev(meta) }) } as unknown as OrderInput;
  }
  return b;
}

/** The body's identity as the shop sees it: every field but `queue`, keys sorted at every depth. */
export function canonicalBody(b: OrderInput): string {
  const canon = (x: unknown): unknown =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).filter((k) => (x as Record<string, unknown>)[k] !== undefined).sort().map((k) => [k, canon((x as Record<string, unknown>)[k])]))
      : x;
  const { queue: _queue, ...rest } = b;
  // One trxid in every spelling the desk trims (kernel/identity.ts): a padded resend is the same body.
  return JSON.stringify(canon(typeof rest.trxid === 'string' ? { ...rest, trxid: trxidAsGiven(rest.trxid) } : rest));
}
