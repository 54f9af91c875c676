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
