/**
 * Order ids as the two answer styles show them. Inside, an order is `ORD<1000000 + seq>`; the
 * real-world style shows a JSON number instead: half the orders a 7-digit number (1000000 + seq),
 * the other half a 19-digit "snowflake" id above 2^53 that JSON.parse cannot hold exactly. Which
 * half is drawn from the sequence alone (no seed), so an order keeps its id across restarts and
 * setting changes: a client polling by id must never see it change.
 */
import { uniform } from './fulfilment.js';

const SMALL_BASE = 1_000_000;
/** Around 1.79e18, like a snowflake id of 2025; far above 2^53 ≈ 9.007e15. */
const BIG_BASE = 1_790_000_000_000_000_000n;
const SEQ_SHIFT = 22n;

const seqOf = (orderId: string): number | undefined => {
  const m = /^ORD(\d+)$/.exec(orderId);
  return m ? Number(m[1]) - SMALL_BASE : undefined;
};

export const isBigId = (seq: number): boolean => uniform('public-id', seq) < 0.5;

/** The snowflake for `seq`: base + seq·2^22 + an odd low part, so never a multiple of 256 and never an exact double. */
function snowflake(seq: number): bigint {
  return BIG_BASE + (BigInt(seq) << SEQ_SHIFT) + BigInt(1 + 2 * (seq % 2047));
}

/** The real-world public id of an order, as decimal digits. */
export function publicIdOf(orderId: string): string {
  const seq = seqOf(orderId);
  if (seq === undefined) return orderId;
  return isBigId(seq) ? snowflake(seq).toString() : String(SMALL_BASE + seq);
}

/**
 * The stored orderId a path segment names: the spec form (`ORD…`) or the order's own public id in
 * either style (a style switch must not strand orders already handed out). A rounded snowflake —
 * what a client that parsed it with JSON.parse sends back — names no order.
 */
export function resolveOrderId(given: string): string | undefined {
  if (/^ORD\d+$/.test(given)) return given;
  if (!/^\d{1,25}$/.test(given)) return undefined;
  let seq: number;
  if (given.length <= 15) seq = Number(given) - SMALL_BASE;
  else {
    const v = BigInt(given);
    if (v <= BIG_BASE) return undefined;
    seq = Number((v - BIG_BASE) >> SEQ_SHIFT);
  }
  if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
  const orderId = `ORD${SMALL_BASE + seq}`;
  return publicIdOf(orderId) === given ? orderId : undefined;
}

/**
 * The sequence an id of either style stands for, without asking whether this sandbox gave it out
 * (home.ts: a new sandbox state must start beyond every id the home has seen, whatever made it).
 * Undefined for an id of neither form.
 */
export function seqOfAnyId(id: string): number | undefined {
  const ord = seqOf(id);
  if (ord !== undefined) return Number.isSafeInteger(ord) && ord > 0 ? ord : undefined;
  if (!/^\d{1,25}$/.test(id)) return undefined;
  if (id.length <= 15) {
    const seq = Number(id) - SMALL_BASE;
    return seq > 0 ? seq : undefined;
  }
  const v = BigInt(id);
  if (v <= BIG_BASE) return undefined;
  const seq = Number((v - BIG_BASE) >> SEQ_SHIFT);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}
