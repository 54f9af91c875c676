/**
 * Sandbox-only controls (never part of the public API): read the ledger and call log, inject
 * faults, move money and stock. The same operations serve `RunningSandbox.admin` in-process and
 * the `/__sandbox/*` HTTP routes. Accounts are named by key fingerprint, never by key.
 */
import type { Answers, AnswersPatch, AnswersView } from './answers.js';
import { API_KEY_FORMAT } from './auth.js';
import type { Faults } from './faults.js';
import { validateFulfilment } from './fulfilment.js';
import type { LiveCatalog } from './live-catalog.js';
import { publicIdOf } from './order-ids.js';
import { publicOrder } from './orders.js';
import type { RateLimiter, RateStats } from './rate-limit.js';
import type { PlayerDirectory, PlayerSettings } from './players.js';
import { placeManualOrders } from './real-world.js';
import type { AccountRow, SandboxState } from './state.js';
import { fingerprint } from './state.js';
import type {
  AccountState, CallLogEntry, CatalogProduct, Clock, FaultSettings, FulfilmentSettings, LedgerEntry, RateWindow,
} from './types.js';
import { ACCOUNT_STATES, toMicros, toUsd } from './types.js';

/**
 * An order in the admin ledger: the spec-shaped order (the truth, in every answer style) plus
 * `publicId`, the id the real-world style shows (digits, may exceed 2^53; an order created in the
 * spec style keeps its `ORD…`), and `source`
 * ('manual': placed outside the API, no trxid; see real-world.ts).
 */
export interface AdminOrder extends Record<string, unknown> {
  account: string; idemKey: string; quantity: number | null; zoneId: string | null; settleAt: string | null;
  publicId: string; source: 'api' | 'manual';
}

export interface AdminLedger {
  orders: AdminOrder[];
  entries: LedgerEntry[];
  /** fingerprint → balance in USD */
  balances: Record<string, number>;
  rateLimited: number;
  calls: number;
}

export interface AdminAccountView { account: string; balanceUsd: number; state: AccountState; ipAllowlist: string[] | null }

export interface SandboxAdmin {
  ledger(): AdminLedger;
  calls(): CallLogEntry[];
  rateStats(): RateStats;
  setFaults(patch: Partial<FaultSettings>): FaultSettings;
  setFulfilment(patch: Partial<FulfilmentSettings>): FulfilmentSettings;
  /** One account (the first when no key is given): a single read, cheap enough for every page. */
  account(req?: { apiKey?: string }): AdminAccountView;
  topup(req: { amountUsd: number; apiKey?: string }): AdminAccountView;
  setBalance(req: { balanceUsd: number; apiKey?: string }): AdminAccountView;
  /** Changes an account; an unknown `apiKey` creates the account (balance 0). */
  setAccount(req: { apiKey?: string; state?: AccountState; ipAllowlist?: string[] | null }): AdminAccountView;
  setProduct(req: { id: string; price?: number; status?: string; stock?: number }): CatalogProduct;
  setRateLimits(limits: RateWindow[]): RateWindow[];
  resetCalls(): void;
  answers(): AnswersView;
  /** Switches the answer style and/or its settings; switching to real-world places the manual orders. */
  setAnswers(patch: AnswersPatch): AnswersView;
  /** The player checks' settings (players.ts): unknown ids, the share drawn unknown, the price per check. */
  players(): PlayerSettings;
  setPlayers(patch: Partial<PlayerSettings>): PlayerSettings;
}

export class AdminError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

export interface AdminDeps {
  state: SandboxState;
  catalog: LiveCatalog;
  faults: Faults;
  limiter: RateLimiter;
  fulfilment: { current: FulfilmentSettings };
  answers: Answers;
  players: PlayerDirectory;
  now: Clock;
  settle: () => void;
}

const view = (a: AccountRow): AdminAccountView =>
  ({ account: a.fp, balanceUsd: toUsd(a.balanceMicros), state: a.state, ipAllowlist: a.ipAllowlist });

function amount(n: unknown, name: string): number {
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new AdminError(400, `${name} must be a number`);
  return n;
}

