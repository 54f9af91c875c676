/**
 * Who may use the order API: bearer tokens with scopes (orders/types.ts SCOPES: orders:write,
 * orders:read, codes:read, players:check).
 *
 * - TOPUP_ORDER_API_TOKEN(_FILE) holds every scope. It is compared in constant time (both sides
 *   hashed to 32 bytes first, so the comparison does not even leak its length).
 * - `topup token create` makes more, each with its own scopes and name, stored in api_tokens
 *   (migration 12) as the SHA-256 of the token only: a copy of the database does not let anyone
 *   call the API. A token is 32 random bytes from node:crypto (never the engine's entropy, which
 *   a simulator seeds), shown once. It is looked up by its hash (the unique index), which is
 *   constant-time enough: an attacker cannot steer a comparison against a hash they cannot invert.
 * - Revoking takes effect at the next request (no cache: `topup token revoke` runs in another
 *   process, and a revoked token must stop at once).
 * - last_used_at is written at most once a minute per token: at hundreds of orders a second a
 *   write per request would compete with the orders' own commits for the database.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../kernel/clock.js';
import { UsageError } from '../kernel/errors.js';
import type { Db } from '../store/db.js';
import { SCOPES, type Scope } from '../orders/types.js';

export const TOKEN_PREFIX = 'tut_';
/** The id the config token is known by (audit, logs). */
export const CONFIG_TOKEN_ID = 'config';
const TOUCH_EVERY_MS = 60_000;

export interface TokenIdentity {
  id: string;
  name: string;
  scopes: readonly Scope[];
}

export interface TokenInfo extends TokenIdentity {
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

interface TokenRow {
  id: string;
  name: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `orders:write,orders:read` → the scopes, or a UsageError naming the one not known. */
export function parseScopes(text: string): Scope[] {
  const out: Scope[] = [];
  for (const raw of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!(SCOPES as readonly string[]).includes(raw)) throw new UsageError(`unknown scope "${raw}": the scopes are ${SCOPES.join(', ')}`);
    if (!out.includes(raw as Scope)) out.push(raw as Scope);
  }
  if (out.length === 0) throw new UsageError(`give at least one scope (${SCOPES.join(', ')})`);
  return out;
}

export class TokenStore {
  readonly #db: Db;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #configHash: Buffer | null;
  /** When this process last wrote each token's last_used_at. */
  readonly #touched = new Map<string, number>();

  constructor(db: Db, clock: Pick<Clock, 'now'>, configToken: string | null) {
    this.#db = db;
    this.#clock = clock;
    this.#configHash = configToken ? sha256(configToken) : null;
  }

  /** A new token with these scopes: returned once, stored only as its hash. */
  create(name: string, scopes: readonly Scope[]): { token: string; info: TokenInfo } {
    const clean = name.trim();
    if (clean === '' || clean.length > 64 || /[\u0000-\u001f\u007f]/.test(clean)) throw new UsageError('the name must be 1 to 64 characters, without control characters');
    if (scopes.length === 0) throw new UsageError(`give at least one scope (${SCOPES.join(', ')})`);
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const id = `tok_${randomBytes(6).toString('hex')}`;
    const now = this.#clock.now();
    this.#db
      .prepare('INSERT INTO api_tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, clean, sha256(token).toString('hex'), scopes.join(','), now);
    return { token, info: { id, name: clean, scopes: [...scopes], createdAt: now, lastUsedAt: null, revokedAt: null } };
  }

  /** Every token made by `topup token create`, newest first (never the token: it is not stored). */
  list(): TokenInfo[] {
    const rows = this.#db.prepare('SELECT id, name, scopes, created_at, last_used_at, revoked_at FROM api_tokens ORDER BY created_at DESC, id').all() as TokenRow[];
    return rows.map((r) => ({ id: r.id, name: r.name, scopes: r.scopes.split(',') as Scope[], createdAt: r.created_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at }));
  }

  /** Revokes a token; false when there is no such token (or it was already revoked). */
  revoke(id: string): boolean {
    return this.#db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(this.#clock.now(), id).changes === 1;
  }

  exists(id: string): boolean {
    return this.#db.prepare('SELECT 1 FROM api_tokens WHERE id = ?').get(id) !== undefined;
  }

  /** Who a presented token is, or undefined (wrong, revoked, or no token configured at all). */
  verify(presented: string): TokenIdentity | undefined {
    if (presented === '' || presented.length > 512) return undefined;
    const hash = sha256(presented);
    if (this.#configHash !== null && timingSafeEqual(hash, this.#configHash)) return { id: CONFIG_TOKEN_ID, name: 'TOPUP_ORDER_API_TOKEN', scopes: SCOPES };
    const row = this.#db.prepare('SELECT id, name, scopes FROM api_tokens WHERE hash = ? AND revoked_at IS NULL').get(hash.toString('hex')) as Pick<TokenRow, 'id' | 'name' | 'scopes'> | undefined;
    if (!row) return undefined;
    this.#touch(row.id);
    return { id: row.id, name: row.name, scopes: row.scopes.split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)) };
  }

  #touch(id: string): void {
    const now = this.#clock.now();
    if (now - (this.#touched.get(id) ?? -Infinity) < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    try {
      this.#db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?').run(now, id);
    } catch {
      // A busy database must not refuse a request: the time of use is a convenience, not a record.
    }
  }
}
