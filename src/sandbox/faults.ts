/**
 * Injected faults. Which submits a share hits is drawn from (seed, account, idempotency key,
 * attempt number), so a scenario replays identically while a retry of the same trxid gets a
 * fresh draw, as it would against a flaky service.
 */
import { uniform } from './fulfilment.js';
import type { FaultSettings, MaintenanceCode } from './types.js';
import { DEFAULT_FAULTS } from './types.js';

export type ShareKind = 'lostResponseShare' | 'error5xxBeforeShare' | 'error5xxAfterShare' | 'slowShare';

export class Faults {
  settings: FaultSettings;
  #attempts = new Map<string, number>();

  constructor(initial: Partial<FaultSettings> = {}) {
    this.settings = validateFaults({ ...DEFAULT_FAULTS, ...initial });
  }

  merge(patch: Partial<FaultSettings>): FaultSettings {
    this.settings = validateFaults({ ...this.settings, ...patch });
    return { ...this.settings };
  }

  /** Counts submits per (account, key); the count is part of every draw for that submit. */
  nextAttempt(account: string, key: string): number {
    const id = `${account}\u0000${key}`;
    const n = (this.#attempts.get(id) ?? 0) + 1;
    this.#attempts.set(id, n);
    return n;
  }

  hits(kind: ShareKind, account: string, key: string, attempt: number): boolean {
    const share = this.settings[kind];
    return share > 0 && uniform(this.settings.seed, kind, account, key, attempt) < share;
  }

  /** The maintenance code in force at `now`; an expired window clears itself. */
  maintenance(now: number): MaintenanceCode | null {
    const m = this.settings.maintenance;
    if (!m) return null;
    if (m.untilMs !== undefined && now >= m.untilMs) {
      this.settings = { ...this.settings, maintenance: null };
      return null;
    }
    return m.code;
  }

  /** Takes one forced 429 if any remain. */
  takeForcedRateLimit(): FaultSettings['forceRateLimit'] {
    const f = this.settings.forceRateLimit;
    if (!f || f.remaining <= 0) return null;
    this.settings = { ...this.settings, forceRateLimit: f.remaining > 1 ? { ...f, remaining: f.remaining - 1 } : null };
    return f;
  }
}

function validateFaults(f: FaultSettings): FaultSettings {
  for (const k of ['lostResponseShare', 'error5xxBeforeShare', 'error5xxAfterShare', 'slowShare'] as const) {
    if (!(typeof f[k] === 'number' && f[k] >= 0 && f[k] <= 1)) throw new TypeError(`${k} must be a number in 0..1`);
  }
  if (!(Number.isFinite(f.slowMs) && f.slowMs >= 0)) throw new TypeError('slowMs must be >= 0');
  const m = f.maintenance;
  if (m !== null && !(m && ['MAINTENANCE', 'API_ORDER_DISABLED', 'RATE_LIMIT_UNAVAILABLE'].includes(m.code))) {
    throw new TypeError('maintenance must be null or { code: MAINTENANCE | API_ORDER_DISABLED | RATE_LIMIT_UNAVAILABLE, untilMs? }');
  }
  // A forced 429 without a format sends plain seconds.
  const r = f.forceRateLimit && { ...f.forceRateLimit, format: f.forceRateLimit.format ?? 'seconds' };
  if (r !== null && !(r && Number.isInteger(r.remaining) && r.remaining >= 0 && Number.isFinite(r.retryAfterSec)
    && r.retryAfterSec >= 0 && (r.format === 'seconds' || r.format === 'http-date'))) {
    throw new TypeError("forceRateLimit must be null or { remaining, retryAfterSec, format: 'seconds' | 'http-date' }");
  }
  if (f.historyKeepMs !== null && !(Number.isFinite(f.historyKeepMs) && f.historyKeepMs >= 0)) throw new TypeError('historyKeepMs must be null or >= 0');
  if (f.historyPageMax !== null && !(Number.isInteger(f.historyPageMax) && f.historyPageMax >= 1)) throw new TypeError('historyPageMax must be null or an integer >= 1');
  return { ...f, forceRateLimit: r, blackhole: Boolean(f.blackhole), validateBeforeIdempotency: Boolean(f.validateBeforeIdempotency) };
}
