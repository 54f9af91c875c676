/**
 * The player-name checks the real supplier offers beyond the seed's spec (docs/player-checks.md):
 * POST /pubgvvfy `{playerId, trxid}` and POST /mlvfy `{userId, zoneId, trxid}`.
 *
 * Who exists: every id but the unknown ones, and each has a name drawn from the seed (the same id
 * always has the same name, in every run). Unknown: the test magic of orders (an id containing
 * "fail", or 99999: fulfilment.ts isMagicFailure, so a check and an order agree), the ids an admin
 * listed (`POST /__sandbox/players {unknown: [...]}`), and a seeded share (`unknownShare`, 0 by
 * default so tests stay exact). An ML id is the user id and its zone: a wrong zone is unknown too
 * (`unknown` entries `user(zone)`).
 *
 * A check is charged `checkPriceUsd` (0 by default) when the sandbox is told to: the charge is a
 * ledger entry of kind `check` with the check's trxid, never an order. A balance that cannot pay
 * refuses the check (400 INSUFFICIENT BALANCE). A check whose trxid was seen before is answered
 * again without a second charge (the supplier's clients send a fresh trxid per check).
 *
 * A script (`script`, for tests of the odd days): each check takes the next entry (of its player,
 * when entries name one), after its charge:
 * `{drop: true}` charges it and cuts the connection without an answer (a lost answer), `{holdMs}`
 * charges it and answers only after that time, `{status, body, charged}` answers that exact status
 * and body (a string body is sent as HTML), charged unless `charged: false` (a 429, a refusal).
 *
 * Answer styles: `spec` answers `{success: true, playerName}` and a not-found as 404
 * `{success: false, code: PLAYER_NOT_FOUND, error: "Player not found"}`. `real-world` varies per
 * call, as public clients of the supplier meet it: the name under `name`, or in a `data` envelope;
 * a not-found as 200 `{success: false, error: "Player not found"}`, 400 or 422 with the code, or a
 * 404 with a body; and (answers.ts) the proxy's HTML 502 page like every route.
 */
import { uniform, isMagicFailure } from './fulfilment.js';
import type { SandboxState, AccountRow } from './state.js';
import { toMicros } from './types.js';

export interface PlayerSettings {
  /** Share of ids (0..1) that do not exist, drawn from the seed. */
  unknownShare: number;
  /** Ids that do not exist (`user` for PUBG, `user(zone)` or `user` for ML). */
  unknown: string[];
  /** USD charged per check; 0: checks are free. */
  checkPriceUsd: number;
  /** The next checks' answers, one entry each, in order (see above); empty: answered by the directory. */
  script: CheckScript[];
  seed: number;
}

/** One scripted check answer (tests): a lost answer, a late one, or an exact status and body. */
export type CheckScript = (
  | { drop: true }
  | { holdMs: number }
  | { status: number; body: Record<string, unknown> | string; charged?: boolean; headers?: Record<string, string> }
) & { /** Only for this player (`user`, or `user(zone)` for ML); absent: the next check of any player. */ player?: string };

/** What a check comes to: an answer, an answer held back first, or a connection cut (charged in every case but `charged: false`). */
export type CheckOut = { status: number; body: Record<string, unknown> | string; holdMs?: number; headers?: Record<string, string> } | { drop: true };

export const DEFAULT_PLAYERS: Omit<PlayerSettings, 'seed'> = { unknownShare: 0, unknown: [], checkPriceUsd: 0, script: [] };

function scriptEntry(x: unknown): x is CheckScript {
  if (typeof x !== 'object' || x === null) return false;
  const e = x as Record<string, unknown>;
  if (e.player !== undefined && typeof e.player !== 'string') return false;
  if (e.drop === true) return true;
  if (typeof e.holdMs === 'number' && e.holdMs >= 0) return true;
  return typeof e.status === 'number' && Number.isInteger(e.status) && e.status >= 100 && e.status <= 599 &&
    (typeof e.body === 'string' || (typeof e.body === 'object' && e.body !== null)) && (e.charged === undefined || typeof e.charged === 'boolean');
}

const FIRST = ['Shadow', 'Crimson', 'Silent', 'Lucky', 'Iron', 'Neon', 'Frost', 'Storm', 'Golden', 'Wild', 'Rapid', 'Lone'];
const SECOND = ['Wolf', 'Falcon', 'Tiger', 'Ghost', 'Ranger', 'Viper', 'Knight', 'Phoenix', 'Hunter', 'Sniper', 'Comet', 'Fox'];

const pickOf = <T>(list: readonly T[], r: number): T => list[Math.min(list.length - 1, Math.floor(r * list.length))] as T;

export class PlayerDirectory {
  #s: PlayerSettings;
  /** trxid → the answer given, so a resent check is answered alike and charged once. */
  readonly #answered = new Map<string, { status: number; body: Record<string, unknown> }>();

  constructor(seed: number) {
    this.#s = { ...DEFAULT_PLAYERS, seed };
  }