export function createAdmin(d: AdminDeps): SandboxAdmin {
  const account = (apiKey?: string): AccountRow => {
    const a = apiKey === undefined ? d.state.accounts()[0] : d.state.accountByKey(apiKey);
    if (!a) throw new AdminError(404, 'no such account');
    return a;
  };
  return {
    ledger() {
      d.settle();
      const now = d.now();
      return {
        orders: d.state.allOrders().map((o) => ({
          ...publicOrder(o, now), account: o.account, idemKey: o.idemKey, quantity: o.quantity, zoneId: o.zoneId,
          settleAt: o.settleAt === null ? null : new Date(o.settleAt).toISOString(), publicId: o.idStyle === 'spec' ? o.orderId : publicIdOf(o.orderId), source: o.source,
        })),
        entries: d.state.ledger(),
        balances: Object.fromEntries(d.state.accounts().map((a) => [a.fp, toUsd(a.balanceMicros)])),
        rateLimited: d.limiter.rateLimited,
        calls: d.limiter.calls.length,
      };
    },
    calls: () => d.limiter.calls,
    rateStats: () => d.limiter.stats(),
    setFaults: (patch) => wrap(() => d.faults.merge(patch ?? {})),
    setFulfilment(patch) {
      d.fulfilment.current = wrap(() => validateFulfilment({ ...d.fulfilment.current, ...(patch ?? {}) }));
      return { ...d.fulfilment.current };
    },
    account: (req) => view(account(req?.apiKey)),
    topup(req) {
      const a = account(req?.apiKey);
      d.state.topup(a.fp, toMicros(amount(req.amountUsd, 'amountUsd')), d.now());
      return view(account(req.apiKey));
    },
    setBalance(req) {
      const a = account(req?.apiKey);
      const target = toMicros(amount(req.balanceUsd, 'balanceUsd'));
      // Recorded as a 'topup' of the difference so the ledger still sums to the balance.
      if (target !== a.balanceMicros) d.state.topup(a.fp, target - a.balanceMicros, d.now());
      return view(account(req.apiKey));
    },
    setAccount(req) {
      if (req?.state !== undefined && !ACCOUNT_STATES.includes(req.state)) throw new AdminError(400, `state must be one of ${ACCOUNT_STATES.join(', ')}`);
      if (req?.ipAllowlist !== undefined && req.ipAllowlist !== null
        && !(Array.isArray(req.ipAllowlist) && req.ipAllowlist.every((ip) => typeof ip === 'string'))) {
        throw new AdminError(400, 'ipAllowlist must be null or an array of strings');
      }
      let fp: string;
      if (req?.apiKey !== undefined && !d.state.accountByKey(req.apiKey)) {
        if (!API_KEY_FORMAT.test(req.apiKey)) throw new AdminError(400, 'apiKey does not match the sandbox key format');
        fp = d.state.ensureAccount(req.apiKey, { balanceMicros: 0, state: 'active', ipAllowlist: null });
      } else {
        fp = account(req?.apiKey).fp;
      }
      d.state.updateAccount(fp, { state: req.state, ipAllowlist: req.ipAllowlist });
      if (d.answers.realWorld) placeManualOrders(d.state, d.catalog, d.now());
      return view(d.state.account(fp) as AccountRow);
    },
    setProduct(req) {
      const id = String(req?.id ?? '');
      if (!d.catalog.product(id)) throw new AdminError(404, `no product ${id}`);
      if (req.price !== undefined && !(amount(req.price, 'price') > 0)) throw new AdminError(400, 'price must be > 0');
      if (req.status !== undefined && typeof req.status !== 'string') throw new AdminError(400, 'status must be a string');
      if (req.stock !== undefined && !(Number.isInteger(req.stock) && req.stock >= 0)) throw new AdminError(400, 'stock must be an integer >= 0');
      if (req.price !== undefined || req.status !== undefined) d.state.setOverride(id, { price: req.price, status: req.status });
      if (req.stock !== undefined) d.state.setStock(id, req.stock);
      return d.catalog.product(id) as CatalogProduct;
    },
    setRateLimits(limits) {
      wrap(() => { d.limiter.limits = limits; });
      return d.limiter.limits;
    },
    resetCalls: () => d.limiter.reset(),
    answers: () => d.answers.view(),
    setAnswers(patch) {
      const v = wrap(() => d.answers.update(patch ?? {}));
      if (d.answers.realWorld) placeManualOrders(d.state, d.catalog, d.now());
      return v;
    },
    players: () => d.players.settings,
    setPlayers: (patch) => wrap(() => d.players.update(patch ?? {})),
  };
}

/** Settings validators throw TypeError; the admin route answers those with 400. */
function wrap<T>(fn: () => T): T {
  try { return fn(); } catch (e) {
    if (e instanceof TypeError) throw new AdminError(400, e.message);
    throw e;
  }
}

/** Routes `/__sandbox/<op>` to the admin; the caller has checked the admin token. */
export function adminRoute(admin: SandboxAdmin, method: string, op: string, body: unknown): { status: number; body: unknown } {
  const b = (body ?? {}) as never;
  const routes: Record<string, () => unknown> = {
    'GET ledger': () => admin.ledger(),
    'GET calls': () => ({ calls: admin.calls() }),
    'GET rate-stats': () => admin.rateStats(),
    'POST faults': () => ({ faults: admin.setFaults(b) }),
    'POST fulfilment': () => ({ fulfilment: admin.setFulfilment(b) }),
    'POST topup': () => admin.topup(b),
    'POST balance': () => admin.setBalance(b),
    'POST account': () => admin.setAccount(b),
    'POST product': () => ({ product: admin.setProduct(b) }),
    'POST rate-limits': () => ({ rateLimits: admin.setRateLimits(b) }),
    'POST reset-calls': () => { admin.resetCalls(); return {}; },
    'GET answers': () => ({ answers: admin.answers() }),
    'POST answers': () => ({ answers: admin.setAnswers(b) }),
    'GET players': () => ({ players: admin.players() }),
    'POST players': () => ({ players: admin.setPlayers(b) }),
  };
  const fn = routes[`${method} ${op}`];
  if (!fn) return { status: 404, body: { success: false, error: 'NO SUCH ADMIN ROUTE' } };
  try {
    return { status: 200, body: { success: true, ...(fn() as object) } };
  } catch (e) {
    if (e instanceof AdminError) return { status: e.status, body: { success: false, error: e.message } };
    throw e;
  }
}

export { fingerprint };
