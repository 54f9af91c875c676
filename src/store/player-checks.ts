/**
 * The player checks' tables (migration 16): the cache of answers that settled a player, every
 * check sent (for the money the reseller sees), and the players seen completed recently.
 * claim/player-checks.ts decides with them.
 */
import type { Db } from './db.js';
import { rowState } from './state-sql.js';

export interface CachedCheck {
  kind: string;
  player: string;
  outcome: 'found' | 'not-found';
  name: string | null;
  checkedAt: number;
  trxid: string;
}

export interface CheckCall {
  trxid: string;
  kind: string;
  player: string;
  account: string;
  batchId: string | null;
  outcome: string;
  said: string | null;
  at: number;
  priceUsd: number;
}

export class PlayerCheckStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** The answer kept for this player, if it is younger than `maxAgeMs`. */
  cached(kind: string, player: string, now: number, maxAgeMs: number): CachedCheck | undefined {
    const r = this.#db.prepare('SELECT * FROM player_checks WHERE kind = ? AND player = ? AND checked_at >= ?').get(kind, player, now - maxAgeMs) as
      | { kind: string; player: string; outcome: 'found' | 'not-found'; name: string | null; checked_at: number; trxid: string }
      | undefined;
    return r && { kind: r.kind, player: r.player, outcome: r.outcome, name: r.name, checkedAt: r.checked_at, trxid: r.trxid };
  }

  /** A check sent and its outcome; a settling outcome (found, not found) replaces the cached answer, in one transaction. */
  record(call: CheckCall, name: string | null): void {
    this.#db.transaction(() => {
      this.#db.prepare(`INSERT INTO player_check_calls (trxid, kind, player, account, batch_id, outcome, said, at, price_usd)
        VALUES (@trxid, @kind, @player, @account, @batchId, @outcome, @said, @at, @priceUsd)`).run(call);
      if (call.outcome === 'found' || call.outcome === 'not-found') {
        this.#db.prepare(`INSERT INTO player_checks (kind, player, outcome, name, checked_at, trxid) VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (kind, player) DO UPDATE SET outcome = excluded.outcome, name = excluded.name, checked_at = excluded.checked_at, trxid = excluded.trxid`)
          .run(call.kind, call.player, call.outcome, name, call.at, call.trxid);
      }
    })();
  }

  /**
   * The last check of this player sent since `since` (any outcome), with the name its answer
   * gave: what the order API answers a repeat within its short window by, without a new call.
   */
  lastCall(kind: string, player: string, since: number): (CheckCall & { name: string | null }) | undefined {
    const r = this.#db.prepare(`SELECT c.*, (SELECT name FROM player_checks p WHERE p.trxid = c.trxid) AS name FROM player_check_calls c
      WHERE c.kind = ? AND c.player = ? AND c.at >= ? ORDER BY c.at DESC, c.rowid DESC LIMIT 1`).get(kind, player, since) as
      | { trxid: string; kind: string; player: string; account: string; batch_id: string | null; outcome: string; said: string | null; at: number; price_usd: number; name: string | null }
      | undefined;
    return r && { trxid: r.trxid, kind: r.kind, player: r.player, account: r.account, batchId: r.batch_id, outcome: r.outcome, said: r.said, at: r.at, priceUsd: r.price_usd, name: r.name };
  }

  /** Checks sent for a batch (while it loaded): how many, and what they cost at the price the reseller set. */
  batchCalls(batchId: string): { calls: number; costUsd: number; notFound: number } {
    const r = this.#db.prepare(`SELECT count(*) AS n, coalesce(sum(price_usd), 0) AS usd, coalesce(sum(outcome = 'not-found'), 0) AS nf
      FROM player_check_calls WHERE batch_id = ?`).get(batchId) as { n: number; usd: number; nf: number };
    return { calls: r.n, costUsd: Math.round(r.usd * 1e6) / 1e6, notFound: r.nf };
  }

  /** Every check since `since`: how many and their cost (the console's money). */
  callsSince(since: number): { calls: number; costUsd: number } {
    const r = this.#db.prepare('SELECT count(*) AS n, coalesce(sum(price_usd), 0) AS usd FROM player_check_calls WHERE at >= ?').get(since) as { n: number; usd: number };
    return { calls: r.n, costUsd: Math.round(r.usd * 1e6) / 1e6 };
  }

  /**
   * The slugs and zone ids of the rows completed since `since` for this user id (the order API's
   * TOPUP_PLAYER_CHECK_SKIP_DAYS, per order): the caller keeps those of the same check and zone,
   * as completedSince's caller does. Read through the rows_completed_player index (migration 21).
   */
  completedFor(userId: string, since: number): { slug: string; zoneId: string | null }[] {
    return this.#db.prepare(`SELECT slug, json_extract(request_json, '$.zoneId') AS zoneId FROM rows
      WHERE state = ${rowState('completed')} AND json_extract(CASE WHEN json_valid(request_json) THEN request_json END, '$.userId') = ? AND updated_at >= ? AND slug IS NOT NULL`)
      .all(userId, since) as { slug: string; zoneId: string | null }[];
  }

  /**
   * (slug, userId, zoneId) of the rows completed since `since`: the players seen receiving a
   * top-up recently, whom TOPUP_PLAYER_CHECK_SKIP_DAYS spares a check.
   */
  completedSince(since: number): { slug: string; userId: string | null; zoneId: string | null }[] {
    return this.#db.prepare(`SELECT slug, json_extract(request_json, '$.userId') AS userId, json_extract(request_json, '$.zoneId') AS zoneId
      FROM rows WHERE state = ${rowState('completed')} AND updated_at >= ? AND slug IS NOT NULL AND request_json IS NOT NULL`).all(since) as {
      slug: string; userId: string | null; zoneId: string | null;
    }[];
  }
}