  get settings(): PlayerSettings { return { ...this.#s, unknown: [...this.#s.unknown], script: [...this.#s.script] }; }

  update(patch: Partial<PlayerSettings>): PlayerSettings {
    const known = new Set(['unknownShare', 'unknown', 'checkPriceUsd', 'script', 'seed']);
    const bad = Object.keys(patch ?? {}).filter((k) => !known.has(k));
    if (bad.length > 0) throw new TypeError(`unknown players setting ${bad.join(', ')} (known: ${[...known].join(', ')})`);
    const n = { ...this.#s, ...patch };
    if (!(typeof n.unknownShare === 'number' && n.unknownShare >= 0 && n.unknownShare <= 1)) throw new TypeError('unknownShare must be a number in 0..1');
    if (!(Array.isArray(n.unknown) && n.unknown.every((x) => typeof x === 'string'))) throw new TypeError('unknown must be an array of strings');
    if (!(typeof n.checkPriceUsd === 'number' && Number.isFinite(n.checkPriceUsd) && n.checkPriceUsd >= 0)) throw new TypeError('checkPriceUsd must be a number >= 0');
    if (!(Array.isArray(n.script) && n.script.every(scriptEntry))) throw new TypeError('script must be an array of {drop: true}, {holdMs}, or {status, body, charged?}');
    if (!Number.isFinite(n.seed)) throw new TypeError('seed must be a number');
    this.#s = { ...n, unknown: [...n.unknown], script: [...n.script] };
    return this.settings;
  }

  /** The player's name, or undefined when the id does not exist. */
  lookup(kind: 'pubg' | 'ml', userId: string, zoneId: string | null): string | undefined {
    const id = kind === 'ml' ? `${userId}(${zoneId ?? ''})` : userId;
    if (isMagicFailure(userId) || this.#s.unknown.includes(id) || this.#s.unknown.includes(userId)) return undefined;
    if (uniform(this.#s.seed, 'player-unknown', kind, id) < this.#s.unknownShare) return undefined;
    const r = (k: string) => uniform(this.#s.seed, 'player-name', kind, id, k);
    return `${pickOf(FIRST, r('a'))}${pickOf(SECOND, r('b'))}${Math.floor(r('n') * 100)}`;
  }

  /**
   * One check: the answer in the spec's shape, or the real-world variants. `body` is the parsed
   * request; `call` numbers the public call (per-call draws of the variant).
   */
  answer(state: SandboxState, who: AccountRow, route: 'POST /pubgvvfy' | 'POST /mlvfy', body: unknown, now: number, realWorld: boolean, call: number): CheckOut {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : undefined);
    const kind = route === 'POST /pubgvvfy' ? 'pubg' : 'ml';
    const userId = text(kind === 'pubg' ? b.playerId : b.userId);
    const zoneId = kind === 'ml' ? text(b.zoneId) : null;
    const trxid = text(b.trxid);
    if (userId === undefined || trxid === undefined || (kind === 'ml' && zoneId === undefined)) {
      const need = kind === 'pubg' ? 'playerId and trxid' : 'userId, zoneId and trxid';
      return { status: 400, body: { success: false, code: 'VALIDATION_ERROR', error: `${need} are required` } };
    }
    const key = `${who.fp}\u0000${trxid}`;
    const earlier = this.#answered.get(key);
    if (earlier) return earlier;
    const at = this.#s.script.findIndex((e) => e.player === undefined || e.player === userId || e.player === `${userId}(${zoneId ?? ''})`);
    const scripted = at < 0 ? undefined : this.#s.script.splice(at, 1)[0];
    if (scripted !== undefined && 'status' in scripted) {
      if (scripted.charged !== false && this.#s.checkPriceUsd > 0) state.chargeCheck(who.fp, toMicros(this.#s.checkPriceUsd), trxid, now);
      return { status: scripted.status, body: scripted.body, ...(scripted.headers ? { headers: scripted.headers } : {}) };
    }
    if (this.#s.checkPriceUsd > 0 && !state.chargeCheck(who.fp, toMicros(this.#s.checkPriceUsd), trxid, now)) {
      return { status: 400, body: { success: false, code: 'INSUFFICIENT_BALANCE', error: 'INSUFFICIENT BALANCE' } };
    }
    const name = this.lookup(kind, userId, zoneId ?? null);
    const out = realWorld ? this.#realWorld(name, call) : name === undefined
      ? { status: 404, body: { success: false, code: 'PLAYER_NOT_FOUND', error: 'Player not found' } }
      : { status: 200, body: { success: true, playerName: name, trxid } };
    this.#answered.set(key, out);
    if (scripted !== undefined && 'drop' in scripted) return { drop: true };
    if (scripted !== undefined && 'holdMs' in scripted) return { ...out, holdMs: scripted.holdMs };
    return out;
  }

  #realWorld(name: string | undefined, call: number): { status: number; body: Record<string, unknown> } {
    const r = uniform(this.#s.seed, 'player-answer', call);
    if (name !== undefined) {
      if (r < 0.4) return { status: 200, body: { success: true, playerName: name } };
      if (r < 0.7) return { status: 200, body: { success: 'true', name } };
      return { status: 200, body: { status: true, message: 'OK', data: { name, playerName: name } } };
    }
    if (r < 0.25) return { status: 200, body: { success: false, error: 'Player not found' } };
    if (r < 0.5) return { status: 400, body: { success: false, code: 'PLAYER_NOT_FOUND', error: 'Player not found' } };
    if (r < 0.75) return { status: 422, body: { success: false, code: 'PLAYER_NOT_FOUND', error: 'Player not found' } };
    return { status: 404, body: { success: false, error: 'Player not found' } };
  }
}
