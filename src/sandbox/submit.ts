/**
 * The POST /orders flow after authentication, rate limiting and JSON parsing:
 * maintenance → idempotency lookup (replay / forbidden / in flight) → validation → stock and
 * balance → create → post-create faults. `validateBeforeIdempotency` moves validation first.
 */
import type { AccountRow, SandboxState } from './state.js';
import type { Failure } from './auth.js';
import { isFailure } from './auth.js';
import type { Faults } from './faults.js';
import { decideTopUp, makeCodes, type RealWorldFates } from './fulfilment.js';
import { isKeyOrCard, isStockBased, type LiveCatalog } from './live-catalog.js';
import { idempotencyKeyOf, type Plan, publicOrder, readBody, rejection, validate } from './orders.js';
import type { Clock, FulfilmentSettings, OrderRecord } from './types.js';

export interface SubmitContext {
  state: SandboxState;
  catalog: LiveCatalog;
  faults: Faults;
  fulfilment: () => FulfilmentSettings;
  now: Clock;
  /** idempotency key → account fingerprint, while a submit that created the order has not answered. */
  inFlight: Map<string, string>;
  delay: (ms: number) => Promise<void>;
  settle: () => void;
  /** The real-world fates while that style is on, else null. */
  realWorldFates: () => RealWorldFates | null;
}

export type SubmitOutcome = { status: number; body: unknown } | { drop: true };

const reply = (f: Failure | { status: number; body: unknown }): SubmitOutcome => ({ status: f.status, body: f.body });
const serverError = (): SubmitOutcome => ({ status: 500, body: { success: false, error: 'INTERNAL SERVER ERROR' } });

export async function submitOrder(ctx: SubmitContext, account: AccountRow, raw: unknown): Promise<SubmitOutcome> {
  const { state, faults } = ctx;
  const now = ctx.now();
  const maintenance = faults.maintenance(now);
  if (maintenance === 'MAINTENANCE' || maintenance === 'API_ORDER_DISABLED') {
    return { status: 503, body: { success: false, code: maintenance, error: maintenance } };
  }

  let plan: Plan | undefined;
  const planOrFailure = (): Plan | Failure => {
    const body = readBody(raw);
    return isFailure(body) ? body : validate(body, ctx.catalog);
  };
  if (faults.settings.validateBeforeIdempotency) {
    const p = planOrFailure();
    if (isFailure(p)) return reply(p);
    plan = p;
  }

  const key = idempotencyKeyOf(raw);
  const attempt = faults.nextAttempt(account.fp, key ?? '');
  if (faults.hits('error5xxBeforeShare', account.fp, key ?? '', attempt)) return serverError();

  if (key !== undefined) {
    const existing = state.orderByIdemKey(key);
    const flying = ctx.inFlight.get(key);
    if ((existing && existing.account !== account.fp) || (flying !== undefined && flying !== account.fp)) {
      return { status: 403, body: { success: false, code: 'FORBIDDEN', error: 'FORBIDDEN' } };
    }
    if (flying !== undefined) {
      return { status: 429, body: { success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'DUPLICATE_IN_FLIGHT' } };
    }
    if (existing) return { status: 200, body: publicOrder(existing, now, true) };
  }

  if (!plan) {
    const p = planOrFailure();
    if (isFailure(p)) return reply(p);
    plan = p;
  }
  const { product, quantity } = plan;
  if (isStockBased(product) && quantity > (product.quantity ?? 0)) return reply(rejection(product.slug, 'INSUFFICIENT STOCK'));
  if (plan.amountMicros > account.balanceMicros) return reply(rejection(product.slug, 'INSUFFICIENT BALANCE'));

  const idemKey = key ?? plan.body.trxid;
  const order = create(ctx, account, plan, idemKey, now);
  ctx.inFlight.set(idemKey, account.fp);
  try {
    if (faults.hits('lostResponseShare', account.fp, idemKey, attempt)) return { drop: true };
    if (faults.hits('error5xxAfterShare', account.fp, idemKey, attempt)) return serverError();
    if (faults.hits('slowShare', account.fp, idemKey, attempt)) {
      await ctx.delay(faults.settings.slowMs);
      ctx.settle();
      return { status: 200, body: publicOrder(state.order(order.orderId) ?? order, ctx.now()) };
    }
    return { status: 200, body: publicOrder(order, now) };
  } finally {
    ctx.inFlight.delete(idemKey);
  }
}

function create(ctx: SubmitContext, account: AccountRow, plan: Plan, idemKey: string, now: number): OrderRecord {
  const { product, quantity, body } = plan;
  const f = ctx.fulfilment();
  const keyOrCard = isKeyOrCard(product);
  const fate = keyOrCard
    ? { status: 'completed' as const, settleAt: null, settleTo: null, doneAt: now, refundOnCancel: true, error: null }
    : decideTopUp(f, body.trxid, plan.userId, now, ctx.realWorldFates());
  return ctx.state.createOrder({
    account: account.fp, idemKey, trxid: body.trxid, pid: product.id, game: product.slug,
    packName: product.serviceName, amountMicros: plan.amountMicros, quantity: keyOrCard ? quantity : null,
    userId: plan.userId, serverId: plan.serverId, moreId: plan.moreId, zoneId: plan.zoneId,
    codes: keyOrCard ? makeCodes(product.slug, f.seed, body.trxid, quantity) : null,
    // The real-world fates are on exactly while the real-world style is: the style the order's id keeps.
    refunded: false, createdAt: now, source: 'api', idStyle: ctx.realWorldFates() ? 'real-world' : 'spec', ...fate,
  }, isStockBased(product) ? quantity : 0);
}
