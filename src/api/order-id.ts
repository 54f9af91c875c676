/**
 * The supplier's order id, as an identity read from answers: declared once (issue 29, "every
 * identity declared once"). Every reader of "does this body name an order, and which" asks here:
 * api/schemas.ts readOrder (the id of an order answer or a history entry), api/client.ts
 * saysOrderExists (is a failure's id an order's), api/classify.ts readFailureBody (a refusal that
 * names an order may have been charged), dispatch/failover.ts namesAnOrder (such a refusal is never
 * moved to another account), commands/review.ts heldOrderId (the order a review row's last answer
 * names, orderIdIn), and the simulator's supplier (sim/phrases.ts draws every spelling
 * here, so a spelling added later is drawn too).
 *
 * Two lists used to say it: classify.ts read orderId / order_id / orderID, failover.ts also
 * id_order. A charged first send refused with the id only under `id_order` was then kept from
 * failover as "names an order" and classified `rejected` ("nothing charged") all the same
 * (test/order-id/spellings.test.ts).
 *
 * The spellings are the keys real suppliers name an order under (docs/real-suppliers.md):
 * `orderId` (the spec), `order_id` (snake case backends), `orderID`, `id_order` (PHP panels).
 * A bare `id` is NOT among them: a gateway's failure body names its request with it
 * (`{success:false, error:"INTERNAL ERROR", id:"req-…"}`); readOrder takes `id` only after these,
 * and only where the answer says an order exists.
 *
 * Which key holds it is said here; when two spellings of an id are the same order is said once in
 * kernel/identity.ts (foldOrderId, and its SQL expression beside it).
 */
import { absent, isObject, pick, readText } from './read.js';

/** Every key an order's own id is found under, in the order a reader prefers them. */
// Not `as const`: a literal type would keep the mutation tools (StrykerJS, npm run mutate:sim) from
// changing a spelling, and whether the simulator notices one missing is what they measure.
export const ORDER_ID_KEYS: readonly string[] = ['orderId', 'order_id', 'orderID', 'id_order'];

/** The envelopes an answer may hold its payload in (api/read.ts unwrap reads the same three). */
const ENVELOPES = ['data', 'result', 'response'] as const;

/** The id under an order's own key at the top of `o`, as text; undefined when none is there. */
export function orderIdUnder(o: Record<string, unknown>): string | undefined {
  return readText(pick(o, ...ORDER_ID_KEYS));
}

/** Does `o` itself hold a value (anything but null, missing or blank) under an order's own key? */
export function hasOrderIdKey(o: unknown): boolean {
  return isObject(o) && ORDER_ID_KEYS.some((k) => !absent(o[k]));
}

/**
 * The objects of a body that may hold an order's own key, in the order a reader prefers them: the
 * body itself, then each envelope (`data`, `result`, `response`) and the nested `order`, each also
 * with an `order` inside it (`{data:{order:{…}}}`). One walk for namesOrder and orderIdIn, so "where
 * an answer names its order" is said once.
 */
function* orderHolders(body: unknown): Generator<Record<string, unknown>> {
  if (!isObject(body)) return;
  yield body;
  for (const e of [...ENVELOPES, ORDER_OBJECT]) {
    const inner = body[e];
    if (!isObject(inner)) continue;
    yield inner;
    if (isObject(inner[ORDER_OBJECT])) yield inner[ORDER_OBJECT] as Record<string, unknown>;
  }
}

/**
 * Does a body name an order under an order's own key, at its top or in an envelope (`data`,
 * `result`, `response`) or a nested `order`? A value of any type counts: this answers "may an order
 * exist", where reading too much costs a resend and reading too little may cost a charge read as none.
 */
export function namesOrder(body: unknown): boolean {
  for (const o of orderHolders(body)) if (hasOrderIdKey(o)) return true;
  return false;
}

/**
 * The order id a stored answer names, as text, wherever namesOrder looks and under every key of
 * ORDER_ID_KEYS (never a bare `id`: a gateway's request id is no order); undefined when none. For a
 * person's view of a row in review (commands/review.ts heldOrderId): read only from `orderId` and
 * `data.orderId`, an answer naming the order as `order_id`, `id_order` or `order.orderId` showed
 * the row as holding no order, and a person deciding "not charged" from that buys it again.
 */
export function orderIdIn(body: unknown): string | undefined {
  for (const o of orderHolders(body)) {
    const id = orderIdUnder(o);
    if (id !== undefined) return id;
  }
  return undefined;
}

/**
 * The key an answer may nest the order itself under (`{success:false, error, order:{orderId,
 * status}}`, `{data:{order:{…}}}`): the real supplier's public clients read `order.orderId` and
 * `order.status` (shared/real-supplier.md). A refusal carrying an order there was classified
 * `rejected` while the supplier held the order (an adversarial review, test/order-id/nested-order).
 */
export const ORDER_OBJECT = 'order';

/** The object an order answer or a history element holds its order in: `v.order` when `v` itself has no order key but that has. */
export function orderObject(v: unknown): unknown {
  if (!isObject(v) || hasOrderIdKey(v)) return v;
  const inner = v[ORDER_OBJECT];
  return isObject(inner) && hasOrderIdKey(inner) ? { ...inner, ...Object.fromEntries(Object.entries(v).filter(([k]) => k !== ORDER_OBJECT && !(k in inner))) } : v;
}
